"""Launcher recognizers: one module per launcher family, each reading the lines its launcher
prints into events (evidence.events.RankEvent).

A module here holds `RECOGNIZER`, a `Recognizer`:
- `gates`: fixed strings, one of which every line it reads contains. The scan hands a line to a
  recognizer only when a gate is in it, and the node-side filter (log_filter.PATTERNS) keeps the
  lines that hold one: the strings are written once, here.
- `readers`: functions of a `Line` (the line, its neighbours, the rank its prefix names) that
  return the line's events, or None when the line is not theirs. The first reader that answers
  has the line; recognizers are asked in `order`, the catch-all traceback reader last.
- optional: `entries` (a reader of a whole log, for a report that spans lines), `rejoin` (the
  start and the whole of a line the launcher prints whole, to undo a terminal's or an editor's
  cut), `owners` (whose captured output each line is) and `heads` (the lines that head a
  process's own traceback, for an OOM message without a rank).

Its real sample lines, with their sources and the events they must give, are in
tests/data/launchers/<module>.log (tests/unit/test_launchers.py). The rules that order the
events (which rank failed first, what is a consequence) are not here: launcher_log.py.

Adding a launcher is one module here and its samples file; nothing else is edited.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable

from runbook.evidence.events import RankEvent
from runbook.lazyre import lazy
from runbook.record import record

_HOST_PREFIX = lazy(r"^([A-Za-z][\w.-]*):\s")


class Line:
    """The line a reader is asked about, with what it may need around it. One instance per log
    part, moved along the lines (a record per line would cost the scan of a large log)."""

    __slots__ = ("raw", "stripped", "known_nodes", "oom_lines", "i", "text", "rank", "when")

    def __init__(self, raw: list[str], stripped: list[str], known_nodes: set[str], oom_lines):
        self.raw = raw  # the lines as printed (prefixes and all)
        self.stripped = stripped  # without rank/host/time prefixes (oom_message.strip_line)
        self.known_nodes = known_nodes
        self.oom_lines = oom_lines  # lines that hold an OOM message (read by oom_message)
        self.i = 0
        self.text = ""  # stripped[i]
        self.rank: int | None = None  # the rank its prefix or its captured block names
        self.when: str | None = None  # its stamp

    @property
    def printed(self) -> str:
        return self.raw[self.i]

    def host(self, i: int | None = None) -> str | None:
        """The node a `host: ` prefix names (pdsh, clush), when it is one of the job's nodes."""
        m = _HOST_PREFIX.match(self.raw[self.i if i is None else i])
        return m.group(1) if m and m.group(1) in self.known_nodes else None


Reader = Callable[[Line], "list[RankEvent] | None"]


@record
class Recognizer:
    name: str
    gates: tuple[str, ...]
    readers: tuple[Reader, ...]
    order: int = 100  # lower is asked first; the traceback catch-all is last
    entries: Callable[[list[str], list[str]], list[RankEvent]] | None = None
    rejoin: tuple = ()  # (start pattern, whole pattern) pairs
    owners: Callable[[list[str]], list[int | None]] | None = None
    heads: Callable[[list[str]], list[tuple[int, int]]] | None = None

    def gated(self, line: str) -> bool:
        return any(g in line for g in self.gates)


def module_names(paths) -> list[str]:
    """The modules of a package's folders whose names do not start with "_", sorted. A listing
    of the folder, not pkgutil (whose import alone costs start-up a third of a millisecond)."""
    names = set()
    for folder in paths:
        for entry in os.listdir(folder):
            stem, dot, ext = entry.partition(".")
            if dot and ext in ("py", "pyc") and stem and not stem.startswith("_"):
                names.add(stem)
    return sorted(names)


@functools.cache
def recognizers() -> tuple[Recognizer, ...]:
    """Every module of this package that holds a RECOGNIZER, in their order (then by name)."""
    found = []
    for name in module_names(__path__):
        module = importlib.import_module(f"{__name__}.{name}")
        rec = getattr(module, "RECOGNIZER", None)
        if isinstance(rec, Recognizer):
            found.append(rec)
    return tuple(sorted(found, key=lambda r: (r.order, r.name)))


def gates() -> list[str]:
    """Every recognizer's gate strings, each once, in the recognizers' order."""
    return list(dict.fromkeys(g for r in recognizers() for g in r.gates))
