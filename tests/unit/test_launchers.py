"""Launcher recognizers (runbook/evidence/launchers/): each one's real sample lines, kept beside
it as fail2ban keeps sample logs beside each filter, in tests/data/launchers/<module>.log. A
sample is its `# source:` (where the lines were printed), its `# expect:` (the events the
recognizer alone must read, fields left out are empty), and the lines themselves."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

from runbook.evidence import launcher_log, launchers, log_filter
from runbook.evidence.launcher_log import read_with, scan
from tests.conftest import corpus_dir
from tests.corpus_checks import OWN, read
from tests.sample_files import read_samples

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "launchers"
FIELDS = ("kind", "rank", "local_rank", "node", "signal", "exit_code", "consequence", "source")


def _projected(event) -> dict:
    return {
        k: v
        for k in FIELDS
        if (v := getattr(event, k)) is not None and v is not False and v != "log"
    }


BY_NAME = {r.name: r for r in launchers.recognizers()}
CASES = [
    pytest.param(name, i, sample, id=f"{name}-{i}")
    for name in BY_NAME
    if (SAMPLES / f"{name}.log").exists()
    for i, sample in enumerate(read_samples(SAMPLES / f"{name}.log"))
]


def test_every_recognizer_has_its_samples_and_every_samples_file_a_recognizer():
    modules = {
        m.name for m in pkgutil.iter_modules(launchers.__path__) if not m.name.startswith("_")
    }
    assert modules == set(BY_NAME), "a module without RECOGNIZER, or a recognizer misnamed"
    files = {p.stem for p in SAMPLES.glob("*.log")}
    assert files == set(BY_NAME)
    for name in BY_NAME:
        samples = read_samples(SAMPLES / f"{name}.log")
        assert samples, f"{name}.log holds no sample"
        assert all(s["source"].startswith("https://") and "expect" in s for s in samples)


@pytest.mark.parametrize(("name", "i", "sample"), CASES)
def test_sample_gives_the_events_it_names(name, i, sample):
    got = [_projected(e) for e in read_with(BY_NAME[name], "\n".join(sample["lines"]))]
    assert got == sample["expect"]
    assert got, "a sample that gives nothing tests nothing"


@pytest.mark.parametrize(("name", "i", "sample"), CASES)
def test_sample_scanned_whole_names_a_first_failure_among_its_ranks(name, i, sample):
    """With every recognizer at work, the sample still says who failed (or, where it holds only
    consequences, that the culprit is elsewhere)."""
    report = scan("\n".join(sample["lines"]))
    assert report.first_failure is not None
    ranks = {e.get("rank") for e in sample["expect"]} - {None}
    if ranks and not any(e.get("consequence") for e in sample["expect"]):
        assert set(report.first_failure.ranks) <= ranks


@pytest.mark.parametrize(("name", "i", "sample"), CASES)
def test_each_line_read_holds_a_gate_and_the_node_filter_keeps_it(name, i, sample):
    rec = BY_NAME[name]
    raw = launcher_log._frame("\n".join(sample["lines"]))
    for e in read_with(rec, "\n".join(sample["lines"])):
        if rec.entries is not None and not rec.gated(raw[e.line]):
            continue  # an entry's first line ("[0]:"); the filter's context keeps it
        assert rec.gated(raw[e.line]), raw[e.line]
        assert log_filter.relevant(raw[e.line]), raw[e.line]


def test_the_order_is_total_and_the_traceback_catch_all_is_last():
    recs = launchers.recognizers()
    assert len({r.order for r in recs}) == len(recs)
    assert recs[-1].name == "traceback"


def test_node_filter_strings_include_every_gate():
    assert set(launchers.gates()) <= set(log_filter.PATTERNS)


def corpus_texts() -> list[str]:
    """Every text of the shared and own corpora's log-like files."""
    names = ["oom_messages.jsonl", "ops/launcher_logs.jsonl", "ops/slurm_outputs.jsonl"]
    names += ["ops/multihost.jsonl", "captured_lightning.jsonl"]
    return [r["text"] for base in (corpus_dir(), OWN) for n in names for r in read(base / n)]


def test_a_gate_never_hides_a_line_a_recognizer_reads_over_the_whole_corpus(monkeypatch):
    """Every corpus text scanned with the gates as they are, and with every line handed to every
    recognizer: the same report."""
    texts = corpus_texts()
    assert len(texts) > 300
    gated = [scan(t) for t in texts]
    monkeypatch.setattr(launchers.Recognizer, "gated", lambda self, line: True)
    ungated = [scan(t) for t in texts]
    for t, a, b in zip(texts, gated, ungated, strict=True):
        assert a.events == b.events, t[:200]
        assert a.first_failure == b.first_failure
