"""resubmit_debug: a hung job with no one suspect node: resubmitted with the hang playbook's
debug settings."""

from __future__ import annotations

from runbook.rungs import NODE, RungDef

RUNG = RungDef(
    "resubmit_debug",
    NODE,
    "resubmit from the last valid checkpoint with the playbook's debug settings "
    "(flight recorder, NCCL_DEBUG=INFO)",
    debug_env=True,
    needs_node=False,
)
