"""Where the ranks' output is, as people write their scripts: srun's own --output/--error with
per-task patterns, read as bash reads the words."""

from __future__ import annotations

from runbook.diagnosis import Evidence, classify
from runbook.evidence.launcher_log import scan
from runbook.playbook import load
from runbook.slurm.paths import locate, srun_log_patterns, task_of


def test_srun_output_patterns_in_scripts():
    script = """#!/bin/bash
#SBATCH -o batch-%j.log
# srun --output=commented-out.log python x.py
srun --ntasks-per-node 4 -l --output=%x-%j-%t.out --error "logs/err %t.log" \\
     python train.py --output not-srun.txt
srun -N 2 -o%j.%N.%t.txt bash -c 'echo hi'
srun --mpi=pmix -o /dev/null ./a.out
"""
    assert srun_log_patterns(script) == ["%x-%j-%t.out", "logs/err %t.log", "%j.%N.%t.txt"]


def test_per_task_file_names_give_the_rank():
    where = locate("%x-%j-%t.out", job_id="55", work_dir="/w", job_name="llama lr=3e-4 bs=8")
    assert where.directory == "/w"
    assert task_of(where, "/w/llama lr=3e-4 bs=8-55-3.out") == 3


def test_not_oom_needs_logs_read_completely():
    launch = scan("srun: error: gpu-01: task 0: Exited with exit code 1")
    t = load().thresholds
    assert classify(Evidence(launch=launch), t).verdict == "not_oom"
    launch.incomplete.append("no log of the job was found (no file matched slurm-5.out)")
    d = classify(Evidence(launch=launch), t)
    assert d.verdict == "unknown" and d.evidence_incomplete
    assert any(r.startswith("Evidence incomplete: no log of the job was found") for r in d.reasons)


def test_unlabelled_per_rank_file_takes_the_rank_of_its_instrument_lines():
    """A per-rank file named without %t (torchrun --log-dir, a wrapper's own naming): the rank
    comes from runbook.instrument's start line in it; a log with several ranks' markers gives
    none."""
    from runbook.evidence.launcher_log import scan_parts

    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.00 GiB is free."
    )
    mine = "RUNBOOK_INSTRUMENT start rank=3 alloc_conf=\n" + oom
    other = "RUNBOOK_INSTRUMENT start rank=1 alloc_conf=\nstep 4 loss 2.1\n"
    assert scan_parts([(mine, None), (other, None)]).first_failure.ranks == [3]
    both = "RUNBOOK_INSTRUMENT start rank=3\nRUNBOOK_INSTRUMENT start rank=1\n" + oom
    assert scan_parts([(both, None)]).first_failure.ranks == []
    # a rank the file name gives wins
    assert scan_parts([(mine, 5)]).first_failure.ranks == [5]


def test_unlabelled_oom_in_a_shared_log_takes_the_rank_of_its_dump_marker():
    """One log for all ranks, no rank prefix (srun without -l): the OOM message belongs to the
    rank whose runbook.instrument oom-dump marker stands above it; two ranks dumping: the
    nearest marker above each message; no marker: no rank."""
    from runbook.evidence.launcher_log import scan_parts

    oom = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 1.00 GiB is free."
    )
    starts = "".join(f"RUNBOOK_INSTRUMENT start rank={r}\n" for r in range(4))
    log = (
        starts + "step 5/10\nRUNBOOK_INSTRUMENT oom-dump rank=2 path=/x/d.json\nTraceback:\n" + oom
    )
    got = scan_parts([(log, None)], nodes="gpu-[01-02]", tasks_per_node=2, world_size=4)
    assert got.first_failure.ranks == [2] and got.first_failure.node == "gpu-02"
    assert scan_parts([(starts + oom, None)]).first_failure.ranks == []
    two = (
        starts
        + "RUNBOOK_INSTRUMENT oom-dump rank=1 path=/x/a.json\n"
        + oom
        + "\nRUNBOOK_INSTRUMENT oom-dump rank=3 path=/x/b.json\n"
        + oom
    )
    assert sorted(m.rank for m in scan_parts([(two, None)]).ooms) == [1, 3]


def test_an_array_cancelled_before_it_split_into_tasks_has_no_task_index():
    """Accounting lists an array cancelled while pending as one row `A_[0-1]` (test cluster,
    Slurm 22.05): its %a and %b match any file, and nothing raises (a sweep over the window
    once stopped on it with a ValueError)."""
    got = locate("run-%A_%a-%b.out", work_dir="/w", job_id="2572", user="u", job_name="n",
                 array_job_id="2572", array_task_id="[0-1]")  # fmt: skip
    assert (got.directory, got.name_glob) == ("/w", "run-2572_*-*.out")
    one = locate("run-%A_%a-%b.out", work_dir="/w", job_id="2574", user="u", job_name="n",
                 array_job_id="2572", array_task_id="13")  # fmt: skip
    assert one.name_glob == "run-2572_13-3.out"
