"""raise_mem: the job's host RAM (--mem) doubled, after a host-RAM OOM; passed over when one
refused host allocation alone was larger than the doubled memory."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.evidence.units import human_mib
from runbook.jobfiles import bash
from runbook.rungs import SCRIPT, Ask, RungDef, Situation


def _applies(s: Situation) -> str | None:
    if not s.host_request_mib:
        return None
    mem = bash.job_mem_mib(s.script)
    if mem and s.host_request_mib > 2 * mem:
        return (
            f"one refused host allocation asked for {human_mib(s.host_request_mib)}, more than "
            f"the doubled --mem ({human_mib(2 * mem)}): more RAM would fail the same way"
        )
    return None


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    m = bash.SBATCH_MEM.search(script)
    if not m:
        raise RungNotApplicable("the script has no `#SBATCH --mem=` line to raise")
    value = int(m.group(1)) * 2
    hit = bash.Hit("--mem", m.group(1), m.start(1), m.end(1))
    return (
        bash.replace(script, [(hit, str(value))]),
        [f"--mem {m.group(1)}{m.group(2)} -> {value}{m.group(2)}"],
        [],
    )


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    mem = vars2.get("mem_mib")
    if not isinstance(mem, int):
        raise RungNotApplicable(f"the template's mem_mib is {mem!r}, not a number to raise")
    vars2["mem_mib"] = mem * 2
    changes.append(f"mem_mib {mem} -> {mem * 2}")


RUNG = RungDef(
    "raise_mem",
    SCRIPT,
    "double the job's --mem (host RAM)",
    template_vars=("mem_mib",),
    sbatch_options=frozenset({"mem", "mem_per_cpu"}),
    applies=_applies,
    script=_script,
    template=_template,
)
