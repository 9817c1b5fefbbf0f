"""NCCL failing to allocate its own buffers: `host:pid:tid [gpu] NCCL WARN Cuda failure 'out of
memory'` and `... NCCL WARN Failed to CUDA calloc N bytes` (one incident told twice); the GPU in
the brackets before the tag, the rank in `from rank N` when NCCL names it."""

from __future__ import annotations

import re

from runbook.evidence import oom_numbers as n
from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    g = n.F["nccl_gpu"].search(window)
    r = n.F["nccl_rank"].search(window)
    return {
        "device": "CUDA",
        "format": "other",
        "tried_mib": n.mib("nccl_calloc", window, sizes),
        "gpu": int(g.group(1)) if g else None,
        "rank": int(r.group(1)) if r else None,
    }


FAMILY = Family(
    name="nccl",
    anchors=(
        anchor(
            r"NCCL\s*WARN\s*(?:Cuda\s*failure\s*(?:\d{1,4}\s*)?'out\s*of\s*memory'|"
            r"Failed\s*to\s*CUDA\s*calloc)",
            "NCCL",
            "WARN",
        ),
    ),
    fields=fields,
    order=80,
    sized=True,
    merge_within=600,
    from_line_start=True,  # the GPU is in the line's tag, before the anchor
)
