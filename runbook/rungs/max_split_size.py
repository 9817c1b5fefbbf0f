"""max_split_size: the allocator does not split blocks above 512 MiB, so large free blocks stay
whole for large requests (the fragmentation ladder's second rung)."""

from __future__ import annotations

from runbook.rungs import in_words
from runbook.rungs._allocator import rung

MAX_SPLIT = "max_split_size_mb:512"

RUNG = rung("max_split_size", MAX_SPLIT, in_words(MAX_SPLIT))
