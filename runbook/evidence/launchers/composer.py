"""Composer's launcher (`composer train.py`, logger composer.cli.launcher) polls its ranks and
logs the first it finds exited non-zero: `Rank 2 crashed with exit code -7.` (a negative code is
the signal). Tearing down, it logs `Killing global rank 1 (PID 123) with SIGTERM` for the others,
then prints `Global rank 2 (PID 456) exited with code -7` for each rank that was not killed by it
(not -9 or -15), each followed by that rank's captured output between `----------Begin global
rank 2 STDERR----------` and `----------End global rank 2 STDERR----------`; its last line
repeats `Global rank N (PID P) exited with code C` for the lowest rank that exited non-zero."""

from __future__ import annotations

from runbook.evidence.events import SIGNAL, RankEvent, coded_exit
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_CRASHED = lazy(
    r"\bRank (\d{1,18}(?!\d)) crashed with exit code (-?\d{1,18}(?!\d))",
    needs="crashed with exit code",
)
_EXITED = lazy(
    r"\bGlobal rank (\d{1,18}(?!\d)) \(PID (\d{1,18}(?!\d))\) exited with code (-?\d{1,18}(?!\d))",
    needs="exited with code",
)
_KILLING = lazy(
    r"\bKilling global rank (\d{1,18}(?!\d)) \(PID (\d{1,18}(?!\d))\) with (SIG[A-Z]+)",
    needs="Killing global rank",
)
_BLOCK = lazy(
    r"^\s*-{5,}(Begin|End) global rank (\d{1,18}(?!\d)) (?:STDOUT|STDERR)-{5,}\s*$",
    needs="global rank",
)


def _exited(ln: Line) -> list[RankEvent] | None:
    crashed = _CRASHED.search(ln.text)
    if not (m := (crashed or _EXITED.search(ln.text))):
        return None
    code = int(m.group(2) if crashed else m.group(3))
    how = "crashed" if crashed else f"(pid {m.group(2)}) exited"
    return [
        coded_exit(
            ln.i,
            int(m.group(1)),
            code,
            ln.when,
            "composer",
            f"Composer launcher: rank {m.group(1)} {how} with exit code {code}",
            # The closing summary can name a rank the launcher itself killed.
            reactions=() if crashed else ("SIGTERM", "SIGKILL"),
        )
    ]


def _killing(ln: Line) -> list[RankEvent] | None:
    if not (m := _KILLING.search(ln.text)):
        return None
    return [
        RankEvent(
            kind=SIGNAL,
            line=ln.i,
            rank=int(m.group(1)),
            time=ln.when,
            signal=m.group(3),
            detail=f"Composer launcher killed rank {m.group(1)} (pid {m.group(2)})",
            consequence=True,
            source="composer",
        )
    ]


def owners(raw: list[str]) -> list[int | None]:
    """For each line, the rank whose captured output the launcher is printing there (its
    Begin/End global rank N STDERR block), else None."""
    out: list[int | None] = [None] * len(raw)
    cur = None
    for i, line in enumerate(raw):
        if m := _BLOCK.match(line):
            cur = int(m.group(2)) if m.group(1) == "Begin" else None
        else:
            out[i] = cur
    return out


RECOGNIZER = Recognizer(
    name="composer",
    gates=(
        "crashed with exit code",
        "Global rank",
        "Killing global rank",
        "Begin global rank",
        "End global rank",
    ),
    readers=(_exited, _killing),
    order=90,
    owners=owners,
)
