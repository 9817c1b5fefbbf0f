"""drain_node: a co-tenant that comes back: the node drained with a reason, the job resubmitted
without it."""

from __future__ import annotations

from runbook.rungs import NODE, RungDef

RUNG = RungDef(
    "drain_node",
    NODE,
    "drain <node> with a reason, resubmit with --exclude=<node>",
    drains=True,
)
