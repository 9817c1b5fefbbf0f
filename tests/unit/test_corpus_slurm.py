"""Slurm hostlists and sacct/scontrol outputs from ../shared/corpus against their answer keys."""

from __future__ import annotations

import pytest

from runbook.errors import InputError
from runbook.slurm import text as slurm_text
from runbook.slurm.hostlist import expand
from tests.conftest import corpus_records

HOSTLISTS = corpus_records("hostlist.jsonl")
# Where the corpus records another dialect's answer, Slurm's behaviour is the expectation
# (corpus README: "Follow Slurm's behaviour where dialects disagree").
SLURM_SAYS = {
    "hl-008": ("error", "':' is not a Slurm range separator; libslurm returns an empty list, "
               "we refuse it"),
    "hl-032": ("error", "step syntax '/2' is ClusterShell's, not Slurm's"),
    "hl-034": (["nova156", "nova256", "nova356", "nova456"],
               "Slurm concatenates the suffix; ClusterShell folds it into the number"),
    "hl-052": (["nova3", "nova4", "5", "nova6"],
               "Slurm takes a bare number as a host name; ClusterShell rejects it"),
    "hl-058": ([f"n{a}0{b}" for a in range(1, 5) for b in (3, 4)],
               "Slurm expands every bracket of a name (cross product); ClusterShell rejects it"),
}  # fmt: skip


@pytest.mark.parametrize("rec", HOSTLISTS, ids=[r["id"] for r in HOSTLISTS])
def test_hostlist(rec):
    want = SLURM_SAYS.get(rec["id"], (rec.get("expanded") if rec.get("expanded") is not None
                                      else "error", ""))[0]  # fmt: skip
    if want == "error":
        with pytest.raises(InputError, match="invalid Slurm hostlist"):
            expand(rec["expression"])
    else:
        assert expand(rec["expression"]) == want


SLURM = corpus_records("ops/slurm_outputs.jsonl")


@pytest.mark.parametrize("rec", SLURM, ids=[r["id"] for r in SLURM])
def test_slurm_output(rec):
    a = rec["answer"]
    got = slurm_text.parse(rec["text"])
    assert got.state == a.get("state")
    assert got.exit_code == a.get("exit_code")
    assert got.nodes == a.get("nodes")
    want_id = a.get("job_id")
    if want_id and want_id.split(" ")[0] in rec["text"]:  # some ids live only in the command
        assert got.job_id == want_id.split(" ")[0]
    if "jobs" in a:
        assert [(j["jobid"], j["state"]) for j in got.jobs] == [
            (j["job_id"], j["state"]) for j in a["jobs"]
        ]
    if "rows" in a and isinstance(a["rows"][0], dict):
        assert [(r["jobid"], r["state"], r["exit_code"]) for r in got.rows] == [
            (r["jobid"], r["state"], r["exit_code"]) for r in a["rows"]
        ]


def test_scontrol_one_line_reason_with_spaces():
    line = ("JobId=7 JobName=train UserId=u(1) JobState=FAILED Reason=NonZeroExitCode "
            "Dependency=(null) ExitCode=1:0 NodeList=gpu-[01-02] BatchHost=gpu-01 "
            "Comment=runbook:incident=abc,parent=5 StdOut=/w/slurm-7.out")  # fmt: skip
    got = slurm_text.parse(line)
    assert (got.job_id, got.state, got.exit_code, got.nodes) == (
        "7",
        "FAILED",
        "1:0",
        ["gpu-01", "gpu-02"],
    )
    assert got.fields["Comment"] == "runbook:incident=abc,parent=5"


def test_slurmdbd_down_is_a_clear_input_error():
    with pytest.raises(InputError, match="accounting may be down"):
        slurm_text.parse("sacct: error: Problem talking to the database: Connection refused\n")


def test_not_slurm_output():
    with pytest.raises(InputError, match="not sacct or scontrol output"):
        slurm_text.parse("hello world\n")
