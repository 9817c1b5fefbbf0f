"""escalate: the incident handed to a person."""

from __future__ import annotations

from runbook.rungs import HUMAN, RungDef

RUNG = RungDef("escalate", HUMAN, "hand the incident to a person")
