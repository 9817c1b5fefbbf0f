"""Real launcher logs, kernel Xid lines and Slurm outputs from public threads, each with its
source and a hand-made answer key in the schema of ../shared/corpus/ops (see its README)."""

LAUNCH = [
    {
        "id": "own-launch-001",
        "source_url": "https://github.com/nextflow-io/nextflow/issues/5932",
        "source_kind": "github_issue",
        "text": "I am having difficulty executing a calculation but it gives me the error slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed. srun: error: sdumont6156: task 0: Out Of Memory, how do I remove this error, here is my executor file:",
        "answer": {
            "launcher": "srun",
            "failing_ranks": [0],
            "host": "sdumont6156",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "Slurm's lines quoted inside a sentence of prose, on one line",
        },
    },
    {
        "id": "own-launch-002",
        "source_url": "https://github.com/ArjunaCluster/ArjunaUsers/issues/52",
        "source_kind": "github_issue",
        "text": 'StdErr: "/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3 main.py --prop hform --epochs 400 --lr_milestones 50 100 200 --gamma 0.25 --normalizing_const_AO 10000.0 --lr_generator 0.001 --lr_conv 0.001\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler."',
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the shell's 'Killed' line of the batch script, then slurmstepd's cgroup oom-kill (old wording)",
        },
    },
    {
        "id": "own-launch-003",
        "source_url": "https://github.com/hafs-community/HAFS/issues/101",
        "source_kind": "github_issue",
        "text": "slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\nsrun: error: Orion-01-01: task 4: Out Of Memory\nsrun: Terminating job step 3495064.0\nslurmstepd: error: *** STEP 3495064.0 ON orion-01-01 CANCELLED AT 2021-10-27T19:35:36 ***",
        "answer": {
            "launcher": "srun",
            "failing_ranks": [4],
            "host": "Orion-01-01",
            "first_failure_time": "2021-10-27T19:35:36",
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the only stamp is the step's cancellation, which bounds the failure",
        },
    },
    {
        "id": "own-launch-004",
        "source_url": "https://github.com/hafs-community/HAFS/issues/101",
        "source_kind": "github_issue",
        "text": "srun: error: Orion-18-69: task 289: Bus error\nsrun: Terminating job step 3495450.0\nslurmstepd: error: *** STEP 3495450.0 ON orion-01-04 CANCELLED AT 2021-10-27T20:22:22 ***",
        "answer": {
            "launcher": "srun",
            "failing_ranks": [289],
            "host": "Orion-18-69",
            "first_failure_time": "2021-10-27T20:22:22",
            "is_oom": False,
            "note": "SIGBUS on one task of a 300+ task step; the step was then cancelled on another node",
        },
    },
    {
        "id": "own-launch-005",
        "source_url": "https://github.com/deepspeedai/DeepSpeed/issues/3869",
        "source_kind": "github_issue",
        "text": "> torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 978.00 MiB (GPU 0; 4.00 GiB total capacity; 1.68 GiB already allocated; 0 bytes free; 2.72 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n> [2023-07-04 17:31:27,755] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 953850\n> [2023-07-04 17:31:27,755] [ERROR] [launch.py:321:sigkill_handler] ['/home/pc/miniconda3/envs/Transformers/bin/python3.11', '-u', 'bloom-inference-scripts/bloom-ds-zero-inference.py', '--local_rank=0', '--name', 'bigscience/mt0-xl', '--batch_size', '8', '--cpu_offload', '--benchmark'] exits with return code = 1",
        "answer": {
            "launcher": "deepspeed",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": "2023-07-04 17:31:27,755",
            "is_oom": True,
            "note": "issue-body quote markers on every line; the OOM carries no rank, the launcher names local rank 0",
        },
    },
]

LAUNCH += [
    {
        "id": "own-launch-006",
        "source_url": "https://github.com/pytorch/torchtitan/issues/620",
        "source_kind": "github_issue",
        "text": "============================================================\ntrain.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2024-10-16_11:13:21\n  host      : trx50-TRX50-AERO-D\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 238568)\n  error_file: /tmp/torchelastic_ln6u9u9e/none__669dvmg/attempt_0/1/error.json\n  traceback : Traceback (most recent call last):",
        "answer": {
            "launcher": "torchrun (torchtitan)",
            "failing_ranks": [1],
            "host": "trx50-TRX50-AERO-D",
            "first_failure_time": "2024-10-16_11:13:21",
            "note": "the thread says OOM, but this excerpt stops at the traceback's first line: is_oom is not in the text",
        },
    },
    {
        "id": "own-launch-007",
        "source_url": "https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/771",
        "source_kind": "github_issue",
        "text": "Training ...\nSetting rerun_state_machine.current_iteration to 0...\n\n[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999605:3004403 [0] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n\n[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:3000032:3004399 [4] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n\n[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999784:3004405 [3] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'\n\n[2025-09-24 16:15:28] cw-dfw-h100-001-132-026:2999535:3004401 [7] include/alloc.h:228 NCCL WARN Cuda failure 2 'out of memory'",
        "answer": {
            "launcher": "Megatron-Bridge (NeMo)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": "2025-09-24 16:15:28",
            "is_oom": True,
            "note": "NCCL's own allocation failures on four GPUs of one node at the same second; NCCL names the GPU ([0], [4]), not the rank, and the host only inside its host:pid:tid tag",
        },
    },
]

LAUNCH += [
    {
        "id": "own-launch-008",
        "source_url": "https://github.com/lzhxmu/CPPO/issues/6",
        "source_kind": "github_issue",
        "text": "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\nsrc/open_r1/grpo_gsm.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2025-05-21_15:43:03\n  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker\n  rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 14750)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 14750\n============================================================",
        "answer": {
            "launcher": "accelerate (torchrun elastic agent)",
            "failing_ranks": [0],
            "host": "mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker",
            "first_failure_time": "2025-05-21_15:43:03",
            "is_oom": False,
            "note": "SIGKILL with no traceback (the kernel's OOM killer as a rule); no CUDA OOM message in the text",
        },
    },
    {
        "id": "own-launch-009",
        "source_url": "https://github.com/hiyouga/LlamaFactory/issues/7396",
        "source_kind": "github_issue",
        "text": "[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n[80747] [rank4]:[E321 02:07:08.414640780 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600067 milliseconds before timing out.\n[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.\n[80749] [rank3]:[E321 02:07:08.465224069 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.",
        "answer": {
            "launcher": "torchrun (LLaMA-Factory)",
            "kind": "nccl_watchdog_timeout",
            "timed_out_ranks": [0, 4],
            "failing_ranks": None,
            "host": None,
            "first_failure_time": "E321 02:07:08",
            "is_oom": False,
            "note": "excerpt (first four lines); each line behind a '[NNNNN] ' line counter; c10's glog stamp leaves the month unpadded (E321 = March 21)",
        },
    },
    {
        "id": "own-launch-010",
        "source_url": "https://github.com/mila-iqia/milabench/pull/269",
        "source_kind": "github_pull_request",
        "text": "dinov2-giant-nodes.cn-d004 [stderr] [rank14]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] [Rank 14] Watchdog caught collective operation timeout: \nWorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 milliseconds before timing out.\ndinov2-giant-nodes.cn-d004 [stderr] [rank12]:[E909 09:55:29.308889145 ProcessGroupNCCL.cpp:607] [Rank 12] Watchdog caught collective operation timeout: \nWorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600036 milliseconds before timing out.",
        "answer": {
            "launcher": "milabench (torchrun under a run-name prefix)",
            "kind": "nccl_watchdog_timeout",
            "timed_out_ranks": [14, 12],
            "failing_ranks": None,
            "host": None,
            "first_failure_time": "E909 09:55:29",
            "is_oom": False,
            "note": "excerpt; every line behind 'run.node [stderr] ', the watchdog sentence hard-wrapped onto a second line",
        },
    },
]

LAUNCH += [
    {
        "id": "own-launch-011",
        "source_url": "https://github.com/Vision-CAIR/MiniGPT-4/issues/237",
        "source_kind": "github_issue",
        "text": "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\ntrain.py FAILED\n------------------------------------------------------------\nFailures:\n[1]:\n  time      : 2023-05-19_16:39:58\n  host      : n136-117-136.byted.org\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 78971)\n  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2023-05-19_16:39:58\n  host      : n136-117-136.byted.org\n  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 78970)\n  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n============================================================",
        "answer": {
            "launcher": "torchrun",
            "failing_ranks": [1, 0],
            "host": "n136-117-136.byted.org",
            "first_failure_time": "2023-05-19_16:39:58",
            "is_oom": False,
            "note": "two failures with the same stamp and exit code 1; 'Root Cause' is only the lowest entry",
        },
    },
    {
        "id": "own-launch-012",
        "source_url": "https://github.com/ZhehengJiangLancaster/AMVUR/issues/2",
        "source_kind": "github_issue",
        "text": "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\nexperiments/supervised HO3D V2.py FAILED\nFailures:\n<NO OTHER FAILURES>\nRoot Cause (first observed failure) :\n[0]:\ntime\nhost\n2023-09-14 01:45:50\nding-X10DRG\nrank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>\ntraceback : signal 9 (SIGKILL) received by PID 36071",
        "answer": {
            "launcher": "torch.distributed.launch",
            "failing_ranks": [2],
            "host": "ding-X10DRG",
            "first_failure_time": "2023-09-14 01:45:50",
            "is_oom": False,
            "note": "the summary retyped (or copied from a rendered view): field names on their own lines, their values after them, the rank line glued to exitcode and error file; SIGKILL with memory growing per the thread",
        },
    },
    {
        "id": "own-launch-013",
        "source_url": "https://github.com/hpcaitech/ColossalAI/issues/3172",
        "source_kind": "github_issue",
        "text": "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2410413 closing signal SIGTERM\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 2410412) of binary: /data/zjt/anaconda3/envs/cai/bin/python",
        "answer": {
            "launcher": "torchrun",
            "failing_ranks": None,
            "local_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "exitcode": -9,
            "signal": "SIGKILL",
            "is_oom": None,
            "note": "excerpt: the last two lines of the log (the progress lines above report 44 GB of CPU memory); the agent SIGTERMs the sibling after local rank 0 was SIGKILLed",
        },
    },
    {
        "id": "own-launch-014",
        "source_url": "https://github.com/jdblischak/smk-simple-slurm/issues/29",
        "source_kind": "github_issue",
        "text": "slurmstepd: error: Detected 1 oom_kill event in StepId=65138579.batch. Some of the step tasks have been OOM Killed.",
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the new wording on the batch step; sacct shows OUT_OF_MEMORY with exit code 0",
        },
    },
]

LAUNCH += [
    {
        "id": "own-launch-015",
        "source_url": "https://github.com/desihub/desispec/issues/2744",
        "source_kind": "github_issue",
        "text": "[2026-04-29T23:36:37.809] error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 DUE TO TASK FAILURE ***\nsrun: error: nid002888: tasks 0-57,59-63: Terminated\nsrun: Force Terminated StepId=52222788.0\nFAILED: done at Wed Apr 29 04:36:42 PM PDT 2026",
        "answer": {
            "launcher": "srun",
            "failing_ranks": [58],
            "host": "nid002888",
            "first_failure_time": "2026-04-29T23:36:37",
            "is_oom": False,
            "note": "srun lists the 63 tasks it terminated after the step was cancelled DUE TO TASK FAILURE: the one left out, 58, is the task that failed; the only stamp is the cancellation, which bounds the failure (own-launch-003 convention: the CANCELLED AT value)",
        },
    }
]

XID = [
    {
        "id": "own-xid-001",
        "source_url": "https://github.com/NVIDIA/NVSentinel/issues/155",
        "source_kind": "github_issue",
        "text": "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this system has\n               NVRM: fallen off the bus and is not responding to commands.\n[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n[ 1843.439669] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025",
        "answer": {
            "xids": [],
            "equivalent_xid": 79,
            "pci": "0000:b3:00.0",
            "pid": None,
            "category": "hardware",
            "driver": "570.158.01",
            "note": "570-era multi-line 'fallen off the bus' with no Xid number: Xid 79's meaning",
        },
    },
    {
        "id": "own-xid-002",
        "source_url": "https://github.com/NVIDIA/NVSentinel/issues/155",
        "source_kind": "github_issue",
        "text": "note: this should duplicate `NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus`",
        "answer": {
            "xids": [79],
            "pci": "0000:44:00",
            "pid": None,
            "category": "hardware",
            "note": "an Xid line quoted inline in prose, in backticks",
        },
    },
    {
        "id": "own-xid-003",
        "source_url": "https://github.com/leptonai/gpud/pull/1174",
        "source_kind": "github_pull_request",
        "text": "NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
        "answer": {
            "xids": [149],
            "pci": "0019:01:00",
            "pid": None,
            "category": "hardware",
            "note": "NVLink5 (GB200) Xid 149; a PCI domain other than 0000; Link -1",
        },
    },
    {
        "id": "own-xid-004",
        "source_url": "https://github.com/leptonai/gpud/pull/1174",
        "source_kind": "github_pull_request",
        "text": "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)",
        "answer": {
            "xids": [145],
            "pci": "0018:01:00",
            "pid": None,
            "category": "hardware",
            "events": [{"xid": 145, "category": "hardware", "nvlink_link": 13}],
        },
    },
    {
        "id": "own-xid-005",
        "source_url": "https://github.com/leptonai/gpud/pull/1174",
        "source_kind": "github_pull_request",
        "text": "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error",
        "answer": {
            "xids": [94],
            "pci": "0000:9b:00",
            "pid": 1234,
            "category": "hardware",
            "events": [{"xid": 94, "category": "hardware", "process_name": "python3"}],
        },
    },
    {
        "id": "own-xid-006",
        "source_url": "https://github.com/leptonai/gpud/pull/46",
        "source_kind": "github_pull_request",
        "text": "+> [Fri Aug 30 11:11:22 2024] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing\n+> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n+> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 7, TPC 7, SM 0): Multiple Warp Errors\n+> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x57c730=0xc04000b 0x57c734=0x24 0x57c728=0x1f81fb60 0x57c72c=0x1174\n+> [Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005",
        "answer": {
            "xids": [13, 13, 13, 109],
            "pci": "0000:cb:00",
            "pid": 1797828,
            "category": "hardware",
            "note": "dmesg --ctime lines inside a Markdown quote inside a diff ('+> '); Xid 109 is in NVIDIA's hardware-possible class, so the GPU's worst is hardware",
        },
    },
    {
        "id": "own-xid-007",
        "source_url": "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230",
        "source_kind": "github_issue",
        "text": "[   14.650646] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  (root@epyc)  Fri Jul  3 11:27:00 AM UTC 2026\n[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 timeout 5200\n[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout **********************************",
        "answer": {
            "xids": [],
            "pci": None,
            "pid": None,
            "category": None,
            "driver": "595.71.05",
            "note": "GSP heartbeat and RPC timeout lines without an Xid number: no Xid is invented",
        },
    },
]

XID += [
    {
        "id": "own-xid-008",
        "source_url": "https://github.com/Bumblebee-Project/Bumblebee/issues/677",
        "source_kind": "github_issue",
        "text": "[24128.828315] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000\n[24128.828608] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000\n[24128.834365] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000003, engmask 00000101, intr 10000000",
        "answer": {
            "xids": [32, 32, 31],
            "pci": "0000:01:00",
            "pid": None,
            "category": "app",
            "note": "a 2015 driver's wording: no pid or process name; Xid 32 (a DMA fault on the command stream, NVIDIA's catalog: mostly PCIe signal, class unknown) then 31 (MMU fault, app class): app beats unknown on one GPU",
        },
    }
]

# Ray's memory monitor: a worker killed because the node's host memory ran low (not CUDA).
LAUNCH += [
    {
        "id": "own-launch-016",
        "source_url": "https://github.com/ray-project/ray/issues/32730",
        "source_kind": "github_issue",
        "text": "Memory on the node (IP: 172.31.237.1, ID: 2c0ca846c8a9b1630ce2a4aae5ce82dd974531325a67acab1801dbf1) where the task (task ID: 76b2551f16836f9d58427a0096d8ccf5ba077e2703000000, name=pi4_sample, pid=664672, memory used=0.05GB) was running was 219.41GB / 230.40GB (0.952289), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: ba84684289453ec054c6d0aa4293b77bdf7d3f3e0c77b2724ee41479) because it was the most recently scheduled task; to see more information about memory usage on this node, use `ray logs raylet.out -ip 172.31.237.1`. To see the logs of the worker, use `ray logs worker-ba84684289453ec054c6d0aa4293b77bdf7d3f3e0c77b2724ee41479*out -ip 172.31.237.1. Top 10 memory users:",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.31.237.1",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "the node named by IP only; the killed task used 0.05 GB, the node 219.41 of 230.40 GB",
        },
    },
    {
        "id": "own-launch-017",
        "source_url": "https://github.com/flwrlabs/flower/issues/2157",
        "source_kind": "github_issue",
        "text": "(raylet) [2023-07-23 15:21:29,851 E 9751 9751] (raylet) node_manager.cc:3084: 4 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: b287aac2de42bef55d13e884c4bdb6cffb2d81d1dc96aa08c4633a43, IP: 172.28.0.12) over the last time period. To see more information about the Workers killed on this node, use `ray logs raylet.out -ip 172.28.0.12`\n(raylet) \n(raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on this node or reducing task parallelism by requesting more CPUs per task. To adjust the kill threshold, set the environment variable `RAY_memory_usage_threshold` when starting Ray. To disable worker killing, set the environment variable `RAY_memory_monitor_refresh_ms` to zero.",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.28.0.12",
            "first_failure_time": "2023-07-23 15:21:29,851",
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "the raylet's periodic summary (printed after the kills, so its stamp bounds them)",
        },
    },
    {
        "id": "own-launch-018",
        "source_url": "https://github.com/jchengai/planTF/issues/28",
        "source_kind": "github_issue",
        "text": "(raylet) [2024-08-25 19:21:02,241 E 1111013 1111013] (raylet) node_manager.cc:3064: 12 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: b8aad7ac53c083fcae4851424e0362cec4a21916876b69bb1722ed29, IP: 172.31.105.218) over the last time period. To see more information about the Workers killed on this node, use `ray logs raylet.out -ip 172.31.105.218`\n(raylet) \n(raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. Consider provisioning more memory on this node or reducing task parallelism by requesting more CPUs per task. To adjust the kill threshold, set the environment variable `RAY_memory_usage_threshold` when starting Ray. To disable worker killing, set the environment variable `RAY_memory_monitor_refresh_ms` to zero.",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.31.105.218",
            "first_failure_time": "2024-08-25 19:21:02,241",
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "feature caching, 12 workers killed",
        },
    },
    {
        "id": "own-launch-019",
        "source_url": "https://github.com/WM-PO/WMPO/issues/3",
        "source_kind": "github_issue",
        "text": "(raylet) [2025-12-07 09:57:19,206 E 393463 393463] (raylet) node_manager.cc:3277: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at \nnode (ID: 8289f87b78d161ae21bf723c7c57838345a56248dd48a2c3f0d5ac73, IP: 172.24.0.226) over the last time period. To see more information about the Workers killed on this node, use `ray log\ns raylet.out -ip 172.24.0.226`",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.24.0.226",
            "first_failure_time": "2025-12-07 09:57:19,206",
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "hard-wrapped at the terminal's width: the node's IP is on the line after the OOM words",
        },
    },
    {
        "id": "own-launch-020",
        "source_url": "https://github.com/ray-project/ray/issues/28774",
        "source_kind": "github_issue",
        "text": "(raylet, ip=172.31.66.10) [2022-09-22 16:02:34,214 E 138 138] (raylet) node_manager.cc:2966: System memory low at node with IP 172.31.66.10. Used memory (54.90GB) / total capacity (57.60GB) (0.95307) exceeds threshold 0.95, killing latest task with name  and task ID NIL_ID to avoid running out of memory.\n(raylet, ip=172.31.66.10) This may indicate a memory leak in a task or actor, or that too many tasks are running in parallel.\n(raylet, ip=172.31.66.10) To find the highest memory consumers, use `ray logs raylet.out -ip 172.31.66.10`.\n(raylet, ip=172.31.66.10) Consider provisioning more memory on this node or reducing task parallelism by requesting more CPUs per task. To adjust the eviction threshold, set the environment variable `RAY_memory_usage_threshold_fraction` when starting Ray. To disable worker eviction, set the environment variable `RAY_memory_monitor_interval_ms` to zero.\n\n....\n\n\nray.exceptions.WorkerCrashedError: The worker died unexpectedly while executing this task. Check python-core-worker-*.log files for mo",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.31.66.10",
            "first_failure_time": "2022-09-22 16:02:34,214",
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "Ray 2.0's wording ('System memory low at node with IP'); the task's own error says only that the worker died",
        },
    },
    {
        "id": "own-launch-021",
        "source_url": "https://github.com/ray-project/ray/issues/28778",
        "source_kind": "github_issue",
        "text": "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n        class_name: monitor_memory_usage.<locals>.MemoryMonitorActor\n        actor_id: 5b7297472c9a580c171cc15602000000\n        pid: 1412\n        namespace: 94d6d15c-2534-45cf-b560-2d7cdbfac41b\n        ip: 172.31.41.244\nThe actor is dead because its worker process has died. Worker exit type: USER_ERROR Worker exit detail: Task was killed due to the node running low on memory.\n\nMemory on the node (IP: 172.31.41.244, ID: 208ebdd0b89f655e905f8ab3993f4a1c7ee671e57d81df38aa3164eb) where the task wa",
        "answer": {
            "launcher": "ray",
            "failing_ranks": None,
            "host": "172.31.41.244",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (Ray's memory monitor), not CUDA",
            "note": "an actor's death report; the OOM cause is in its exit detail, the node in its ip field and in the memory line",
        },
    },
]

# NVRM lines that are not Xid lines (GSP timeouts' dumps): nothing to read as an Xid.
XID += [
    {
        "id": "own-xid-009",
        "source_url": "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/446",
        "source_kind": "github_issue",
        "text": "192.168.11.119: kern: warning: [2026-04-22T21:27:51.291660856Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 08 = 0x0000000004d4b1a0\n192.168.11.119: kern: warning: [2026-04-22T21:27:51.291666514Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 09 = 0x0000000005c37b14\n192.168.11.119: kern: warning: [2026-04-22T21:27:51.291670789Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 10 = 0x0000000005c39948\n192.168.11.119: kern: warning: [2026-04-22T21:27:51.291676137Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 11 = 0x0000000005a07fe0\n192.168.11.119: kern: warning: [2026-04-22T21:27:51.291679812Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: TRACE: 12 = 0x000000000400a35c",
        "answer": {
            "xids": [],
            "pci": None,
            "pid": None,
            "category": None,
            "note": "a GSP core dump's TRACE lines from a Talos node, each under the node's address and a syslog facility ('192.168.11.119: kern: warning: [ISO stamp]: '): NVRM lines that are not Xid lines; the thread's Xid is not in this excerpt",
        },
    },
]

# Blackwell NVLink Xids (144-150, 137): quoted in a PR with a tool's decode between, redacted in an issue.
XID += [
    {
        "id": "own-xid-010",
        "source_url": "https://github.com/leptonai/gpud/pull/1160",
        "source_kind": "github_pull_request",
        "text": "> NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 0x00000000 0x00000000 0x00000000)\n- XID 144.0 (err status 0x00000008) NVLINK_SAW_ERROR detected on GPU PCI:0000:01:00\n- Warning\n    \n> NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x026001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n- XID 149.38 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00\n- Fatal\n    \n> NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n- XID 149.37 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00\n- Fatal",
        "answer": {
            "xids": [144, 149, 149],
            "pci": ["0000:01:00", "0000:00:00"],
            "pid": None,
            "category": "hardware",
            "note": "Blackwell NVLink Xids quoted with '> ' in a PR, each followed by the tool's own decode ('- XID 144.0 ... detected on GPU PCI:...'), which is not a kernel line: three Xids, not six",
        },
    },
    {
        "id": "own-xid-011",
        "source_url": "https://github.com/NVIDIA/nccl/issues/2241",
        "source_kind": "github_issue",
        "text": "kernel: NVRM: GPU1 kbifCacheVFInfo_GB100: Unable to read NV_PF0_INITIAL_AND_TOTAL_VFS\nkernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)\nkernel: NVRM: Xid (PCI:...): 137, RLW_RXPIPE interrupt hit on link 11 on GPU0: PRIV Error",
        "answer": {
            "xids": [145, 137],
            "pci": None,
            "pid": None,
            "category": "hardware",
            "note": "a B200's lines with the PCI address and the register values redacted to '...'; 137 right after a Nonfatal 145 on the same link: the GPU's worst is the NVLink (hardware) one",
        },
    },
    {
        "id": "own-xid-012",
        "source_url": "https://github.com/NVIDIA/gpu-operator/issues/1146",
        "source_kind": "github_issue",
        "text": "Dec  2 11:38:46 worker4 kernel: [  218.250668] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5\nDec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 partition 7, subpartition 1.\nDec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).\nDec  2 11:38:49 worker4 kernel: [  221.044131] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
        "answer": {
            "xids": [48, 64],
            "pci": "0000:07:00",
            "pid": None,
            "category": "hardware",
            "note": "excerpt: a double-bit ECC error and a failed page retirement on one GPU, between another GPU's RmInitAdapter failures (no Xid for that one); syslog stamps with a space-padded day",
        },
    },
]

LAUNCH += [
    {
        "id": "own-launch-022",
        "source_url": "https://github.com/FoNDUE-HTR/Documentation/issues/5",
        "source_kind": "github_issue",
        "text": "`srun: error: gpu001: task 0: Out Of Memory`",
        "answer": {
            "launcher": "srun",
            "failing_ranks": [0],
            "host": "gpu001",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the issue title, in backquotes; the job asked --mem=0 on a shared GPU partition",
        },
    },
    {
        "id": "own-launch-023",
        "source_url": "https://github.com/DifferentiableUniverseInitiative/flowpm/issues/80",
        "source_kind": "github_issue",
        "text": "+ srun --unbuffered --mpi=pmi2 -o mesh_nbody_%t.log /gpfslocalsup/pub/idrtools/bind_gpu.sh nsys profile --stats=true -t nvtx,cuda,mpi -o 'result-%q{SLURM_TASK_PID}' python -u mesh_nbody_benchmark.py --nc=512 --batch_size=1 --nx=2 --ny=2 --hsize=32\nsrun: error: r10i0n8: task 3: Exited with exit code 255\nsrun: Terminating job step 1751099.0\nsrun: error: r10i0n8: tasks 0-2: Terminated\nsrun: Force Terminated job step 1751099.0",
        "answer": {
            "launcher": "srun (per-task log files, -o mesh_nbody_%t.log)",
            "failing_ranks": [3],
            "host": "r10i0n8",
            "first_failure_time": None,
            "is_oom": False,
            "note": "excerpt from the batch script's trace (set -x) on: task 3 exited 255 and srun terminated tasks 0-2; the tasks' own output went to per-task files",
        },
    },
    {
        "id": "own-launch-024",
        "source_url": "https://github.com/bccp/nbodykit/issues/206",
        "source_kind": "github_issue",
        "text": "run: error: nid00018: tasks 0-23: Killed\nsrun: Terminating job step 1020397.4\nsrun: Force Terminated job step 1020397.4",
        "answer": {
            "launcher": "srun",
            "failing_ranks": list(range(24)),
            "host": "nid00018",
            "first_failure_time": None,
            "note": "the paste lost the first letter of 'srun:'; every task of the step was killed (SIGKILL), so no single task failed first; the reporter traced it to Edison's memory limits, but the text only says Killed",
        },
    },
    {
        "id": "own-launch-025",
        "source_url": "https://github.com/chombo-discharge/chombo-discharge/issues/501",
        "source_kind": "github_issue",
        "text": "> --------------------------------------------------------------------------\n> Primary job  terminated normally, but 1 process returned\n> a non-zero exit code. Per user-direction, the job has been aborted.\n> --------------------------------------------------------------------------\n> --------------------------------------------------------------------------\n> mpirun noticed that process rank 18596 with PID 1035144 on node b3168 exited on signal 9 (Killed).\n> --------------------------------------------------------------------------\n> 256 total processes killed (some possibly by mpirun during cleanup)\n> slurmstepd: error: Detected 88 oom_kill events in StepId=1103245.batch. Some of the step tasks have been OOM Killed.\n> \n> Job 1103245 consumed 2663.1 billing hours from project nn9887k.\n> \n> Submitted 2025-03-27T08:57:44; waited 26.0 seconds in the queue after becoming eligible to run.\n> \n> Requested wallclock time: 30.0 minutes\n> Elapsed wallclock time:   3.6 minutes\n> \n> Job had an out of memory error.",
        "answer": {
            "launcher": "mpirun (Open MPI) inside an sbatch batch step",
            "failing_ranks": [18596],
            "host": "b3168",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "quoted with '> '; Open MPI names the rank and node it saw killed by signal 9, slurmstepd counts 88 oom_kill events in the batch step; the site's epilogue (billing, submit time, wallclock) follows, and its submit time is not the failure's",
        },
    },
    {
        "id": "own-launch-026",
        "source_url": "https://github.com/open-mpi/ompi/issues/2661",
        "source_kind": "github_issue",
        "text": "[puneet@host02 bin]$ mpirun -np 4 -npernode 1 -machinefile hosts.txt ./bt.E.4.mpi_io_full \nmpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).\n[puneet@host02 bin]$ echo $?\n137",
        "answer": {
            "launcher": "mpirun (Open MPI 2.0, machinefile)",
            "failing_ranks": [0],
            "host": "host01",
            "first_failure_time": None,
            "note": "a shell prompt and the command before, the exit status 137 after; the developer: every rank needs 98 GB and the node has 64 GB (the kernel's OOM killer, which the text itself does not say)",
        },
    },
    {
        "id": "own-launch-027",
        "source_url": "https://github.com/BirolLab/abyss/issues/223",
        "source_kind": "github_issue",
        "text": "51: Hash load: 54978299 / 268435456 = 0.205 using 4.53 GB\nmpirun noticed that process rank 68 with PID 124424 on node node132 exited on signal 9 (Killed).",
        "answer": {
            "launcher": "mpirun",
            "failing_ranks": [68],
            "host": "node132",
            "first_failure_time": None,
            "note": "ABySS's own rank-prefixed line ('51: ') before mpirun's; the maintainer: SIGKILL from the scheduler or the kernel's OOM killer",
        },
    },
    {
        "id": "own-launch-028",
        "source_url": "https://github.com/RickKessler/SNANA/issues/1585",
        "source_kind": "github_issue",
        "text": "# merge_driver:          Remove BUSY_MERGE_CPU0000.LOCK for T_midnight=42200\n# merge_driver_exit: completed merge process after 2.21 sec\n  Done with merge process -> exit Main.\n0\nFinished merge_driver at 2025-11-21 11:43:23\nslurmstepd: error: Detected 1 oom_kill event in StepId=45491417.batch. Some of the step tasks have been OOM Killed.",
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the application's own 'Finished ... at' time is before the kill, not the kill's time",
        },
    },
    {
        "id": "own-launch-029",
        "source_url": "https://github.com/lanl/PyBNF/issues/118",
        "source_kind": "github_issue",
        "text": "slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.",
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the old cgroup wording cut after 'cgroup.'",
        },
    },
    {
        "id": "own-launch-030",
        "source_url": "https://github.com/RickKessler/SNANA/issues/199",
        "source_kind": "github_issue",
        "text": "3361579 starting execution Fri Aug 7 08:20:54 CDT 2020 on midway2-0320.rcc.local\n/tmp/slurmd/job3361579/slurm_script: line 20: 42150 Killed                  snlc_fit.exe /scratch/midway2/rkessler/PIPPIN_OUTPUT/DJB_SDSS/2_LCFIT/LFIT_TESTSIMLSST_MARIA/FIT_PIP_DJB_SDSS_TESTSIMLSST_MARIA.nml VERSION_PHOTOMETRY PIP_DJB_SDSS_TESTSIMLSST_MARIA HFILE_OUT PIP_DJB_SDSS_TESTSIMLSST_MARIA_FITOPT000_SPLIT001.HBOOK TEXTFILE_PREFIX PIP_DJB_SDSS_TESTSIMLSST_MARIA_FITOPT000_SPLIT001 JOBSPLIT 1 20 MXLC_PLOT 3 &>PIP_DJB_SDSS_TESTSIMLSST_MARIA_FITOPT000_SPLIT001.LOG\nslurmstepd-midway2-0320: error: Detected 1 oom-kill event(s) in step 3361579.batch cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.",
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": "midway2-0320",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "slurmstepd names its node in its own prefix ('slurmstepd-midway2-0320:'); the job's start line gives the node's full name and a start time that is not the kill's",
        },
    },
    {
        "id": "own-launch-031",
        "source_url": "https://github.com/kharchenkolab/numbat/issues/188",
        "source_kind": "github_issue",
        "text": "slurmstepd: error: Detected 167 oom_kill events in StepId=19079835.batch. Some of the step tasks have been OOM Killed.",
        "answer": {
            "launcher": "sbatch (batch step)",
            "failing_ranks": None,
            "host": None,
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "167 events in one batch step (forked workers)",
        },
    },
    {
        "id": "own-launch-032",
        "source_url": "https://github.com/desihub/desispec/issues/818",
        "source_kind": "github_issue",
        "text": "slurmstepd: error: Detected 1 oom-kill event(s) in step 25039290.0 cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\nsrun: error: nid00019: task 7: Out Of Memory\nsrun: Terminating job step 25039290.0",
        "answer": {
            "launcher": "srun (MPI, 46 tasks on 6 nodes)",
            "failing_ranks": [7],
            "host": "nid00019",
            "first_failure_time": None,
            "is_oom": "host-memory OOM (cgroup), not CUDA",
            "note": "the old cgroup wording for a numbered step, then srun's per-task verdict",
        },
    },
    {
        "id": "own-launch-033",
        "source_url": "https://github.com/openai/jukebox/issues/155",
        "source_kind": "github_issue",
        "text": "===================================================================================\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 9665 RUNNING AT NeuroRTX6000\n=   EXIT CODE: 9\n=   CLEANING UP REMAINING PROCESSES\n=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n===================================================================================\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\nThis typically refers to a problem with your application.\nPlease see the FAQ page for debugging suggestions",
        "answer": {
            "launcher": "mpiexec (MPICH Hydra)",
            "failing_ranks": None,
            "host": "NeuroRTX6000",
            "first_failure_time": None,
            "note": "Hydra's block without a RANK line: a PID on a host, killed by signal 9 (its exit string); two GPUs, a second run after a first that had finished",
        },
    },
    {
        "id": "own-launch-034",
        "source_url": "https://github.com/je-santos/MPLBM-UT/issues/92",
        "source_kind": "github_issue",
        "text": "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 92248 RUNNING AT fzh-desktop\n=   EXIT CODE: 9\n=   CLEANING UP REMAINING PROCESSES\n=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
        "answer": {
            "launcher": "mpiexec (MPICH Hydra)",
            "failing_ranks": None,
            "host": "fzh-desktop",
            "first_failure_time": None,
            "note": "Hydra's block without its rule lines; the reporter: caused by a lack of memory (the kernel's OOM killer, which the text does not say)",
        },
    },
    {
        "id": "own-launch-035",
        "source_url": "https://github.com/bsc-performance-tools/extrae/issues/101",
        "source_kind": "github_issue",
        "text": "===================================================================================\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 6 PID 2447372 RUNNING AT node0009\n=   KILLED BY SIGNAL: 9 (Killed)\n===================================================================================\n\n===================================================================================\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 7 PID 2447373 RUNNING AT node0009\n=   KILLED BY SIGNAL: 9 (Killed)\n===================================================================================\n\n===================================================================================\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 8 PID 2447374 RUNNING AT node0009\n=   KILLED BY SIGNAL: 9 (Killed)\n===================================================================================\n\n===================================================================================\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   RANK 9 PID 2447375 RUNNING AT node0009\n=   KILLED BY SIGNAL: 9 (Killed)\n===================================================================================",
        "answer": {
            "launcher": "mpiexec (MPICH Hydra)",
            "failing_ranks": [6, 7, 8, 9],
            "host": "node0009",
            "first_failure_time": None,
            "note": "excerpt: the first four of Hydra's per-rank blocks (the paste goes on with ranks 10 and up), each rank killed by signal 9 on the same node",
        },
    },
    {
        "id": "own-launch-036",
        "source_url": "https://github.com/E3SM-Project/scream/pull/2193",
        "source_kind": "github_pull_request",
        "text": "a non-zero exit code.. Per user-direction, the job has been aborted.\n-------------------------------------------------------\n--------------------------------------------------------------------------\nmpiexec detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated. The first process to do so was:\n\n  Process name: [[6341,1],0]\n  Exit code:    1\n--------------------------------------------------------------------------",
        "answer": {
            "launcher": "mpiexec (Open MPI)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "note": "a CI bot's log; Open MPI names the first process to exit non-zero as [[job,step],rank]",
        },
    },
    {
        "id": "own-launch-037",
        "source_url": "https://github.com/horovod/horovod/issues/1421",
        "source_kind": "github_issue",
        "text": "Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n-------------------------------------------------------\n--------------------------------------------------------------------------\nmpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated. The first process to do so was:\n\n  Process name: [[29973,1],0]\n  Exit code:    1",
        "answer": {
            "launcher": "mpirun (Open MPI, Horovod)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
        },
    },
    {
        "id": "own-launch-038",
        "source_url": "https://github.com/uoguelph-mlrg/Theano-MPI/issues/5",
        "source_kind": "github_issue",
        "text": "Primary job  terminated normally, but 1 process returned\n## a non-zero exit code.. Per user-direction, the job has been aborted.\n\n---\n\nmpirun detected that one or more processes exited with non-zero status, thus causing\nthe job to be terminated. The first process to do so was:\n\n  Process name: [[50759,1],0]\n##   Exit code:    2",
        "answer": {
            "launcher": "mpirun (Open MPI)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "note": "GitHub's Markdown turned Open MPI's rule lines into headings: '## ' glued to the lines under them and '---' rules",
        },
    },
    {
        "id": "own-launch-039",
        "source_url": "https://github.com/sirocco-rt/sirocco/issues/208",
        "source_kind": "github_issue",
        "text": 'mpirun -np 4 py80_dom2 reflect\n## The error looks like this:\n\nmpirun has exited due to process rank 1 with PID 4017 on\nnode clsockeyev1 exiting improperly. There are three reasons this could occur:\n1. this process did not call "init" before exiting, but others in\n   the job did. This can cause a job to hang indefinitely while it waits\n   for all processes to call "init". By rule, if one process calls "init",\n   then ALL processes must call "init" prior to termination.',
        "answer": {
            "launcher": "mpirun (Open MPI 1.x)",
            "failing_ranks": [1],
            "host": "clsockeyev1",
            "first_failure_time": None,
            "is_oom": False,
            "note": "excerpt: the command, the reporter's heading, and the head of Open MPI's 'exiting improperly' text, its node on the wrapped second line",
        },
    },
    {
        "id": "own-launch-040",
        "source_url": "https://github.com/merzlab/QUICK/issues/172",
        "source_kind": "github_issue",
        "text": 'mpirun -np 1 quick.MPI foo.in \n--------------------------------------------------------------------------\nmpirun has exited due to process rank 0 with PID 0 on\nnode louie exiting improperly. There are three reasons this could occur:\n1. this process did not call "init" before exiting, but others in\nthe job did. This can cause a job to hang indefinitely while it waits\nfor all processes to call "init". By rule, if one process calls "init",\nthen ALL processes must call "init" prior to termination.',
        "answer": {
            "launcher": "mpirun (Open MPI)",
            "failing_ranks": [0],
            "host": "louie",
            "first_failure_time": None,
            "is_oom": False,
            "note": "excerpt: the head of the text; PID 0 (Open MPI had lost the process's PID)",
        },
    },
    {
        "id": "own-launch-041",
        "source_url": "https://github.com/FEniCS/performance-test/issues/66",
        "source_kind": "github_issue",
        "text": 'mpirun has exited due to process rank 1 with PID 0 on\nnode ci-319-775e620e exiting improperly. There are three reasons this could occur:\n\n1. this process did not call "init" before exiting, but others in\nthe job did. This can cause a job to hang indefinitely while it waits\nfor all processes to call "init". By rule, if one process calls "init",\nthen ALL processes must call "init" prior to termination.',
        "answer": {
            "launcher": "mpirun (Open MPI 4.0)",
            "failing_ranks": [1],
            "host": "ci-319-775e620e",
            "first_failure_time": None,
            "is_oom": False,
            "note": "excerpt: the head of the text in a Debian CI log",
        },
    },
    {
        "id": "own-launch-042",
        "source_url": "https://github.com/galaxyproject/pulsar/issues/408",
        "source_kind": "github_issue",
        "text": "It's the same size on the JS2 side. The job hit the walltime:\nslurmstepd: error: *** JOB 3561528 ON js2-large10 CANCELLED AT 2025-08-19T17:09:34 DUE TO TIME LIMIT ***",
        "answer": {
            "launcher": "sbatch",
            "failing_ranks": None,
            "host": "js2-large10",
            "first_failure_time": "2025-08-19T17:09:34",
            "kind": "time_limit",
            "note": "a chat message quoted in an issue: the job's walltime, not a failure of the job's own",
        },
    },
    {
        "id": "own-launch-043",
        "source_url": "https://github.com/lyu-yx/ACUMEN/issues/4",
        "source_kind": "github_issue",
        "text": "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGKILL",
        "answer": {
            "launcher": "torch.multiprocessing.spawn",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "note": "the issue title; spawn's process index is the local rank (one node here); the maintainer: out of memory (the text says only SIGKILL)",
        },
    },
    {
        "id": "own-launch-044",
        "source_url": "https://github.com/Plachtaa/VITS-fast-fine-tuning/issues/399",
        "source_kind": "github_issue",
        "text": "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1",
        "answer": {
            "launcher": "torch.multiprocessing.spawn",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "note": "the issue title",
        },
    },
    {
        "id": "own-launch-045",
        "source_url": "https://github.com/facebookresearch/mmf/issues/376",
        "source_kind": "github_issue",
        "text": 'Traceback (most recent call last):\n  File "run.py", line 115, in <module>\n    run()\n  File "run.py", line 107, in run\n    nprocs=config.distributed.world_size,\n  File "/home/lixiangpeng/env/anaconda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 200, in spawn\n    return start_processes(fn, args, nprocs, join, daemon, start_method=\'spawn\')\n  File "/home/lixiangpeng/env/anaconda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 158, in start_processes\n    while not context.join():\n  File "/home/lixiangpeng/env/anaconda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 119, in join\n    raise Exception(msg)\nException: \n\n-- Process 0 terminated with the following error:\nTraceback (most recent call last):\n  File "/home/lixiangpeng/env/anaconda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 20, in _wrap\n    fn(i, *args)\n  File "/home/lixiangpeng/mmf/mmf_cli/run.py", line 54, in distributed_main\n    main(configuration, init_distributed=True, predict=predict)',
        "answer": {
            "launcher": "torch.multiprocessing.spawn (PyTorch 1.5, a plain Exception)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "note": "excerpt: the parent's traceback and the head of process 0's; PyTorch before 1.8 raised a plain Exception with spawn's message",
        },
    },
    {
        "id": "own-launch-046",
        "source_url": "https://github.com/xxxupeng/ADL/issues/2",
        "source_kind": "github_issue",
        "text": 'ngpus_per_node: 2\n2024-06-14 10:13:04\nUsing GPU: 1 for training\nUsing GPU: 0 for training\nTraceback (most recent call last):\n  File "/data/run01/scz0rja/server/ADL-main/train_DDP.py", line 319, in <module>\n    main()\n  File "/data/run01/scz0rja/server/ADL-main/train_DDP.py", line 100, in main\n    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))\n  File "/HOME/scz0rja/run/envs/adl/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 240, in spawn\n    return start_processes(fn, args, nprocs, join, daemon, start_method=\'spawn\')\n  File "/HOME/scz0rja/run/envs/adl/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 198, in start_processes\n    while not context.join():\n  File "/HOME/scz0rja/run/envs/adl/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 160, in join\n    raise ProcessRaisedException(msg, error_index, failed_process.pid)\ntorch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 0 terminated with the following error:\nTraceback (most recent call last):\n  File "/HOME/scz0rja/run/envs/adl/lib/python3.9/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap\n    fn(i, *args)',
        "answer": {
            "launcher": "torch.multiprocessing.spawn",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "note": "excerpt up to the head of process 0's traceback (the thread is about an OOM that this excerpt does not reach); the date line is the script's own start stamp",
        },
    },
    {
        "id": "own-launch-047",
        "source_url": "https://github.com/mosaicml/llm-foundry/issues/258",
        "source_kind": "github_issue",
        "text": "the training script starts up, downloads the model, loads my dataset, and then errors out in \u201cbuilding trainer\u201d with:\n\nERROR:composer.cli.launcher:Rank 2 crashed with exit code -7.",
        "answer": {
            "launcher": "composer (composer.cli.launcher)",
            "failing_ranks": [2],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "kind": "signal",
            "note": "Composer's launcher names the first rank its monitor saw exit non-zero; -7 is SIGBUS (a Docker container on a 4-GPU g5.12xlarge); no cause reported",
        },
    },
    {
        "id": "own-launch-048",
        "source_url": "https://github.com/mosaicml/diffusion/issues/140",
        "source_kind": "github_issue",
        "text": '@Skylion007 when i start train the sd-2 (vae.encoder step) ,the issue occurs, no any information but "ERROR:composer.cli.launcher:Rank 0 crashed with exit code -11." hope your reply,thanks.\n\nInstantiating logger <composer.loggers.wandb_logger.WandBLogger>\n[2024-05-07 09:39:45,349][composer.algorithms.low_precision_groupnorm.low_precision_groupnorm][INFO] - Successfully replaced 61 instances of GroupNorm with LowPrecisionGroupNorm\n[2024-05-07 09:39:45,379][composer.algorithms.low_precision_layernorm.low_precision_layernorm][INFO] - Successfully replaced 48 instances of LayerNorm with LowPrecisionLayerNorm\nInstantiating callbacks <composer.callbacks.speed_monitor.SpeedMonitor>\nInstantiating callbacks <composer.callbacks.lr_monitor.LRMonitor>\nInstantiating callbacks <composer.callbacks.memory_monitor.MemoryMonitor>\nInstantiating callbacks <composer.callbacks.runtime_estimator.RuntimeEstimator>\nInstantiating callbacks <composer.callbacks.OptimizerMonitor>\nstart to train........\n[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)\n[2024-05-07 09:39:45,388][composer.utils.reproducibility][INFO] - Setting seed to 17\n[2024-05-07 09:39:45,572][composer.trainer.trainer][INFO] - Run name: 1715045985-burrowing-goshawk',
        "answer": {
            "launcher": "composer (composer.cli.launcher)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "kind": "signal",
            "note": "the launcher's line quoted in the reporter's sentence, then the head of the run's log (hydra-style stamps, all before the crash); -11 is SIGSEGV",
        },
    },
    {
        "id": "own-launch-049",
        "source_url": "https://github.com/mosaicml/llm-foundry/issues/1501",
        "source_kind": "github_issue",
        "text": "ERROR:composer.cli.launcher:Global rank 0 (PID 208865) exited with code -11",
        "answer": {
            "launcher": "composer (composer.cli.launcher)",
            "failing_ranks": [0],
            "host": None,
            "first_failure_time": None,
            "is_oom": False,
            "kind": "signal",
            "note": "the issue's title: the launcher's closing summary of the first rank (in rank order) that exited non-zero, with its pid; the body's log lines carry Composer's 'rank0[208865][MainThread]: INFO:' prefix",
        },
    },
]

XID += [
    {
        "id": "own-xid-013",
        "source_url": "https://github.com/leptonai/gpud/pull/500",
        "source_kind": "github_pull_request",
        "text": "⌛ scanning dmesg\n"
        '[XID found] (54 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=4071838, '
        "name=python, Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected "
        'function 76 (GSP_RM_CONTROL) (0x20801702 0x4)."\n'
        '[XID found] (53 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=28232, '
        "name=cache_mgr_main, Timeout after 45s of waiting for RPC response from GPU4 GSP! "
        'Expected function 76 (GSP_RM_CONTROL) (0x20810108 0x3e0)."\n'
        '[XID found] (52 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=28232, '
        "name=cache_mgr_main, Timeout after 45s of waiting for RPC response from GPU4 GSP! "
        'Expected function 76 (GSP_RM_CONTROL) (0x20803039 0x20)."\n'
        '[XID found] (32 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=28098, '
        "name=gpu-feature-dis, Timeout after 45s of waiting for RPC response from GPU4 GSP! "
        'Expected function 76 (GSP_RM_CONTROL) (0x20803039 0x20)."\n'
        '[XID found] (10 minutes ago) "NVRM: Xid (PCI:0000:9b:00): 119, pid=4071838, '
        "name=python, Timeout after 45s of waiting for RPC response from GPU4 GSP! Expected "
        'function 76 (GSP_RM_CONTROL) (0x2080012c 0x14)."\n'
        "✘ scanned dmesg file -- found 5 issue(s)",
        "answer": {
            "xids": [119, 119, 119, 119, 119],
            "pci": "0000:9b:00",
            "pid": [4071838, 28232, 28098],
            "category": "hardware",
            "events": [{"xid": 119, "category": "hardware", "process_name": "python"}],
            "note": "Xid 119 (GSP RPC timeout) lines quoted by gpud's own scan output, each "
            "after '[XID found] (N minutes ago)'; the excerpt keeps gpud's dmesg scan "
            "and leaves out its kmsg scan, which repeats the lines",
        },
    },
    {
        "id": "own-xid-014",
        "source_url": "https://github.com/leptonai/gpud/pull/338",
        "source_kind": "github_pull_request",
        # `dmesg -x --time-format iso` (facility and level first), quoted by gpud's scan: a
        # kernel log holding an NVSwitch SXid and no GPU Xid (issue 34: no category was given).
        "text": "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid "
        "(PCI:0000:84:00.0): 12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, "
        "0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}",
        "answer": {
            "xids": [],
            "sxids": [12028],
            "pci": "0000:84:00.0",
            "category": "fabric",
            "note": "SXid 12028 (egress non-posted PRIV error) on NVSwitch 1 alone: a fabric "
            "event, not any GPU's; no severity word is printed in this form",
        },
    },
]

SLURM = [
    {
        "id": "own-slurm-001",
        "source_url": "https://github.com/martius-lab/cluster_utils/issues/87",
        "source_kind": "github_issue",
        "text": "JobID|NodeList|State|ExitCode\n239023|galvani-cn001|COMPLETED|0:0\n239023.batch|galvani-cn001|COMPLETED|0:0\n239023.extern|galvani-cn001|COMPLETED|0:0\n239023.0|galvani-cn001|CANCELLED|0:10\n239024|galvani-cn001|COMPLETED|0:0\n239024.batch|galvani-cn001|COMPLETED|0:0\n239024.extern|galvani-cn001|COMPLETED|0:0\n239024.0|galvani-cn001|CANCELLED|0:10",
        "answer": {
            "format": "parsable2 with header",
            "job_id": None,
            "state": None,
            "exit_code": None,
            "nodes": None,
            "jobs": [
                {"job_id": "239023", "state": "COMPLETED"},
                {"job_id": "239024", "state": "COMPLETED"},
            ],
            "note": "excerpt: the first two of four jobs. Each allocation row is COMPLETED 0:0 while its srun step was CANCELLED by SIGUSR1 (0:10): a job's state is its allocation row's; with several jobs there is no one job state",
        },
    },
    {
        "id": "own-slurm-002",
        "source_url": "https://github.com/nebius/soperator/pull/321",
        "source_kind": "github_pull_request",
        "text": "~# sacct --format=JobID,JobName,AllocCPUS,MaxRSS,MaxVMSize,TotalCPU,State\nJobID           JobName  AllocCPUS     MaxRSS  MaxVMSize   TotalCPU      State \n------------ ---------- ---------- ---------- ---------- ---------- ---------- \n20                sleep          2                        00:00.004     FAILED \n20.0              sleep          2      5872K          0  00:00.004     FAILED ",
        "answer": {
            "format": "sacct fixed-width after a root prompt",
            "job_id": "20",
            "state": "FAILED",
            "exit_code": None,
            "nodes": None,
            "note": "excerpt: rows of job 20 only (jobs 19, 21 and 22 of the same listing left out); empty MaxRSS/MaxVMSize cells on the allocation row",
        },
    },
]

SLURM += [
    {
        "id": "own-slurm-003",
        "source_url": "https://github.com/desihub/desispec/issues/2744",
        "source_kind": "github_issue",
        "text": "desi@login26 [matterhorn]$ sacct -j 52222788\nJobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n------------ ---------- ---------- ---------- ---------- ---------- -------- \n52222788     ztile-573+       resv     desi_g        128  COMPLETED      0:0 \n52222788.ba+      batch                desi_g        128  COMPLETED      0:0 \n52222788.ex+     extern                desi_g        128  COMPLETED      0:0 \n52222788.0   desi_zproc                desi_g        128  COMPLETED      0:0 ",
        "answer": {
            "format": "sacct fixed-width after a shell prompt with the command",
            "job_id": "52222788",
            "state": "COMPLETED",
            "exit_code": "0:0",
            "nodes": None,
            "note": "a 2026 Slurm (NERSC) recording COMPLETED 0:0 for a job whose log says a task failed and the script exited 1: what Slurm says is evidence, not the outcome",
        },
    }
]

# Slurm outputs kept in a repository's notes: quoted sacct tables under their prompt.
SLURM += [
    {
        "id": "own-slurm-004",
        "source_url": "https://github.com/xamidi/pmGenerator/blob/94ae84f569883f6400cd5b67cd73522ae4b52def/log/custom/walsh3-CpCCNqCCNrsCptCCtqCrq/jobsRSS.txt",
        "source_kind": "github_file",
        "text": '$ sacct -j 40516253 --format="JobID,Partition,AllocCPUS,State,ExitCode,Elapsed,MaxRSS"\n> JobID         Partition  AllocCPUS      State ExitCode    Elapsed     MaxRSS \n> ------------ ---------- ---------- ---------- -------- ---------- ---------- \n> 40516253     optane_low         64  COMPLETED      0:0 1-15:13:13            \n> 40516253.ba+                    64  COMPLETED      0:0 1-15:13:13 549483116K \n> 40516253.ex+                    64  COMPLETED      0:0 1-15:13:13          0 \n549483116 / 1024^2 = 524.027935028076171875 ≈ 524.03',
        "answer": {
            "format": "sacct fixed-width, every line quoted with '> ' under the prompt and command, the user's arithmetic after",
            "job_id": "40516253",
            "state": "COMPLETED",
            "exit_code": "0:0",
            "nodes": None,
            "note": "Elapsed with days (1-15:13:13); an empty MaxRSS cell on the allocation row; a 2023 Slurm at RWTH (CLAIX)",
        },
    },
    {
        "id": "own-slurm-005",
        "source_url": "https://github.com/xamidi/pmGenerator/blob/94ae84f569883f6400cd5b67cd73522ae4b52def/log/custom/walsh3-CpCCNqCCNrsCptCCtqCrq/jobsRSS.txt",
        "source_kind": "github_file",
        "text": '$ sacct -j 40675584 --format="JobID,Partition,AllocCPUS,State,ExitCode,Elapsed,MaxRSS%11"\n> JobID         Partition  AllocCPUS      State ExitCode    Elapsed      MaxRSS \n> ------------ ---------- ---------- ---------- -------- ---------- ----------- \n> 40675584     optane_low         64  COMPLETED      0:0 3-08:13:30             \n> 40675584.ba+                    64  COMPLETED      0:0 3-08:13:30 1152288240K \n> 40675584.ex+                    64  COMPLETED      0:0 3-08:13:30          8K \n1152288240 / 1024^2 = 1098.9076995849609375 ≈ 1098.91',
        "answer": {
            "format": "sacct fixed-width with a widened column (MaxRSS%11), quoted with '> '",
            "job_id": "40675584",
            "state": "COMPLETED",
            "exit_code": "0:0",
            "nodes": None,
            "note": "the widened MaxRSS column shifts its header right; 1152288240K",
        },
    },
    {
        "id": "own-slurm-006",
        "source_url": "https://github.com/xamidi/pmGenerator/blob/94ae84f569883f6400cd5b67cd73522ae4b52def/log/custom/walsh3-CpCCNqCCNrsCptCCtqCrq/jobsRSS.txt",
        "source_kind": "github_file",
        "text": '61:\n$ sacct -j 40053787 --format="JobID,Partition,AllocCPUS,State,ExitCode,Elapsed,MaxRSS"\n> JobID         Partition  AllocCPUS      State ExitCode    Elapsed     MaxRSS \n> ------------ ---------- ---------- ---------- -------- ---------- ---------- \n> 40053787       c18m_low       3456  COMPLETED      0:0   01:07:58            \n> 40053787.ba+                    48  COMPLETED      0:0   01:07:58     10472K \n> 40053787.ex+                  3456  COMPLETED      0:0   01:07:58        84K \n> 40053787.0                    3456  COMPLETED      0:0   01:07:53  14083556K \n14083556 / 1024^2 = 13.431125640869140625 ≈ 13.43\n\n63:\n$ sacct -j 40063090 --format="JobID,Partition,AllocCPUS,State,ExitCode,Elapsed,MaxRSS"\n> JobID         Partition  AllocCPUS      State ExitCode    Elapsed     MaxRSS \n> ------------ ---------- ---------- ---------- -------- ---------- ---------- \n> 40063090       c18m_low       3456  COMPLETED      0:0   03:03:00            \n> 40063090.ba+                    48  COMPLETED      0:0   03:03:00      8228K \n> 40063090.ex+                  3456  COMPLETED      0:0   03:03:00        80K \n> 40063090.0                    3456  COMPLETED      0:0   03:02:56  27418508K \n27418508 / 1024^2 = 26.148326873779296875 ≈ 26.15',
        "answer": {
            "format": "two sacct outputs pasted one after the other, each under its prompt, labels between",
            "job_id": None,
            "state": None,
            "exit_code": None,
            "nodes": None,
            "jobs": [
                {"job_id": "40053787", "state": "COMPLETED"},
                {"job_id": "40063090", "state": "COMPLETED"},
            ],
            "note": "two jobs, each with a .0 step: no one job state",
        },
    },
    {
        "id": "own-slurm-007",
        "source_url": "https://github.com/SDU-eScience/UCloud/issues/70",
        "source_kind": "github_issue",
        "text": "dthrane@fe1:~$ sacct -b -P -n\n1655360|FAILED|127:0\n1655360.batch|FAILED|127:0\n1655360.0|FAILED|127:0",
        "answer": {
            "format": "parsable2 without header, brief fields (-b: JobID|State|ExitCode), after a prompt",
            "job_id": "1655360",
            "state": "FAILED",
            "exit_code": "127:0",
            "nodes": None,
            "note": "exit code 127: the command was not found; every step failed the same way",
        },
    },
]

APPS = [
    {
        "id": "own-apps-001",
        "source_url": "https://github.com/apache/mxnet/issues/4242",
        "source_kind": "github_issue",
        "text": "+-----------------------------------------------------------------------------+\n| Processes:                                                       GPU Memory |\n|  GPU       PID  Type  Process name                               Usage      |\n|=====================================================================|\n|    0     31794    C   Unknown Error                                 5371MiB |\n|    1      7653    C   python                                        5369MiB |\n|    1     13386    C   /xx/xxx/caffe             1205MiB |\n|    1     27707    C   Unknown Error                                 1011MiB |\n|    2     18049    C   python                                        5809MiB |\n|    3     11827    C   python                                        6169MiB |\n+-----------------------------------------------------------------------------+",
        "answer": {
            "command": "nvidia-smi (default table, Processes section)",
            "processes": [
                {"gpu": 0, "pid": 31794, "used_mib": 5371},
                {"gpu": 1, "pid": 7653, "used_mib": 5369},
                {"gpu": 1, "pid": 13386, "used_mib": 1205},
                {"gpu": 1, "pid": 27707, "used_mib": 1011},
                {"gpu": 2, "pid": 18049, "used_mib": 5809},
                {"gpu": 3, "pid": 11827, "used_mib": 6169},
            ],
            "pid_used_mib": [
                [31794, 5371],
                [7653, 5369],
                [13386, 1205],
                [27707, 1011],
                [18049, 5809],
                [11827, 6169],
            ],
            "per_gpu_count": {"0": 1, "1": 3, "2": 1, "3": 1},
            "note": "zombie training processes named 'Unknown Error'; a row whose path the reporter shortened by hand, so the columns no longer line up; a shorter '=' rule",
        },
    },
    {
        "id": "own-apps-002",
        "source_url": "https://github.com/wencolani/CrossE/issues/2",
        "source_kind": "github_issue",
        "text": "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |\n|-------------------------------+----------------------+----------------------+\n| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n|===============================+======================+======================|\n|   0  Tesla P100-SXM2...  Off  | 00000000:05:00.0 Off |                    0 |\n| N/A   36C    P0    41W / 300W |  12799MiB / 16280MiB |      0%      Default |\n+-------------------------------+----------------------+----------------------+\n                                                                               \n+-----------------------------------------------------------------------------+\n| Processes:                                                       GPU Memory |\n|  GPU       PID   Type   Process name                             Usage      |\n|=============================================================================|\n+-----------------------------------------------------------------------------+",
        "answer": {
            "command": "nvidia-smi (default table, driver 410)",
            "processes": [],
            "pid_used_mib": [],
            "note": "12799 MiB of 16280 MiB in use and no process listed (a container or another namespace holds it): the Processes section is empty, without 'No running processes found'",
        },
    },
    {
        "id": "own-apps-003",
        "source_url": "https://github.com/ai4d-iasc/trixie/issues/92",
        "source_kind": "github_issue",
        "text": "+-----------------------------------------------------------------------------+\n| Processes:                                                                  |\n|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n|        ID   ID                                                   Usage      |\n|=============================================================================|\n|    0   N/A  N/A      1395      C   python                          25081MiB |\n+-----------------------------------------------------------------------------+\n\n***@***.*** ~]# ps -aux | grep 1395\nthomased  1395  1.7 14.4 89506440 28604880 pts/2 Tl May25 147:37 python train.py --model=TransformerSeq2Set --model_type=seq2set --times=1 --dataset=kp20k --device=cuda:0",
        "answer": {
            "command": "nvidia-smi (default table with GI/CI columns), then ps",
            "processes": [{"gpu": 0, "pid": 1395, "used_mib": 25081}],
            "pid_used_mib": [[1395, 25081]],
            "per_gpu_count": {"0": 1},
            "note": "an admin's e-mail reply: another user's stopped (Tl) training process held 25 GiB of GPU 0 on a Slurm node, so every job placed there ran out of memory; the admin killed it and rebooted the node (a confirmed co-tenant)",
        },
    },
]
