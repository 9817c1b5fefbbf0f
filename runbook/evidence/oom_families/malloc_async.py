"""The cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync): `Allocation on
device N would exceed allowed memory. (out of memory)` then its block (`Currently allocated :`,
`Requested :`, `Device limit :`, `Free (according to CUDA) :`, `PyTorch limit (set by
user-supplied memory fraction) :`)."""

from __future__ import annotations

import re

from runbook.evidence import oom_numbers as n
from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {
        "device": "CUDA",
        "format": "other",
        "gpu": int(m.group("gpu")),
        "allocated_by_pytorch_mib": n.mib("ma_allocated", window, sizes),
        "tried_mib": n.mib("ma_requested", window, sizes),
        "total_mib": n.mib("ma_total", window, sizes),
        "free_mib": n.mib("ma_free", window, sizes),
        "limit_mib": n.mib("ma_limit", window, sizes),
        "allocator_conf": True,  # this backend is itself chosen with PYTORCH_CUDA_ALLOC_CONF
    }


FAMILY = Family(
    name="malloc_async",
    anchors=(
        anchor(
            r"Allocation\s*on\s*device\s*(?P<gpu>\d{1,18}(?!\d))\s*would\s*exceed\s*allowed",
            "Allocation",
            "exceed",
        ),
    ),
    fields=fields,
    order=10,
    sized=True,
)
