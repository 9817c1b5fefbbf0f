"""Every real launcher log in ../shared/corpus/ops/launcher_logs.jsonl against its answer key."""

from __future__ import annotations

import pytest

from runbook.evidence.launcher_log import scan
from tests import corpus_checks
from tests.conftest import corpus_records

RECORDS = corpus_records("ops/launcher_logs.jsonl")
# Where the answer key knows something the log text does not hold, the test cannot pass on the
# text alone; these stay visible as xfail with the reason.
NOT_IN_TEXT = {
    "launch-accelerate-1519-multinode-two-rootcauses": "is_oom comes from the issue title; the "
    "excerpt holds only ChildFailedError reports, no OOM line",
    "launch-jadehpc-194-uncorrectable-ecc": "the node (dgk713) comes from the issue prose, not "
    "the excerpt",
}


@pytest.mark.parametrize(
    "rec",
    [
        pytest.param(r, marks=pytest.mark.xfail(reason=NOT_IN_TEXT[r["id"]], strict=True))
        if r["id"] in NOT_IN_TEXT
        else r
        for r in RECORDS
    ],
    ids=[r["id"] for r in RECORDS],
)
def test_record(rec):
    assert corpus_checks.launcher(rec) == []


def test_oom_beats_the_timeouts_that_follow_it():
    """The rank that OOMed is the cause even when watchdog lines on the others come first in the
    file and carry the earlier-looking stamps of another clock format."""
    timeouts = next(r for r in RECORDS if r["id"] == "launch-llamafactory-6269-reduce-scatter")
    oom = next(r for r in RECORDS if r["id"] == "launch-qwen3coder-174-rank3-oom")
    rep = scan(timeouts["text"] + "\n" + oom["text"])
    assert rep.first_failure.kind == "oom" and rep.first_failure.ranks == [3]
    assert rep.timed_out_ranks == [0, 4, 3]


def test_rank_to_node_from_slurm_layout():
    text = "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    rep = scan(text, nodes="gpu-[01-02,07]", tasks_per_node=4)
    assert rep.first_failure.node == "gpu-02"
    rep = scan(text, nodes="gpu-[01-02,07]", tasks_per_node=[2, 2, 4])
    assert rep.first_failure.node == "gpu-07"


def test_srun_terminated_ranges_name_the_missing_task():
    text = (
        "srun: error: gpu-01: tasks 0-2: Terminated\n"
        "srun: error: gpu-02: tasks 4-7: Terminated\n"
        "srun: Force Terminated StepId=12.0\n"
    )
    rep = scan(text)
    assert rep.suspect_ranks == [3]
    assert rep.first_failure.ranks == [3]


def test_several_agents_earliest_timestamp_wins_not_first_block():
    block = (
        "Root Cause (first observed failure):\n[0]:\n  time      : {t}\n  host      : {h}\n"
        "  rank      : {r} (local_rank: 0)\n  exitcode  : 1 (pid: 1)\n"
        "  error_file: <N/A>\n==========\n"
    )
    text = block.format(t="2024-01-01_10:00:05", h="gpu-01", r=0) + block.format(
        t="2024-01-01_10:00:01", h="gpu-02", r=4
    )
    ff = scan(text).first_failure
    assert (ff.ranks, ff.node, ff.time) == ([4], "gpu-02", "2024-01-01_10:00:01")


def test_recorded_sigkill_is_the_cause_not_the_peers_connection_resets():
    """A real log from the test cluster: the SIGKILLed rank printed nothing; its peers' gloo
    errors and srun's exit notices for them are consequences."""
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[1] / "data" / "logs" / "train_oom-hostram-sigkill-gloo.out"
    ).read_text()
    ff = scan(text).first_failure
    assert (ff.kind, ff.signal, ff.ranks, ff.node) == ("signal", "SIGKILL", [3], "gpu-02")
