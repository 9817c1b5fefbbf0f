"""OOM message families: one module per family of accelerator out-of-memory message, each with
the anchors that find where one starts and the reader of the numbers it states.

A module here holds `FAMILY`, a `Family`:
- `anchors`: patterns (lazy, with the text every match needs) that match where a message of the
  family starts in the joined text of a log (wraps repaired);
- `fields`: a function of the anchor's match and the message's window (the text up to the next
  anchor), the sizes found in it (oom_numbers.sizes, when `sized`) and where its lines ended,
  returning the message's fields (device, format, the numbers in MiB);
- `merge_within`: anchors of the family this close together are one incident told twice;
- `from_line_start`: the message's numbers start before its anchor, on the anchor's line.

Its real sample messages, with their sources and the fields they must give, are in
tests/data/oom_families/<module>.txt (tests/unit/test_oom_families.py). The rules between
families (a caching anchor named in prose, a hint that is the tail of the message before it)
are oom_message.py's. Adding a family is one module here and its samples file.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable

from runbook.evidence.launchers import module_names
from runbook.lazyre import LazyPattern, lazy
from runbook.record import record


def anchor(pattern: str, *needs: str, flags: int = 0) -> LazyPattern:
    return lazy(pattern, flags, needs=needs)


@record
class Family:
    name: str
    anchors: tuple[LazyPattern, ...]
    fields: Callable[[re.Match, str, list, frozenset[int]], dict]
    order: int = 100  # anchors at the same place: the lower order's is taken first
    sized: bool = False  # its window's sizes are read (oom_numbers.sizes) for `fields`
    merge_within: int | None = None
    from_line_start: bool = False


@functools.cache
def families() -> tuple[Family, ...]:
    """Every module of this package that holds a FAMILY, in their order (then by name)."""
    found = []
    for name in module_names(__path__):
        fam = getattr(importlib.import_module(f"{__name__}.{name}"), "FAMILY", None)
        if isinstance(fam, Family):
            found.append(fam)
    return tuple(sorted(found, key=lambda f: (f.order, f.name)))
