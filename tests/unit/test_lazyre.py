"""runbook.lazyre: a pattern's `needs=` may only name text every match contains, so a gate can
never hide a match. Each one is proved from the pattern as Python's own parser reads it, not
from examples, and the gates are checked to answer as the compiled pattern does."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from runbook.evidence import launchers, oom_families
from runbook.lazyre import _FOLD, LazyPattern, lazy

if sys.version_info >= (3, 11):
    from re import _parser as sre_parse
else:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

MODULES = [
    "runbook.evidence.oom_message",
    "runbook.evidence.oom_numbers",
    *(f.fields.__module__ for f in oom_families.families()),
    "runbook.evidence.events",
    "runbook.evidence.launcher_log",
    *(r.readers[0].__module__ for r in launchers.recognizers()),
    "runbook.evidence.log_filter",
    "runbook.slurm.text",
]


def module_patterns() -> list[tuple[str, LazyPattern]]:
    """Every LazyPattern a parser module holds: at top level, or in its lists, tuples, dicts."""
    found: dict[int, tuple[str, LazyPattern]] = {}

    def walk(where: str, value, depth: int = 0) -> None:
        if isinstance(value, LazyPattern):
            found[id(value)] = (where, value)
        elif depth < 3 and isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(f"{where}[{i}]", v, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for k, v in value.items():
                walk(f"{where}[{k!r}]", v, depth + 1)

    for name in MODULES:
        for attr, value in vars(importlib.import_module(name)).items():
            walk(f"{name}.{attr}", value)
    return list(found.values())


def required_runs(seq) -> list[str]:
    """Literal runs a match of this parsed sequence cannot avoid: consecutive literals at its
    top level, in groups, and in repeats of at least one; of alternatives, only the text every
    alternative's own runs contain; optional parts add nothing. Zero-width assertions end a run
    (nothing is claimed across them)."""
    runs, cur = [], ""
    for op, av in seq:
        name = str(op)
        if name == "LITERAL":
            cur += chr(av)
            continue
        runs.append(cur)
        cur = ""
        if name == "SUBPATTERN":
            _group, add_flags, del_flags, sub = av
            if not (add_flags | del_flags) & re.IGNORECASE:
                runs += required_runs(sub)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and av[0] >= 1:
            runs += required_runs(av[2])
        elif name == "BRANCH":
            runs += common_to_all([required_runs(b) for b in av[1]])
    runs.append(cur)
    return [r for r in runs if r]


def common_to_all(alternatives: list[list[str]]) -> list[str]:
    """Every text that some run of each alternative contains."""
    first, rest = alternatives[0], alternatives[1:]
    found = {run[a:b] for run in first for a in range(len(run)) for b in range(a + 1, len(run) + 1)}
    return sorted(t for t in found if all(any(t in r for r in runs) for runs in rest))


def test_an_alternation_requires_only_what_every_alternative_contains():
    parsed = sre_parse.parse(r"low on memory|Memory on|memory pressure \(x\)|(?:a)?memory")
    runs = required_runs(parsed)
    assert "emory" in runs and "memory" not in runs and "on" not in runs


GATED = [(w, p) for w, p in module_patterns() if p.needs]


def test_the_parsers_gate_the_patterns_that_rarely_match():
    # The point of gates: the formats an input lacks cost nothing. If this drops, a refactor
    # lost them (bench/startup.py would show it as start-up time).
    assert len(GATED) >= 30, [w for w, _ in GATED]


@pytest.mark.parametrize("where,pattern", GATED, ids=[w for w, _ in GATED])
def test_each_needed_literal_is_one_every_match_contains(where, pattern):
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    ignorecase = bool(parsed.state.flags & re.IGNORECASE)
    assert ignorecase == bool(pattern.flags & re.IGNORECASE), (
        f"{where}: give re.IGNORECASE as flags=, not inline, so the gate compares lower case"
    )
    runs = required_runs(parsed)
    for needle in pattern.needs:
        if ignorecase:
            assert needle.isascii() and needle == needle.lower(), where
            assert any(needle in r.lower() for r in runs), (where, needle, runs)
        else:
            assert any(needle in r for r in runs), (where, needle, runs)


def test_the_case_fold_covers_every_character_ignorecase_matches_with_an_ascii_letter():
    letter = re.compile("[a-z]", re.IGNORECASE)
    odd = {chr(cp) for cp in range(128, 0x110000) if letter.fullmatch(chr(cp))}
    assert odd == {c for c in map(chr, _FOLD) if not c.isascii()}
    for ch in odd:
        assert ch.translate(_FOLD).lower().isascii()


def test_a_gate_answers_as_the_compiled_pattern_does_and_compiles_nothing():
    p = lazy(r"Tried\s*to\s*allocate\s*(\d+)", re.IGNORECASE, needs="allocate")
    assert p.search("nothing here") is None and p.findall("x") == [] and p._compiled is None
    assert list(p.finditer("x")) == [] and p.sub("-", "x") == "x" and p.split("x") == ["x"]
    assert p.subn("-", "x") == ("x", 0) and p._compiled is None
    # re.IGNORECASE matches the dotted capital I and the long s: the gate must let them through.
    assert p.search("TR\u0130ED TO ALLOCATE 5").group(1) == "5"
    assert p.search("tried to allocate 7").group(1) == "7" and p._compiled is not None
    q = lazy(r"Killing subprocess (\d+)", needs="Killing subprocess")
    assert q.search("killing subprocess 3") is None  # case-sensitive: the pattern says no too
    assert q.match("Killing subprocess 3").group(1) == "3"


@pytest.mark.parametrize(
    "pattern,flags,needs",
    [
        (r"(?:foo|bar)baz", 0, "foo"),  # one alternative only
        (r"(?:foo)?bar", 0, "foo"),  # optional
        (r"fo*bar", 0, "foo"),  # a repeat of zero or more
        (r"(?i:foo)bar", 0, "foo"),  # a local flag changes case
    ],
)
def test_the_proof_refuses_literals_a_match_can_do_without(pattern, flags, needs):
    runs = required_runs(sre_parse.parse(pattern, flags))
    assert not any(needs in r for r in runs)
