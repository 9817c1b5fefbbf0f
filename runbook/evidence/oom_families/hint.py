"""PyTorch's allocator hint, printed only as the tail of a caching-allocator OOM message
(c10/cuda/CUDACachingAllocator.cpp). Alone, it is a fragment whose first lines were cut (a log
collector's line limit, a paste): an OOM happened, its numbers are lost."""

from __future__ import annotations

import re

from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    # The expandable_segments hint is PyTorch >= 2.1's message ("new"), max_split_size_mb the
    # older one's.
    return {"device": "CUDA", "format": "old" if "max_split" in m.group(0) else "new"}


FAMILY = Family(
    name="hint",
    anchors=(
        anchor(
            r"If\s*reserved\s*(?:but\s*unallocated\s*)?memory\s*is\s*(?:large|>>\s*allocated\s*"
            r"memory)\s*try\s*setting\s*(?:PYTORCH_(?:CUDA_)?ALLOC_CONF=expandable_segments|"
            r"max_split_size_mb)",
            "reserved",
            "setting",
        ),
    ),
    fields=fields,
    order=90,
)
