"""sequence_length: shorter sequences change the science: a person decides."""

from __future__ import annotations

from runbook.rungs import HUMAN, RungDef

RUNG = RungDef("sequence_length", HUMAN, "shorter sequences: changes the science, a person decides")
