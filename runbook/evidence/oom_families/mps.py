"""Apple's MPS backend: `MPS backend out of memory (MPS allocated: A, other allocations: O, max
allowed: M). Tried to allocate X on private pool.` (its GB/MB are binary multiples)."""

from __future__ import annotations

import re

from runbook.evidence import oom_numbers as n
from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {
        "device": "MPS",
        "format": "other",
        "tried_mib": n.mib("tried", window, sizes),
        "allocated_by_pytorch_mib": n.mib("mps_allocated", window, sizes),
        "mps_other_allocations_mib": n.mib("mps_other", window, sizes),
        "limit_mib": n.mib("mps_max", window, sizes),
    }


FAMILY = Family(
    name="mps",
    anchors=(anchor(r"MPS\s*backend\s*out\s*of\s*memory", "MPS", "backend"),),
    fields=fields,
    order=20,
    sized=True,
)
