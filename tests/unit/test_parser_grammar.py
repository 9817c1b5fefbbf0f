"""Parsers by grammar, not by example (issue 15): the framings real collections add around the
outputs the corpus holds. Each case takes a real corpus record and frames it the way a tool or a
person does (pdsh/clush prefixes, per-host headers, redactions, a pasted prompt, logger stamps),
then checks that the answer key still comes out."""

from __future__ import annotations

import dataclasses
import re

import pytest

from runbook.diagnosis import Evidence, classify
from runbook.evidence import launcher_log, nvsmi, xid
from runbook.evidence.gpu_health import NodeHealth
from runbook.evidence.log_filter import filter_lines
from runbook.evidence.oom_message import parse_all
from runbook.playbook import load
from runbook.slurm import text as slurm_text
from runbook.slurm.hostlist import expand
from tests.conftest import corpus_records

OOMS = {r["id"]: r for r in corpus_records("oom_messages.jsonl")}
XIDS = corpus_records("ops/xid_dmesg.jsonl")
APPS = corpus_records("ops/nvidia_smi_apps.jsonl")
SLURM = corpus_records("ops/slurm_outputs.jsonl")
PCI = re.compile(r"PCI:[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?")


def pairs(apps):
    return [[a.pid, a.used_mib] for a in apps if a.pid is not None and a.used_mib is not None]


# -- Xid ----------------------------------------------------------------------------------------
WITH_PCI = [r for r in XIDS if PCI.search(r["text"]) and r["answer"]["xids"]]


@pytest.mark.parametrize("redaction", ["PCI:...", "PCI:xxxx", "PCI:0000:XX:00"])
@pytest.mark.parametrize("rec", WITH_PCI, ids=[r["id"] for r in WITH_PCI])
def test_xid_with_the_device_redacted(rec, redaction):
    log = xid.parse(PCI.sub(redaction, rec["text"]))
    assert log.xids == rec["answer"]["xids"]
    assert all(e.pci is None for e in log.events if e.source == "xid")


def test_nvswitch_sxid_is_kept_apart_from_gpu_xids():
    # Format from NVIDIA's Fabric Manager user guide ("nvidia-nvswitchN: SXid (PCI:...): N, ...").
    gpu = next(r for r in XIDS if r["answer"]["xids"] == [79])
    text = (
        gpu["text"] + "\n[ 4167.365051] nvidia-nvswitch3: SXid (PCI:0000:c2:00.0): 20034, "
        "Fatal, Link 32 LTSSM Fault Up\n"
    )
    log = xid.parse(text)
    assert log.xids == [79] and log.sxids == [20034]
    assert [e.xid for e in log.hardware()] == [79]
    h = NodeHealth(node="gpu-01", kernel=log)
    doc = h.contract()
    assert [x["xid"] for x in doc["xids"]] == [79]
    assert doc["sxids"] == [
        {
            "sxid": 20034,
            "pci": "0000:c2:00.0",
            "severity": "fatal",
            "time": "4167.365051",
            "category": "fabric",
        }
    ]
    assert all("20034" not in r for r in h.gpu_fault_reasons())
    assert "fabric error" in h.fabric_notes()[0]


def test_a_kernel_log_of_sxids_alone_has_the_fabric_category():
    """Issue 34: a node whose kernel log holds only NVSwitch SXid lines was given no category."""
    log = xid.parse(
        "[Mon Nov 24 10:00:00 2026] nvidia-nvswitch2: SXid (PCI:0000:c3:00.0): 12028, Non-fatal, "
        "Link 28 egress non-posted PRIV error (First)\n"
    )
    assert log.xids == [] and log.sxids == [12028] and log.category() == "fabric"
    assert xid.parse("").category() is None


def test_sxid_alone_is_no_gpu_fault():
    log = xid.parse(
        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 47 egress "
        "non-posted PRIV error (First)"
    )
    assert log.xids == [] and log.category() == "fabric" and log.hardware() == []


# -- compute apps -------------------------------------------------------------------------------
WITH_APPS = [r for r in APPS if r["answer"]["pid_used_mib"]]


def _frames(text: str) -> dict[str, str]:
    lines = text.splitlines()
    return {
        "pdsh": "\n".join(f"gpu-01: {ln}" for ln in lines),
        "header": "== gpu-01 ==\n" + text,
        "tail": "==> gpu-01 <==\n" + text,
        "clush-b": "---------------\ngpu-[01-02] (2)\n---------------\n" + text,
        "ansible": "gpu-01 | CHANGED | rc=0 >>\n" + text,
    }


@pytest.mark.parametrize("frame", ["pdsh", "header", "tail", "clush-b", "ansible"])
@pytest.mark.parametrize("rec", WITH_APPS, ids=[r["id"] for r in WITH_APPS])
def test_compute_apps_from_a_parallel_shell(rec, frame):
    apps = nvsmi.parse_compute_apps(_frames(rec["text"])[frame])
    assert pairs(apps) == rec["answer"]["pid_used_mib"]
    assert {a.host for a in apps} == {"gpu-[01-02]" if frame == "clush-b" else "gpu-01"}


@pytest.mark.parametrize("rec", WITH_APPS, ids=[r["id"] for r in WITH_APPS])
def test_compute_apps_of_two_nodes_stay_apart(rec):
    lines = rec["text"].splitlines()
    # pdsh interleaves the nodes' lines
    text = "\n".join(f"{h}: {ln}" for ln in lines for h in ("gpu-01", "gpu-02"))
    apps = nvsmi.parse_compute_apps(text)
    want = rec["answer"]["pid_used_mib"]
    assert pairs([a for a in apps if a.host == "gpu-01"]) == want
    assert pairs([a for a in apps if a.host == "gpu-02"]) == want
    # Only the OOM node's processes can be its co-tenants.
    h = NodeHealth(node="gpu-02", apps=apps)
    assert {a.host for a in h.foreign_apps(None)} == {"gpu-02"}


def test_a_title_between_rules_is_not_a_node():
    """dshbak and clush -b put a bare node name between rules (captured from the tools:
    tests/data/corpus/ops/multihost.jsonl); a word without a number there is a single node's
    own title and the output stays one part."""
    from runbook.evidence import multihost

    titled = "------\nSummary\n------\nGPU 0 fine"
    assert multihost.split(titled) == [(None, titled)]
    named = "------\ngpu-01\n------\nGPU 0 fine\n------\ngpu-[02,04]\n------\nGPU 1 fine"
    assert multihost.split(named) == [("gpu-01", "GPU 0 fine"), ("gpu-[02,04]", "GPU 1 fine")]


def test_kernel_events_of_several_nodes_count_only_on_their_node():
    rec = next(r for r in corpus_records("ops/xid_dmesg.jsonl") if r["id"] == "xid-proton-9426-31")
    folded = "----------------\ngpu-[01,03]\n----------------\n" + rec["text"]
    log = xid.parse(folded)
    assert {e.host for e in log.events} == {"gpu-[01,03]"} and log.xids
    assert NodeHealth(node="gpu-03", kernel=log).contract()["xids"]
    assert NodeHealth(node="gpu-02", kernel=log).contract()["xids"] == []
    # A parallel shell may give the full name where Slurm gives the short one.
    fqdn = xid.parse("\n".join(f"gpu-02.cluster.local: {ln}" for ln in rec["text"].splitlines()))
    assert NodeHealth(node="gpu-02", kernel=fqdn).contract()["xids"]
    # A single node's log (no framing) is that node's, whatever it is called.
    assert NodeHealth(node="gpu-02", kernel=xid.parse(rec["text"])).contract()["xids"]


def test_concatenated_csv_repeats_its_header():
    rec = next(r for r in APPS if r["id"] == "apps-dcgmexporter-94-uuid-name-csv")
    once = nvsmi.parse_compute_apps(rec["text"])
    twice = nvsmi.parse_compute_apps(rec["text"] + "\n" + rec["text"])
    assert len(once) >= 2 and len(twice) == 2 * len(once)
    assert [(a.gpu, a.name) for a in twice] == [(a.gpu, a.name) for a in once] * 2


# -- hostlist -----------------------------------------------------------------------------------
def test_hostlist_whitespace_is_a_separator_as_in_slurm():
    # Slurm's hostlist_create() splits on tab, comma and space (src/common/hostlist.c).
    assert expand(" gpu-01, gpu-02 ") == ["gpu-01", "gpu-02"]
    assert expand("gpu-[01 - 02] cpu1\tcpu2") == ["gpu-01", "gpu-02", "cpu1", "cpu2"]


# -- Slurm --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt",
    [
        "user@login01:~$ sacct -j 1 -P -o JobID,State,ExitCode,NodeList",
        "[me@login1 ~]$ sacct -P -j 1",
        "# sacct --parsable2 -j 1",
        "$ sacct -P",
    ],
)
@pytest.mark.parametrize("rec", SLURM, ids=[r["id"] for r in SLURM])
def test_slurm_output_pasted_with_its_prompt(rec, prompt):
    a = rec["answer"]
    plain = slurm_text.parse(rec["text"])
    got = slurm_text.parse(f"{prompt}\n{rec['text']}\nuser@login01:~$ ")
    assert (got.state, got.exit_code, got.nodes) == (
        a.get("state"),
        a.get("exit_code"),
        a.get("nodes"),
    )
    assert got.jobs == plain.jobs and got.rows == plain.rows


@pytest.mark.parametrize("quote", ["> ", ">", ">> "])
@pytest.mark.parametrize("rec", SLURM, ids=[r["id"] for r in SLURM])
def test_slurm_output_quoted_line_by_line_with_a_note_after(rec, quote):
    # A mail or forum quote on every line of the output, the person's own words after it.
    plain = slurm_text.parse(rec["text"])
    quoted = "\n".join(quote + ln for ln in rec["text"].splitlines())
    got = slurm_text.parse(f"$ sacct -j 1\n{quoted}\n512 / 1024 = 0.5, so half a GiB")
    assert (got.state, got.exit_code, got.nodes) == (plain.state, plain.exit_code, plain.nodes)
    assert got.jobs == plain.jobs and got.rows == plain.rows


def test_two_sacct_tables_pasted_one_after_the_other_are_two_jobs():
    one = (
        "JobID           JobName      State ExitCode \n"
        "------------ ---------- ---------- -------- \n"
        "{id}              train     FAILED      1:0 \n"
        "{id}.batch        batch     FAILED      1:0 "
    )
    text = f"61:\n$ sacct -j 11\n{one.format(id=11)}\n\n63:\n$ sacct -j 12\n{one.format(id=12)}"
    got = slurm_text.parse(text)
    assert [(j["jobid"], j["state"]) for j in got.jobs] == [("11", "FAILED"), ("12", "FAILED")]
    assert got.job_id is None  # two jobs: a list, not one verdict


def test_an_empty_last_cell_does_not_shift_the_row():
    # The allocation row's MaxRSS is empty: its last cell is Elapsed, not MaxRSS.
    text = (
        "JobID         Partition      State ExitCode    Elapsed     MaxRSS \n"
        "------------ ---------- ---------- -------- ---------- ---------- \n"
        "40516253     optane_low  COMPLETED      0:0 1-15:13:13            \n"
        "40516253.ba+             COMPLETED      0:0 1-15:13:13 549483116K "
    )
    got = slurm_text.parse(text)
    assert (got.job_id, got.state, got.exit_code) == ("40516253", "COMPLETED", "0:0")
    assert got.rows[0]["partition"] == "optane_low" and got.rows[1]["max_rss"] == "549483116K"


# -- launcher logs ------------------------------------------------------------------------------


def test_the_failing_rank_ran_where_srun_says_its_task_ran():
    msg = OOMS["oom-001"]["text"].splitlines()[0]
    one = launcher_log.scan(f"[rank3]: {msg}\nsrun: error: gpu-07: task 3: Exited with exit code 1")
    assert one.first_failure.ranks == [3] and one.first_failure.node == "gpu-07"
    # srun's range line places every task in it on that node.
    spanned = launcher_log.scan(
        f"[rank3]: {msg}\nsrun: error: gpu-07: tasks 0-3: Exited with exit code 1"
    )
    assert spanned.first_failure.node == "gpu-07"
    # Two lines placing task 3 on two nodes say nothing sure: the node stays unknown.
    both = launcher_log.scan(
        f"[rank3]: {msg}\nsrun: error: gpu-07: task 3: Exited with exit code 1\n"
        "srun: error: gpu-08: task 3: Exited with exit code 1"
    )
    assert both.first_failure.node is None


def test_srun_complement_names_the_task_that_failed_first_and_its_node():
    text = (
        "srun: error: gpu-07: tasks 0-57,59-63: Terminated\nsrun: Force Terminated StepId=1234.0\n"
    )
    rep = launcher_log.scan(text)
    assert rep.suspect_ranks == [58] and rep.first_failure.ranks == [58]
    assert rep.first_failure.node == "gpu-07"


def test_suspect_node_from_the_layout_not_from_the_first_consequence():
    text = (
        "slurmstepd: error: *** STEP 5.0 ON gpu-01 CANCELLED AT 2024-01-01T00:00:00 ***\n"
        "srun: error: gpu-01: tasks 0-3: Terminated\n"
        "srun: error: gpu-02: tasks 4-5,7: Terminated\n"
    )
    rep = launcher_log.scan(text, nodes=["gpu-01", "gpu-02"], tasks_per_node=4)
    assert rep.first_failure.ranks == [6] and rep.first_failure.node == "gpu-02"


def test_srun_verdict_whose_tag_was_cut_in_the_paste_still_reads():
    # own-launch-024: the paste lost the "s" of "srun:"; the line's shape is srun's own.
    rep = launcher_log.scan(
        "run: error: nid00018: tasks 0-3: Killed\nsrun: Terminating job step 7.4\n"
    )
    assert rep.failing_ranks == [0, 1, 2, 3] and rep.first_failure.node == "nid00018"
    # A line with no task list after the node is not srun's.
    assert launcher_log.scan("pip: error: resolver: tasks: none\n").failing_ranks == []


@pytest.mark.parametrize(
    "line, rank, node, signal",
    [
        (
            "mpirun noticed that process rank 18596 with PID 1035144 on node b3168 exited on "
            "signal 9 (Killed).",
            18596,
            "b3168",
            "SIGKILL",
        ),
        (
            "mpiexec noticed that process rank 3 with PID 0 on node cn-12 exited on signal 11 "
            "(Segmentation fault).",
            3,
            "cn-12",
            "SIGSEGV",
        ),
        (
            "prterun noticed that process rank 0 with PID 77 on node n1 exited on signal 7.",
            0,
            "n1",
            "SIGBUS",
        ),
        (
            "prterun noticed that process rank 0 with PID 77 on node n1 exited on signal 4.",
            0,
            "n1",
            "signal 4",  # a signal without a name here is still reported, by number
        ),
    ],
)
def test_open_mpi_names_the_rank_and_node_it_saw_die(line, rank, node, signal):
    rep = launcher_log.scan(line + "\n")
    ff = rep.first_failure
    assert rep.failing_ranks == [rank] and (ff.ranks, ff.node, ff.signal) == ([rank], node, signal)


def test_a_cgroup_oom_kill_takes_the_task_and_node_from_the_launchers_sigkill():
    # own-launch-025: slurmstepd names neither task nor node; Open MPI saw the SIGKILL.
    text = (
        "mpirun noticed that process rank 12 with PID 1035144 on node b3168 exited on signal 9 "
        "(Killed).\n"
        "slurmstepd: error: Detected 88 oom_kill events in StepId=1103245.batch. Some of the step "
        "tasks have been OOM Killed.\n"
    )
    ff = launcher_log.scan(text).first_failure
    assert (ff.kind, ff.ranks, ff.node) == ("host_oom", [12], "b3168")
    # A SIGTERM (a teardown) is not the OOM killer's: it lends nothing.
    term = text.replace("signal 9 (Killed)", "signal 15 (Terminated)")
    ff = launcher_log.scan(term).first_failure
    assert (ff.kind, ff.ranks, ff.node) == ("host_oom", [], None)


@pytest.mark.parametrize(
    "text, ranks, node, signal, code",
    [
        # MPICH Hydra, with and without the RANK field (own-launch-033..035).
        (
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            "=   RANK 6 PID 2447372 RUNNING AT node0009\n=   KILLED BY SIGNAL: 9 (Killed)\n",
            [6],
            "node0009",
            "SIGKILL",
            None,
        ),
        (
            "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
            "=   PID 92248 RUNNING AT fzh-desktop\n=   EXIT CODE: 9\n",
            [],
            "fzh-desktop",
            None,
            9,
        ),
        # Open MPI's summary, 4.x and 5.x process names, a heading glued by Markdown.
        (
            "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
            "the job to be terminated. The first process to do so was:\n\n"
            "  Process name: [[6341,1],3]\n  Exit code:    1\n",
            [3],
            None,
            None,
            1,
        ),
        ("  Process name: [prterun-gpu01-2217@1,5]\n##   Exit code:    2\n", [5], None, None, 2),
        # Open MPI's "exiting improperly", its node on the wrapped line (own-launch-039..041).
        (
            "mpirun has exited due to process rank 1 with PID 4017 on\n"
            "node clsockeyev1 exiting improperly. There are three reasons this could occur:\n",
            [1],
            "clsockeyev1",
            None,
            None,
        ),
    ],
    ids=["hydra-rank", "hydra-no-rank", "ompi-summary-4x", "ompi-summary-5x", "ompi-improper"],
)
def test_mpi_launchers_name_the_process_that_ended_first(text, ranks, node, signal, code):
    rep = launcher_log.scan(text)
    ff = rep.first_failure
    assert rep.failing_ranks == ranks
    assert (ff.ranks, ff.node, ff.signal) == (ranks, node, signal)
    assert [e.exit_code for e in rep.events if e.source in ("mpirun", "mpiexec")] == [code]


def test_mp_spawn_names_the_process_and_its_oom():
    # own-launch-043..046: spawn's index is the process's rank within the node.
    for line, sig, code in [
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with signal SIGKILL",
            "SIGKILL",
            None,
        ),
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 3 terminated with exit code 1",
            None,
            1,
        ),
    ]:
        rep = launcher_log.scan(line + "\n")
        ev = [e for e in rep.events if e.source == "spawn"]
        assert rep.failing_ranks == [3] and [(e.signal, e.exit_code) for e in ev] == [(sig, code)]
    # The OOM printed under "-- Process 1 terminated with the following error:" is process 1's.
    text = (
        "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
        "-- Process 1 terminated with the following error:\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 9, in main_worker\n'
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 23.70 "
        "GiB total capacity; 20.26 GiB already allocated; 1.34 GiB free; 21.31 GiB reserved in total "
        "by PyTorch)\n"
    )
    rep = launcher_log.scan(text)
    assert [m.rank for m in rep.ooms] == [1]
    assert rep.first_failure.kind == "oom" and rep.first_failure.ranks == [1]


def test_a_blank_or_fence_line_does_not_join_its_neighbours():
    # own-oom-282: a bare HIP message opening a code fence, after a line of prose; the fence line
    # is stripped to nothing, and the lines on either side must not run together ("xHIP out").
    msg = (
        "HIP out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total capacity of 15.98 GiB "
        "of which 9.51 GiB is free."
    )
    for between in ("```", "", "> "):
        found = parse_all(f"512x512 do not work\n{between}\n{msg}\n```")
        assert [(m.device, m.tried_mib) for m in found] == [("HIP", 12288.0)], between


def test_composer_launcher_names_the_rank_that_crashed_first():
    # own-launch-047..049 hold the launcher's lines alone; the teardown below is assembled from
    # the wording composer.cli.launcher prints (Killing..., the crashed rank's STDERR block, the
    # closing summary), with the OOM of own-oom-279 inside rank 2's block.
    text = (
        "ERROR:composer.cli.launcher:Rank 2 crashed with exit code 1.\n"
        "INFO:composer.cli.launcher:Killing global rank 0 (PID 4100) with SIGTERM\n"
        "INFO:composer.cli.launcher:Killing global rank 1 (PID 4101) with SIGTERM\n"
        "INFO:composer.cli.launcher:Killing global rank 3 (PID 4103) with SIGTERM\n"
        "Global rank 2 (PID 4102) exited with code 1\n"
        "----------Begin global rank 2 STDERR----------\n"
        "Traceback (most recent call last):\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 2 has a total "
        "capacity of 79.19 GiB of which 2.06 MiB is free. Including non-PyTorch memory, this process "
        "has 75.45 GiB memory in use. Of the allocated memory 73.58 GiB is allocated by PyTorch, and "
        "279.13 MiB is reserved by PyTorch but unallocated.\n"
        "----------End global rank 2 STDERR----------\n"
        "ERROR:composer.cli.launcher:Global rank 0 (PID 4100) exited with code -15\n"
    )
    rep = launcher_log.scan(text)
    assert [m.rank for m in rep.ooms] == [2]
    assert rep.failing_ranks == [2]
    assert (rep.first_failure.kind, rep.first_failure.ranks) == ("oom", [2])
    killed = [e.rank for e in rep.events if e.source == "composer" and e.consequence]
    assert killed == [0, 1, 3, 0]
    # The node-side filter keeps the block's Begin/End lines, so a long traceback between the
    # Begin line and the OOM, dropped from the excerpt, does not lose whose OOM it is.
    frames = "".join(f'  File "train.py", line {n}, in step\n' for n in range(40))
    long = text.replace("Traceback (most recent call last):\n", "Traceback:\n" + frames)
    kept = launcher_log.scan(filter_lines(long.splitlines()).text())
    assert [m.rank for m in kept.ooms] == [2] and kept.failing_ranks == [2]
    # Without the captured output: the crash line names the rank, a negative code the signal.
    ff = launcher_log.scan("ERROR:composer.cli.launcher:Rank 2 crashed with exit code -7.\n")
    assert (ff.first_failure.ranks, ff.first_failure.signal) == ([2], "SIGBUS")


def test_lightning_launcher_names_the_child_that_died():
    # Lightning's _ChildProcessObserver wording (lightning/fabric/strategies/launchers/
    # subprocess_script.py), under pytest's live-log prefix and, wrapped, under its INFO prefix.
    text = (
        "INFO     lightning.fabric.utilities.distributed:distributed.py:282 Initializing "
        "distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
        "INFO     lightning.fabric.strategies.launchers.subprocess_script:subprocess_script.py:224 "
        "[rank: 1] Child process with PID 2977 terminated with code 4. Forcefully terminating all "
        "other processes to avoid zombies \U0001f9df\n"
        "Killed\n"
    )
    rep = launcher_log.scan(text)
    assert rep.failing_ranks == [1]
    assert (rep.first_failure.kind, rep.first_failure.ranks) == ("exit", [1])
    rep = launcher_log.scan(
        "INFO: [rank: 1] Child process with PID 9487 terminated with code -9.\n"
        "      Forcefully terminating all other processes to avoid zombies \U0001f9df\n"
    )
    assert (rep.first_failure.ranks, rep.first_failure.signal) == ([1], "SIGKILL")


@pytest.mark.parametrize(
    "line, size",
    [
        # Linux: posix_memalign's ENOMEM (as captured in tests/data/corpus/captured_lightning.jsonl).
        (
            "[rank2]: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator:"
            " can't allocate memory: you tried to allocate 195696230400 bytes. Error code 12 "
            "(Cannot allocate memory)",
            "182.26 GiB",
        ),
        # Windows wording, older c10.
        (
            "[rank2]: RuntimeError: [enforce fail at ..\\c10\\core\\CPUAllocator.cpp:72] data. "
            "DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes. Buy "
            "new RAM!",
            "1.00 GiB",
        ),
    ],
)
def test_a_refused_host_allocation_is_host_memory_on_its_rank(line, size):
    rep = launcher_log.scan(f"[rank1]: Traceback (most recent call last):\n{line}\n")
    ff = rep.first_failure
    assert (ff.kind, ff.ranks, rep.failing_ranks) == ("host_oom", [2], [2])
    assert size in ff.why and "RealMemory" in ff.why
    # Prose naming the allocator is not a failure; a CUDA OOM on another rank still comes first.
    assert launcher_log.scan("the DefaultCPUAllocator: can't allocate memory error\n").events == []
    cuda = (
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 "
        "has a total capacity of 79.10 GiB of which 2.00 MiB is free.\n"
    )
    assert launcher_log.scan(cuda + line + "\n").first_failure.ranks == [0]


def test_composer_log_prefix_names_the_rank():
    line = (
        "2024-08-30 11:06:12,920: rank3[208865][MainThread]: ERROR: x: torch.cuda.OutOfMemoryError: "
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 3; 23.65 GiB total capacity; 22.80 GiB "
        "already allocated; 9.44 MiB free; 23.07 GiB reserved in total by PyTorch)"
    )
    assert [m.rank for m in parse_all(line)] == [3]


def test_slurmstepd_tagged_with_its_node_names_it():
    text = (
        "slurmstepd-midway2-0320: error: Detected 1 oom-kill event(s) in step 3361579.batch "
        "cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.\n"
    )
    ff = launcher_log.scan(text).first_failure
    assert (ff.kind, ff.node) == ("host_oom", "midway2-0320")


@pytest.mark.parametrize(
    "prefix",
    [
        "2024-11-20 14:37:16 ",
        "[2024-11-20T14:37:16.123Z] | ",
        "gpu-01: ",
        "gpu-01: [rank3]: ",
        "[1,3]<stderr>:",
        "rank3: ",
    ],
)
def test_oom_message_under_collector_prefixes_keeps_its_numbers(prefix):
    rec = OOMS["oom-016"]
    want = rec["fields"]
    text = "\n".join(prefix + ln for ln in rec["text"].splitlines())
    m = parse_all(text)[0]
    assert m.tried_mib == pytest.approx(want["tried_mib"], rel=0.005)
    assert m.total_mib == pytest.approx(want["total_mib"], rel=0.005)
    assert m.free_mib == pytest.approx(want["free_mib"], rel=0.005)
    if "rank3" in prefix or "3]<" in prefix:
        assert m.rank == 3


def test_hard_wrapped_message_with_a_prefix_on_every_line():
    text = (
        "gpu-01: [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 "
        "GiB. GPU 3 has a total capacity of 15.\n"
        "gpu-01: [rank3]: 75 GiB of which 98.00 MiB is free."
    )
    m = parse_all(text)[0]
    assert m.rank == 3 and m.total_mib == pytest.approx(15.75 * 1024)


@pytest.mark.parametrize("rule", ["\u2502", "\u2503", "\u2551"])
def test_a_message_inside_a_terminal_box_reads_through_its_rules(rule):
    """A box a terminal tool draws (a rich traceback, a TUI pane): a rule opens and closes every
    line, and the cut at the box's width falls inside words (own-oom-328: 'f\u2502' then 'ree')."""
    rec = OOMS["oom-001"]
    body = rec["text"].splitlines()[0]
    lines = [body[i : i + 60] for i in range(0, len(body), 60)]
    boxed = "\n".join(f"{rule} {ln}{rule}" for ln in lines)
    m = parse_all(boxed)[0]
    want = rec["fields"]
    assert m.tried_mib == pytest.approx(want["tried_mib"], rel=0.005)
    assert m.free_mib == pytest.approx(want["free_mib"], rel=0.005)
    assert m.allocated_by_pytorch_mib == pytest.approx(want["allocated_by_pytorch_mib"], rel=0.005)


def test_hardware_text_in_a_launcher_log_is_flagged_not_trusted():
    text = (
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call\n"
    )
    d = classify(Evidence(launch=launcher_log.scan(text)), load().thresholds)
    assert d.verdict == "not_oom"  # a job's output cannot drain a node
    assert d.log_hardware == ["RuntimeError: CUDA error: uncorrectable ECC error encountered"]
    assert any("hardware errors" in r and "not proof" in r for r in d.reasons)


# The sizes of an OOM message are named by the words around them (oom_numbers.SIZED): the same
# words whatever the spacing, case or wrapping, and never a word that only starts the same way.
@pytest.mark.parametrize(
    "text,field,want",
    [
        (
            "Tried to allocate 2.00 GiB (GPU 0; 8 GiB total capacity; 1 GiB free; 3 GiB cached)",
            "reserved_unallocated_mib",
            3072.0,
        ),
        (
            "Tried to allocate 2.00 GiB (GPU 0; 8 GiB total capacity; 1 GiB freed; 3 GiB cached)",
            "free_mib",
            None,
        ),
        (
            "CUDA out of memory. TRIED TO\nALLOCATE 2.00 GiB (GPU 0; 8 GiB TOTAL CAPACITY; 1 GiB free)",
            "tried_mib",
            2048.0,
        ),
        ("Tried toallocate2.00GiB (GPU 0; 8 GiB totalcapacity; 1 GiB free)", "total_mib", 8192.0),
        (
            "CUDA out of memory. Tried to allocate 2 GiB. GPU  has a total capacty of 8 GiB of which"
            " 1 GiB is free.",
            "total_mib",
            8192.0,
        ),
        (
            "CUDA out of memory. Tried to allocate 2 GiB. GPU 0 has a total capacity of 8 GiB of which"
            " 1 GiB is free. Including non-PyTorch memory, this process has 6 GiB memory in use.",
            "other_process_pids",
            [],
        ),
        (
            "CUDA out of memory. Tried to allocate 2 GiB. GPU 0 has a total capacity of 8 GiB of which"
            " 1 GiB is free. Process 77 has 1 GiB memory in use. this process has 6 GiB memory in use.",
            "other_process_pids",
            [77],
        ),
    ],
    ids=[
        "cached",
        "freed-is-not-free",
        "upper-case-wrapped",
        "glued",
        "no-index-typo",
        "this-process-is-not-another",
        "another-process",
    ],
)
def test_oom_sizes_are_named_by_their_words(text, field, want):
    (m,) = parse_all(text)
    assert getattr(m, field) == want


@pytest.mark.parametrize(
    "log,want",
    [
        ("srun: error: nid002888: tasks 0-57,59-63: Terminated\n", [58]),
        # Two nodes, cyclic: each line leaves the other node's tasks out; together none is missing.
        (
            "srun: error: a1: tasks 0,2,4,6: Terminated\nsrun: error: a2: tasks 1,3,5,7: Terminated\n",
            [],
        ),
        # One node's line of a cyclic layout alone: half the tasks missing is not a failure.
        ("srun: error: a1: tasks 0,2,4,6: Terminated\n", []),
        # A rank that says why it failed wins over inference.
        (
            "[rank3]: RuntimeError: boom\nsrun: error: a1: task 3: Exited with exit code 1\n"
            "srun: error: a1: tasks 0-1,4-7: Terminated\n",
            [3],
        ),
    ],
    ids=["complement", "cyclic-two-lines", "cyclic-one-line", "named-rank"],
)
def test_a_task_left_out_of_srun_teardown_is_the_one_that_failed(log, want):
    assert sorted(launcher_log.scan(log).failing_ranks) == want


def test_ray_memory_monitor_kills_are_host_ram_with_the_node_by_ip():
    # Ray's memory monitor (Ray Train jobs): the task's error, then the detail line with the IP.
    log = (
        "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
        "Memory on the node (IP: 10.1.2.3, ID: 9f) where the task (task ID: 41, name=train, "
        "pid=548, memory used=12.18GB) was running was 31.91GB / 33.28GB (0.958), which exceeds "
        "the memory usage threshold of 0.95. Ray killed this worker (ID: 0f)"
    )
    ff = launcher_log.scan(log).first_failure
    assert ff is not None and (ff.kind, ff.node) == ("host_oom", "10.1.2.3")
    assert "Ray's memory monitor" in ff.why
    d = classify(Evidence(launch=launcher_log.scan(log)), load().thresholds)
    assert d.verdict == "host_oom" and "Ray's memory monitor" in d.reasons[0]


def test_a_user_exception_wrapped_by_ray_is_not_a_host_oom():
    # RayTaskError(OutOfMemoryError) wraps the task's own exception (torch's, usually): without
    # the CUDA message it says nothing about host memory.
    log = (
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.update_actor() "
        "(pid=118848, ip=10.130.71.7, actor_id=b2ba)"
    )
    ff = launcher_log.scan(log).first_failure
    assert ff is None or ff.kind != "host_oom"


def test_cgroup_oom_kill_keeps_its_own_reason():
    log = "slurmstepd: error: Detected 1 oom_kill event in StepId=7.batch. Some of the step tasks"
    ff = launcher_log.scan(log).first_failure
    assert ff is not None and ff.kind == "host_oom" and "cgroup" in ff.why


def test_a_message_retyped_in_lower_case_is_read_by_its_size_and_gpu():
    # detectron2#2457's shape: lower case, sizes glued to units and to the next word.
    text = (
        "cuda out of memory, tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity;1.33GiB already "
        "allocated; 43.5MiB free;1.36 GiB reserved in total by Pytorch)"
    )
    (m,) = parse_all(text)
    assert (m.tried_mib, m.free_mib, m.total_mib) == (50.0, 43.5, 1.96 * 1024)
    # Prose in lower case with no size after it is not a message.
    assert parse_all("the trainer tried to allocate more (gpu 0 was busy)") == []


@pytest.mark.parametrize("mark", ["**", "*", "`", "__"])
def test_markup_around_a_figure_does_not_hide_it(mark):
    # seamless_communication#341's shape: the reporter put the absurd figure in bold.
    figure = f"{mark}17179869184.00 GiB{mark}" if mark != "__" else "17179869184.00 GiB"
    text = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 318.00 MiB. GPU 0 has "
        "a total capacty of 6.00 GiB of which 0 bytes is free. Including non-PyTorch memory, this "
        f"process has {figure} memory in use. Of the allocated memory 5.00 GiB is allocated by "
        "PyTorch, and 271.88 MiB is reserved by PyTorch but unallocated."
    )
    (m,) = parse_all(text)
    assert m.this_process_mib == 17179869184.0 * 1024 and m.allocated_by_pytorch_mib == 5120.0
    assert m.text == text  # the message is quoted as written, markup and all


def test_a_message_retyped_with_out_of_the_memory_is_read():
    (m,) = parse_all("RuntimeError: CUDA out of the memory. Tried to allocate 360.00 MiB")
    assert (m.family, m.tried_mib, m.format) == ("caching", 360.0, "old")
    # "out of the memory" in prose, with no device before it, is no message.
    assert parse_all("the job ran out of the memory it was given") == []


def test_an_application_naming_the_error_in_prose_adds_no_message():
    # Real-ESRGAN prints its advice after every message.
    text = (
        "Error CUDA out of memory. Tried to allocate 1.34 GiB (GPU 0; 3.94 GiB total capacity; "
        "2.23 GiB already allocated; 479.00 MiB free; 2.38 GiB reserved in total by PyTorch)\n"
        "If you encounter CUDA out of memory, try to set --tile with a smaller number."
    )
    (m,) = parse_all(text)
    assert (m.tried_mib, m.free_mib) == (1.34 * 1024, 479.0)
    # A message cut after its first words is still one when nothing reads as prose before it.
    assert [m.family for m in parse_all("RuntimeError: CUDA out of memory")] == ["caching"]
    assert parse_all("Getting CUDA out of memory when training on two GPUs") == []


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: CUDA failed with error out of memory",  # CTranslate2
        "cuda failed with error 2 out of memory. use CUDA_LAUNCH_BLOCKING=1",  # spconv
        "Error: CUDA error 2 'out of memory' - src/tensors/gpu/device.cu:38: cudaMalloc(&d, n)",
        "cudaMalloc(&__ptr, __size)\n/src/kmcuda.cc:456 -> out of memory\nfailed to allocate 36 bytes",
        "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory",
        "cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 80384 bytes (total 57 bytes)",
    ],
)
def test_a_librarys_cuda_error_string_is_a_runtime_oom(text):
    (m,) = parse_all(text)
    assert (m.family, m.format, m.tried_mib) == ("cuda_error", "cuda_runtime", None)


def test_an_ellipsis_after_the_request_is_a_cut_not_the_sentence_format():
    # own-oom-302: "CUDA out of memory.Tried to allocate 20.00 MiB..." under RuntimeError.
    (m,) = parse_all("RuntimeError: CUDA out of memory.Tried to allocate 20.00 MiB...")
    assert (m.format, m.allocator_conf, m.tried_mib) == ("old", None, 20.0)
    (m,) = parse_all("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.")
    assert m.format == "new"


def test_cuda_error_without_a_number_in_prose_is_no_message():
    # A library prints the runtime's error with its number or after "failed with error"; the
    # bare words are a person's sentence.
    assert parse_all("the cuda error out of memory happened again") == []


def test_a_sentence_cut_before_its_end_keeps_the_figure_its_opening_words_name():
    text = (
        "CUDA out of memory. Tried to allocate 28.00 MiB. GPU 1 has a total capacity of 8.00 GiB "
        "of which 0 bytes is free. Of the allocated memory 6.93 GiB is alloca"
    )
    (m,) = parse_all(text)
    assert (m.gpu, m.allocated_by_pytorch_mib, m.free_mib) == (1, 6.93 * 1024, 0.0)


def test_old_format_retyped_without_its_parenthesis_keeps_the_gpu():
    text = (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB \n"
        "GPU 3; 8.00 GiB total capacity; 7.20 GiB already allocated; 0 bytes free; 7.30 GiB "
        "reserved in total by PyTorch"
    )
    (m,) = parse_all(text)
    assert (m.format, m.gpu, m.total_mib, m.free_mib) == ("old", 3, 8192.0, 0.0)


def test_a_worker_tag_naming_its_rank_gives_the_messages_rank():
    line = (
        "(VllmWorker rank=1 pid=2978) ERROR 03-19 07:27:53 [multiproc_executor.py:375] "
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 1 has a total "
        "capacity of 23.57 GiB of which 605.88 MiB is free."
    )
    (m,) = parse_all(line)
    assert (m.rank, m.gpu, m.tried_mib) == (1, 1, 1.74 * 1024)
    # A tag that names no rank lends none.
    (m,) = parse_all(line.replace("rank=1 ", ""))
    assert m.rank is None


@pytest.mark.parametrize(
    "text, fmt, conf",
    [
        # Only the first sentence: both formats start so. The exception name is the evidence.
        ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB", "old", None),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB", "new", None),
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
            "old",
            None,
        ),
        ("threw `CUDA out of memory. Tried to allocate 20.00 MiB`.", "old", None),
        # The sentence format's first sentence ends at the size; a title cut there still says so.
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GP",
            "new",
            True,
        ),
        (
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of",
            "new",
            True,
        ),
        # The old format's " (GPU 0;" settles it whatever the exception.
        (
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 4",
            "old",
            None,
        ),
    ],
)
def test_a_first_sentence_alone_claims_no_format_it_cannot_see(text, fmt, conf):
    (m,) = parse_all(text)
    assert (m.format, m.allocator_conf) == (fmt, conf)


# -- every record, framed the ways outputs are passed on -----------------------------------------
def _framed_cases():
    from tests import corpus_checks as cc
    from tests.conftest import corpus_dir

    for base in (corpus_dir(), cc.OWN):
        for name, kind in cc.FILES.items():
            if kind == "hostlist":
                continue
            for rec in cc.read(base / name):
                if not cc.CHECKS[kind](rec):  # records the parser reads right unframed
                    yield kind, rec


FRAMES = {
    # A forum or mail reply quotes the output line by line.
    "quoted": lambda t: "\n".join("> " + ln for ln in t.split("\n")),
    # A terminal capture keeps its colour codes.
    "coloured": lambda t: "\n".join(f"\x1b[1;31m{ln}\x1b[0m" for ln in t.split("\n")),
    # A file from Windows.
    "crlf": lambda t: t.replace("\n", "\r\n"),
    # An issue or chat paste inside a Markdown code block.
    "fenced": lambda t: f"```console\n{t}\n```",
}
FRAMED = list(_framed_cases())


@pytest.mark.parametrize("frame", sorted(FRAMES))
@pytest.mark.parametrize("kind, rec", FRAMED, ids=[r["id"] for _, r in FRAMED])
def test_every_record_reads_the_same_quoted_coloured_or_with_crlf(kind, rec, frame):
    from tests import corpus_checks as cc

    assert cc.CHECKS[kind](dict(rec, text=FRAMES[frame](rec["text"]))) == []


def _terminal_wrap(text: str, width: int) -> str:
    """A terminal (or a log viewer) cuts every line at its width, inside words and numbers."""
    return "\n".join(
        ln[i : i + width] for ln in text.split("\n") for i in range(0, max(len(ln), 1), width)
    )


def _editor_wrap(text: str, width: int) -> str:
    """An editor or a mail client re-flows at word ends and drops the space it breaks at."""
    import textwrap

    return "\n".join(
        "\n".join(textwrap.wrap(ln, width, break_long_words=False)) for ln in text.split("\n")
    )


WRAPS = {"terminal-80": lambda t: _terminal_wrap(t, 80), "editor-70": lambda t: _editor_wrap(t, 70)}
OOM_FRAMED = [rec for kind, rec in FRAMED if kind == "oom"]


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("rec", OOM_FRAMED, ids=[r["id"] for r in OOM_FRAMED])
def test_every_oom_record_reads_and_classifies_the_same_hard_wrapped(rec, wrap):
    from runbook.diagnosis import Evidence, classify
    from runbook.playbook import load
    from tests import corpus_checks as cc

    wrapped = WRAPS[wrap](rec["text"])
    assert cc.CHECKS["oom"](dict(rec, text=wrapped)) == []
    # The verdict too: what the wording says of the allocator settings must survive the wrap
    # (own-oom-027: a terminal cut "PyT|orch)").
    t = load().thresholds
    want = classify(Evidence(launch=launcher_log.scan(rec["text"])), t).verdict
    assert classify(Evidence(launch=launcher_log.scan(wrapped)), t).verdict == want


XID_FRAMED = [rec for kind, rec in FRAMED if kind == "xid"]


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("rec", XID_FRAMED, ids=[r["id"] for r in XID_FRAMED])
def test_every_kernel_log_record_reads_the_same_hard_wrapped(rec, wrap):
    from tests import corpus_checks as cc

    # A UUID, a process name or a driver version cut at the line's end is read whole again.
    assert cc.CHECKS["xid"](dict(rec, text=WRAPS[wrap](rec["text"]))) == []


LAUNCH_CUTS = [(rec, w) for kind, rec in FRAMED if kind == "launcher" for w in (80, 120)]


@pytest.mark.parametrize("rec, width", LAUNCH_CUTS, ids=[f"{r['id']}-{w}" for r, w in LAUNCH_CUTS])
def test_a_launcher_log_cut_by_a_terminal_reads_the_same(rec, width):
    from tests import corpus_checks as cc

    # An srun, slurmstepd, Open MPI, spawn, watchdog or Ray line cut at the terminal's width keeps
    # its task list, node and time: cut lines are joined where three or more tell the width, and
    # a line that starts a launcher's line but does not read whole takes the lines after it.
    assert cc.CHECKS["launcher"](dict(rec, text=_terminal_wrap(rec["text"], width))) == []


def test_a_launcher_line_re_flowed_by_an_editor_reads_whole():
    text = (
        "slurmstepd: error: *** JOB 602025 ON compute-2-4 CANCELLED AT\n"
        "2017-07-12T15:20:54 DUE TO TIME LIMIT ***\n"
    )
    ff = launcher_log.scan(text).first_failure
    assert (ff.kind, ff.node, ff.time) == ("time_limit", "compute-2-4", "2017-07-12T15:20:54")
    text = "mpirun noticed that process rank 68 with PID 124424 on node node132 exited on\nsignal 9 (Killed).\n"
    rep = launcher_log.scan(text)
    assert rep.failing_ranks == [68] and rep.first_failure.signal == "SIGKILL"
    # Two lines of one kind are two lines, however the first ends.
    two = "srun: error: Unable to create step\nsrun: error: gpu-01: task 3: Out Of Memory\n"
    assert [e.line for e in launcher_log.scan(two).events if e.source == "srun"] == [1]


def test_unwrap_joins_cuts_and_wraps_but_never_a_line_that_starts_a_record():
    from runbook.evidence.framing import terminal_width, unwrap

    starts = lambda ln: ln.startswith("[")  # noqa: E731
    cut = ["[1] " + "a" * 76, "bc", "[2] " + "b" * 76, "de", "[3] " + "c" * 76, "fg"]
    assert terminal_width(cut) == 80 and unwrap(cut, starts) == [
        "[1] " + "a" * 76 + "bc",
        "[2] " + "b" * 76 + "de",
        "[3] " + "c" * 76 + "fg",
    ]
    # Two lines of one length in a short paste may be chance: a caller that reads both ways
    # asks for two.
    assert terminal_width(cut[:4]) is None and terminal_width(cut[:4], 2) == 80
    # Equal lines (the same message from every rank) look cut, but each starts a record.
    same = ["[0] NCCL watchdog timeout on rank 0 after 600000 ms, collective ALLREDUCE seq 9"] * 3
    assert unwrap(same, starts) == same
    # Table rows all have one length: not a cut.
    table = ["| " + "x" * 76 + " |"] * 3
    assert terminal_width(table) is None
    # An editor dropped the space it broke at; a hyphen or a dot inside a number joins as is.
    wrapped = [
        "[3] loading module for x86_64",
        "595.71.05 built by GPU-",
        "efbd-12 ver 570.158.",
        "01",
    ]
    assert unwrap(wrapped, starts) == [
        "[3] loading module for x86_64 595.71.05 built by GPU-efbd-12 ver 570.158.01"
    ]
    # Prose after a blank line is not a continuation.
    assert unwrap(["[4] done", "", "then it froze"], starts) == ["[4] done", "", "then it froze"]


REMAP = corpus_records("ops/nvidia_smi_remap_ecc.jsonl")


@pytest.mark.parametrize("rec", REMAP, ids=[r["id"] for r in REMAP])
def test_nvidia_smi_q_of_two_nodes_through_pdsh_keeps_each_nodes_gpus(rec):
    one = nvsmi.parse_memory_health(rec["text"])
    both = "\n".join(
        f"{host}: {ln}" for host in ("gpu-07", "gpu-08") for ln in rec["text"].splitlines()
    )
    got = nvsmi.parse_memory_health(both)
    assert len(got.gpus) == 2 * len(one.gpus)
    assert [g.host for g in got.gpus] == ["gpu-07"] * len(one.gpus) + ["gpu-08"] * len(one.gpus)
    strip = [dataclasses.replace(g, host=None) for g in got.gpus]
    assert strip == one.gpus + one.gpus


LOG_FRAMES = {
    # Kubernetes / containerd: every line "<ISO stamp> stderr F ".
    "cri": lambda t: "\n".join(
        f"2026-11-23T10:00:01.123456789Z stderr F {ln}" for ln in t.split("\n")
    ),
    # The journal (journalctl), short and short-iso.
    "journal": lambda t: "\n".join(
        f"Nov 23 10:00:01 gpu07 python3[12345]: {ln}" for ln in t.split("\n")
    ),
    "journal-iso": lambda t: "\n".join(
        f"2026-11-23T10:00:01+0000 gpu07 python3[12345]: {ln}" for ln in t.split("\n")
    ),
}
LOGS = [(k, r) for k, r in FRAMED if k in ("oom", "launcher")]


@pytest.mark.parametrize("frame", sorted(LOG_FRAMES))
@pytest.mark.parametrize("kind, rec", LOGS, ids=[r["id"] for _, r in LOGS])
def test_every_log_record_reads_the_same_from_a_collector(kind, rec, frame):
    from tests import corpus_checks as cc

    got = cc.CHECKS[kind](dict(rec, text=LOG_FRAMES[frame](rec["text"])))
    # The collector's stamp on every line is a time of its own: the first failure's time may
    # come from it; everything else must not change.
    assert [d for d in got if not d.startswith("first_failure_time")] == []
