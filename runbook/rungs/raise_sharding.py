"""raise_sharding: the sharding degree one step up (a ZeRO stage, capped at 3; else doubled),
so each rank holds a smaller share of the parameters, gradients and optimizer state."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.rungs import SCRIPT, Ask, RungDef


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    hit = bash.one(script, ask.knobs.sharding, "sharding")
    value = bash.int_value(script, hit)
    if value is None:
        raise RungNotApplicable(f"sharding {hit.name}={hit.value} is not a number")
    top = 3 if "zero" in hit.name.lower() else None
    if top is not None and value >= top:
        raise RungNotApplicable(f"{hit.name} is already {value}, the highest ZeRO stage")
    new = value + 1 if top is not None else value * 2
    return (
        bash.replace(script, [(bash.literal_site(script, hit), str(new))]),
        [f"sharding {hit.name} {value} -> {new}"],
        [],
    )


RUNG = RungDef(
    "raise_sharding",
    SCRIPT,
    "raise the sharding degree by one (FSDP/ZeRO stage), capped at 3",
    script=_script,
)
