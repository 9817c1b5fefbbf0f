"""The framework zoo (tests/data/zoo, bench/zoo/README.md): logs that real frameworks wrote on a
CPU, each ending in an out-of-memory error raised inside the framework's own code at a phase
chosen when it was recorded. Replayed through diagnose's own path (scan, classify): where and
when must be the phase the run was given, and a cause named must be one true of that phase."""

from __future__ import annotations

import pytest

from runbook.diagnosis import Evidence, classify
from runbook.evidence.launcher_log import scan
from runbook.playbook import load
from tests.data.zoo.keys import PHASES, records

RECORDS = records()
FRAMEWORKS = {"mmengine", "composer", "ignite", "timm", "ultralytics"}


def test_zoo_holds_every_framework_and_phase():
    seen = {(r["framework"].split(".")[0], r["id"].rsplit("-", 1)[1]) for r in RECORDS}
    assert {f for f, _ in seen} == FRAMEWORKS
    for phase in PHASES:
        assert sum(p == phase for _, p in seen) >= 4, phase
    assert len(RECORDS) >= 34


@pytest.mark.parametrize("r", RECORDS, ids=[r["id"] for r in RECORDS])
def test_zoo_log_replayed_where_when_and_no_false_cause(r):
    d = classify(Evidence(launch=scan(r["text"])), load().thresholds)
    assert d.phase is not None, "the OOM was not found"
    got = d.phase.contract()
    assert (got["where"], got["when"]) == (r["answer"]["where"], r["answer"]["when"])
    cause = d.cause.name if d.cause else "unknown"
    assert cause in r["answer"]["causes"], f"{cause} is not true of an OOM in {got['where']}"
