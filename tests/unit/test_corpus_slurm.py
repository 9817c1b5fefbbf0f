"""Slurm hostlists and sacct/scontrol outputs from ../shared/corpus against their answer keys."""

from __future__ import annotations

import pytest

from runbook.errors import InputError
from runbook.slurm import text as slurm_text
from tests import corpus_checks
from tests.conftest import corpus_records

HOSTLISTS = corpus_records("hostlist.jsonl")


@pytest.mark.parametrize("rec", HOSTLISTS, ids=[r["id"] for r in HOSTLISTS])
def test_hostlist(rec):
    assert corpus_checks.hostlist(rec) == []


SLURM = corpus_records("ops/slurm_outputs.jsonl")


@pytest.mark.parametrize("rec", SLURM, ids=[r["id"] for r in SLURM])
def test_slurm_output(rec):
    assert corpus_checks.slurm(rec) == []


def test_scontrol_one_line_reason_with_spaces():
    line = (
        "JobId=7 JobName=train UserId=u(1) JobState=FAILED Reason=NonZeroExitCode "
        "Dependency=(null) ExitCode=1:0 NodeList=gpu-[01-02] BatchHost=gpu-01 "
        "Comment=runbook:incident=abc,parent=5 StdOut=/w/slurm-7.out"
    )
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
