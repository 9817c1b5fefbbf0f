"""shrink_world: a node is gone and the partition cannot hold the job at full size without it:
the job on one node fewer, gradient accumulation raised by old/new nodes (only when exact)."""

from __future__ import annotations

from runbook.rungs import SHRINK, _world

RUNG = _world.rung(
    "shrink_world",
    SHRINK,
    "drain <node>, resubmit on one node fewer with gradient accumulation raised by "
    "old/new nodes (only when exact), the global batch unchanged",
    drains=True,
    policy="unattended_shrink",
)
