"""shrink_world: a node is gone and the partition cannot hold the job at full size without it:
the job on one node fewer, gradient accumulation raised by old/new nodes (only when exact)."""

from __future__ import annotations

from runbook.rungs import SHRINK, RungDef, _world

RUNG = RungDef(
    "shrink_world",
    SHRINK,
    "drain <node>, resubmit on one node fewer with gradient accumulation raised by "
    "old/new nodes (only when exact), the global batch unchanged",
    template_vars=("grad_accum", "nodes"),
    drains=True,
    sbatch_options=frozenset({"nodes", "ntasks"}),
    policy="unattended_shrink",
    script=_world.script,
    template=_world.template,
)
