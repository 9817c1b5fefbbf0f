"""expandable_segments: the caching allocator maps memory in growing segments instead of fixed
blocks, so a fragmented pool can serve a request its largest free block could not (PyTorch's own
OOM message suggests it: docs/design.md §3)."""

from __future__ import annotations

from runbook.rungs import EXPANDABLE, in_words
from runbook.rungs._allocator import rung

RUNG = rung("expandable_segments", EXPANDABLE, in_words(EXPANDABLE))
