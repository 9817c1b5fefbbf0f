"""exclude_node: another process holds the GPU: the job resubmitted without the node; the
co-tenant's processes are reported, never killed."""

from __future__ import annotations

from runbook.rungs import NODE, RungDef

RUNG = RungDef(
    "exclude_node",
    NODE,
    "resubmit unchanged with --exclude=<node>; never kill another user's processes",
)
