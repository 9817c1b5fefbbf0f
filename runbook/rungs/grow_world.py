"""grow_world: a shrunk job back on its lineage's original node count once the nodes are back
and it has saved a checkpoint, gradient accumulation lowered by old/new nodes (only when exact).
It cancels a job that trains well: only a site that said so lets it act unattended."""

from __future__ import annotations

from runbook.rungs import GROW, _world

RUNG = _world.rung(
    "grow_world",
    GROW,
    "when the nodes are back and the job has saved a checkpoint: cancel it, resubmit on "
    "the lineage's original node count from that checkpoint with gradient accumulation "
    "lowered by old/new nodes (only when exact), the global batch unchanged",
    needs_node=False,
    policy="unattended_grow",
    policy_alone=True,  # it cancels a job that trains well: the site's word is the whole say
)
