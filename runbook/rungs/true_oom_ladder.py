"""true_oom_ladder: fragmentation's last rung: the true_oom ladder follows."""

from __future__ import annotations

from runbook.rungs import CONTINUE, RungDef

RUNG = RungDef(
    "true_oom_ladder",
    CONTINUE,
    "continue with the true_oom ladder",
    continues_with="true_oom",
)
