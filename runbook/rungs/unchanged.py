"""unchanged: the job resubmitted as it is (a node rung's edit: the script is not touched)."""

from __future__ import annotations

from runbook.rungs import NODE, Ask, RungDef


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    return script, [], []


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    return None


RUNG = RungDef(
    "unchanged",
    NODE,
    "resubmit the job as it is",
    needs_node=False,
    script=_script,
    template=_template,
)
