"""Old PyTorch (before 1.0): `THCudaCheck FAIL file=... line=N error=2 : out of memory`, then
`RuntimeError: cuda runtime error (2) : out of memory at ...`: one incident told twice, and no
numbers."""

from __future__ import annotations

import re

from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {"device": "CUDA", "format": "cuda_runtime"}


FAMILY = Family(
    name="thc",
    anchors=(
        anchor(
            r"THCudaCheck\s*FAIL\b[^\n]{0,400}?error\s*=\s*2\s*:\s*out\s*of\s*memory",
            "THCudaCheck",
        ),
        # "err(2)": how people retype it (the message itself says "error (2)").
        anchor(
            r"cuda\s*runtime\s*err(?:or)?\s*\(\s*2\s*\)\s*:\s*out\s*of\s*memory",
            "runtime",
            "memory",
        ),
    ),
    fields=fields,
    order=50,
    merge_within=1200,
)
