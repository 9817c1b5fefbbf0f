"""exclude_suspect: a hung job whose suspects stand on one node: resubmitted without it, with
the hang playbook's debug settings."""

from __future__ import annotations

from runbook.rungs import NODE, RungDef

RUNG = RungDef(
    "exclude_suspect",
    NODE,
    "resubmit from the last valid checkpoint with --exclude=<suspect node> and the "
    "playbook's debug settings (flight recorder, NCCL_DEBUG=INFO)",
    debug_env=True,
)
