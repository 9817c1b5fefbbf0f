"""drain_and_exclude: a GPU fault: the node drained with a reason, the job resubmitted unchanged
without it."""

from __future__ import annotations

from runbook.rungs import NODE, RungDef

RUNG = RungDef(
    "drain_and_exclude",
    NODE,
    "drain <node> with a reason, resubmit unchanged with --exclude=<node>",
    drains=True,
)
