"""The framework zoo (tests/data/zoo, bench/zoo/README.md): logs that real frameworks wrote on a
CPU, each ending in an out-of-memory error raised inside the framework's own code at a phase
chosen when it was recorded. Replayed through diagnose's own path (scan, classify): where and
when must be the phase the run was given, and a cause named must be one true of that phase."""

from __future__ import annotations

import pytest

from runbook.diagnosis import Evidence, classify
from runbook.evidence.launcher_log import scan
from runbook.playbook import load
from tests.data.zoo.keys import PHASES, records, source_of

RECORDS = records()
FRAMEWORKS = {"mmengine", "composer", "ignite", "timm", "ultralytics"}
# Recorded before any change for them (issue 64): the measure of rules, not readers.
UNSEEN = {"poutyne", "tabnet", "deepctr", "monai"}
# The four issue 64 measured on its own logs, recorded here after the rules.
NAMED = {"fastai", "keras", "skorch", "pyg"}


def test_zoo_holds_every_framework_and_phase():
    seen = {(r["framework"].split(".")[0], r["id"].rsplit("-", 1)[1]) for r in RECORDS}
    assert {f for f, _ in seen} == FRAMEWORKS | UNSEEN | NAMED
    for phase in PHASES:
        assert sum(p == phase for _, p in seen) >= 8, phase
    assert len(RECORDS) >= 34 + 25 + 28 + 23
    assert {r["framework"] for r in RECORDS if r["split"] == "unseen"} == UNSEEN


@pytest.mark.parametrize("r", RECORDS, ids=[r["id"] for r in RECORDS])
@pytest.mark.parametrize("program", [True, False], ids=["with-program", "log-alone"])
def test_zoo_log_replayed_where_when_and_no_false_cause(r, program):
    """Read as diagnose reads a job (its log and its program's source), and from the log alone
    (a person's pasted log): where the one lacks the answer, what it does hold, and why."""
    source = source_of(r["framework"]) if program else None
    d = classify(Evidence(launch=scan(r["text"]), source=source), load().thresholds)
    assert d.phase is not None, "the OOM was not found"
    got = d.phase.contract()
    assert (got["where"], got["when"]) == r["honest" if program else "honest_alone"], r["note"]
    for key in ("where", "when"):
        if got[key] == "unknown":
            assert any(e.startswith(f"{key} unknown: ") for e in got["evidence"]), got
    if program and r["honest"] != r["honest_alone"]:
        # The program, never the log, is what said it: its words cite its lines.
        assert any("read from the program, not from its log" in e for e in got["evidence"]), got
    cause = d.cause.name if d.cause else "unknown"
    assert cause in r["answer"]["causes"], f"{cause} is not true of an OOM in {got['where']}"


@pytest.mark.parametrize("prefix", ["[rank0]:", "0: "], ids=["torchrun", "srun-l"])
def test_zoo_reads_the_same_under_a_launchers_rank_prefix(prefix):
    """Every zoo log as torchrun ([rank0]:) or srun -l (0: ) writes it: the same where and when."""
    t = load().thresholds
    for r in RECORDS:
        text = "\n".join(prefix + line for line in r["text"].split("\n"))
        ev = Evidence(launch=scan(text), source=source_of(r["framework"]))
        got = classify(ev, t).phase.contract()
        assert (got["where"], got["when"]) == r["honest"], r["id"]
