"""With expandable_segments on (PyTorch >= 2.1), a mapping the driver refuses is logged as a c10
warning with exact byte counts (`expandable_segments: memory mapping failed with OOM on device 0
while trying to map N bytes (free: F, total: T)`); the error raised after it may not say out of
memory (an AOTInductor call, a custom op)."""

from __future__ import annotations

import re

from runbook.evidence.oom_families import Family, anchor


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    return {
        "device": "CUDA",
        "format": "other",
        "gpu": int(m.group("gpu")),
        "tried_mib": int(m.group("tried")) / 2**20,
        "free_mib": int(m.group("free")) / 2**20,
        "total_mib": int(m.group("total")) / 2**20,
        "allocator_conf": True,  # expandable_segments is itself an allocator setting
    }


FAMILY = Family(
    name="expandable",
    anchors=(
        anchor(
            r"expandable_segments\s*:\s*memory\s*mapping\s*failed\s*with\s*OOM\s*on\s*device\s*"
            r"(?P<gpu>\d{1,4}(?!\d))\s*while\s*trying\s*to\s*map\s*(?P<tried>\d{1,20}(?!\d))\s*"
            r"bytes\s*\(\s*free\s*:\s*(?P<free>\d{1,20}(?!\d))\s*,\s*total\s*:\s*"
            r"(?P<total>\d{1,20}(?!\d))",
            "expandable_segments",
            "mapping",
        ),
    ),
    fields=fields,
    order=30,
)
