"""A resubmission is the same job: the options Slurm recorded for the original, given again,
less what the rung changes; the new job read back and compared. Recorded real scontrol output
(tests/data/slurm/SOURCES.md) and values in, options and verdicts out."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from runbook.planning.resources import gpus, mismatches, options
from runbook.slurm.recorded import recorded
from runbook.slurm.text import scontrol_records

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"

# What `sbatch -p gpu -N2 --ntasks-per-node=2 --gres=gpu:2 --mem=400M --time=30 -J xjob
# -o /tmp/x-%j.log` records (Slurm 22.05 on the test cluster, job 323).
CMDLINE_JOB = """JobId=323 JobName=xjob
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   Priority=4294901443 Nice=0 Account=root QOS=normal
   RunTime=00:00:00 TimeLimit=00:30:00 TimeMin=N/A
   Partition=gpu AllocNode:Sid=localhost:1110
   NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   TRES=cpu=4,node=2,billing=4,gres/gpu=4
   Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*
   MinCPUsNode=2 MinMemoryNode=400M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   StdOut=/tmp/x-323.log
   TresPerNode=gres:gpu:2
"""


def test_command_line_options_come_back_from_what_slurm_recorded():
    (f,) = scontrol_records(CMDLINE_JOB)
    r = recorded(f, "323")
    assert options(r, "halve_micro_batch") == [
        "--nodes=2",
        "--ntasks=4",
        "--ntasks-per-node=2",
        "--cpus-per-task=1",
        "--gres=gpu:2",
        "--mem=400M",
        "--time=00:30:00",
        "--partition=gpu",
        "--account=root",
        "--qos=normal",
        "--job-name=xjob",
        "--output=/tmp/x-%j.log",
    ]
    assert "--mem=400M" not in options(r, "raise_mem")  # the rung's own change wins


def test_names_and_paths_with_spaces_stay_one_option_each():
    (f,) = scontrol_records((DATA / "scontrol-show-job-name-with-spaces.txt").read_text())
    opts = options(recorded(f, f["JobId"]), "expandable_segments")
    assert "--job-name=llama lr=3e-4 bs=8" in opts
    assert "--output=/tmp/out dir x=1/llama lr=3e-4 bs=8-%j.log" in opts


def test_gpus_and_mismatches():
    assert gpus("cpu=4,node=2,billing=4,gres/gpu=4") == 4
    assert gpus("cpu=8,gres/gpu:h100=8") == 8
    assert gpus("cpu=4,mem=1G") is None
    job = SimpleNamespace(num_nodes=2, num_tasks=4, tres="gres/gpu=4")
    same = SimpleNamespace(num_nodes=2, num_tasks=4, tres="cpu=4,gres/gpu=4")
    one = SimpleNamespace(num_nodes=1, num_tasks=1, tres="cpu=1")
    assert mismatches(job, same, "halve_micro_batch") == []
    assert mismatches(job, one, "halve_micro_batch") == [
        "nodes: original 2, new 1",
        "tasks: original 4, new 1",
    ]


def test_log_path_back_to_a_pattern_only_in_the_file_name():
    from runbook.slurm.recorded import as_pattern

    # Found by CI on a fresh cluster: job 9 in a folder named racejob-w4a69kn2.
    assert (
        as_pattern("/w/racejob-w4a69kn2/racejob-9.out", "9") == "/w/racejob-w4a69kn2/racejob-%j.out"
    )
    assert as_pattern("/w/run9-9.log", "9") == "/w/run9-%j.log"
    assert as_pattern("/w/x-323.log", "323") == "/w/x-%j.log"
    assert as_pattern("/w/x-3231.log", "323") == "/w/x-3231.log"
