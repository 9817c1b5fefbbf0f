"""OOM message families (runbook/evidence/oom_families/): each one's real sample messages, kept
beside it in tests/data/oom_families/<module>.txt: per sample its `# source:`, its `# expect:`
(the fields the message must give, sizes in MiB to 3 places) and the message as printed."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

from runbook.evidence import oom_families
from runbook.evidence.oom_message import parse_all
from tests.sample_files import read_samples

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "oom_families"
TESTS = Path(__file__).resolve().parents[1]
RECORDED = "recorded: tests/data/gpu/"  # made here on a lent GPU (tests/data/gpu/SOURCES.md)
BY_NAME = {f.name: f for f in oom_families.families()}


CASES = [
    pytest.param(name, sample, id=f"{name}-{i}")
    for name in BY_NAME
    if (SAMPLES / f"{name}.txt").exists()
    for i, sample in enumerate(read_samples(SAMPLES / f"{name}.txt"))
]


def test_every_family_has_its_samples_and_every_samples_file_a_family():
    modules = {
        m.name for m in pkgutil.iter_modules(oom_families.__path__) if not m.name.startswith("_")
    }
    assert modules == set(BY_NAME)
    assert {p.stem for p in SAMPLES.glob("*.txt")} == set(BY_NAME)
    for name in BY_NAME:
        samples = read_samples(SAMPLES / f"{name}.txt")
        assert samples and all(s["source"].startswith(("https://", RECORDED)) for s in samples), (
            name
        )


@pytest.mark.parametrize(
    ("name", "sample"), [c for c in CASES if c.values[1]["source"].startswith(RECORDED)]
)
def test_a_recorded_sample_is_verbatim_from_its_recording(name, sample):
    """A sample recorded on a GPU here is the recording's own lines, in order, unedited."""
    path = TESTS.parent / sample["source"][len("recorded: ") :].split(" ", 1)[0]
    recorded, lines = path.read_text().splitlines(), list(sample["lines"])
    while lines and not lines[-1]:
        lines.pop()  # the blank line between samples
    first = recorded.index(lines[0])
    assert recorded[first : first + len(lines)] == lines


@pytest.mark.parametrize(("name", "sample"), CASES)
def test_sample_gives_the_fields_it_names(name, sample):
    msgs = [m for m in parse_all("\n".join(sample["lines"])) if m.family == name]
    assert msgs, f"no {name} message read"
    m = msgs[0]
    got = {
        k: round(getattr(m, k), 3) if isinstance(getattr(m, k), float) else getattr(m, k)
        for k in sample["expect"]
    }
    assert got == sample["expect"]


def test_anchor_order_is_total():
    fams = oom_families.families()
    assert len({f.order for f in fams}) == len(fams)
