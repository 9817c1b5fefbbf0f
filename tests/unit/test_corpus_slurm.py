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


def test_node_events_from_a_recorded_sacctmgr_show_event():
    """A drain runbook set and its return to service, as slurmdbd recorded them (the recording
    in tests/data/slurm/SOURCES.md); the cluster's own event is not a node's."""
    from datetime import datetime
    from pathlib import Path

    from runbook.slurm.cli_backend import parse_node_events

    text = (
        Path(__file__).resolve().parents[1] / "data" / "slurm" / "sacctmgr-show-event.txt"
    ).read_text()
    (ev,) = parse_node_events(text)
    assert ev.node == "gpu-02" and ev.state == "DRAIN" and ev.user == "root"
    assert ev.start == datetime(2026, 11, 27, 13, 47, 36) and ev.end == datetime(
        2026, 11, 27, 13, 47, 41
    )
    assert ev.reason.startswith("runbook 20261127-134733-25: gpu_fault: GPU fault on gpu-02")
    # A reason a person wrote with '|' in it stays whole; a node still drained has no end.
    (open_,) = parse_node_events("gpu-07|2026-11-27T10:00:00|Unknown|DRAIN|alice(1001)|bad | fan\n")
    assert open_.end is None and open_.reason == "bad | fan" and open_.user == "alice"
