"""cuBLAS failing to allocate its workspace: `CUBLAS_STATUS_ALLOC_FAILED` (no numbers)."""

from __future__ import annotations

import re

from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {"device": "CUDA", "format": "cuda_runtime"}


FAMILY = Family(
    name="cublas",
    anchors=(anchor(r"CUBLAS_STATUS_ALLOC_FAILED", "CUBLAS_STATUS_ALLOC_FAILED"),),
    fields=fields,
    order=70,
    merge_within=0,
)
