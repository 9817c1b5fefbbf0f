"""The allocator rungs' shared edit: a setting under both variable names, merged with what the
job already sets (a plain script's exports, a runbook template's `alloc_conf`)."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.rungs import ALLOC_VARS, ALLOCATOR, Ask, RungDef


def set_allocator(script: str, setting: str) -> tuple[str, list[str], list[str]]:
    """Allocator settings under both variable names, merged with what the script already sets."""
    current = {}
    for name in ALLOC_VARS:
        for h in bash.find(script, [name]):
            current[name] = h
    existing = ""
    if current:
        existing = next(iter(current.values())).value.strip("\"'")
    items = [s for s in existing.split(",") if s]
    key = setting.split(":")[0]
    items = [s for s in items if s.split(":")[0] != key] + [setting]
    value = ",".join(items)
    if existing and existing == value and len(current) == len(ALLOC_VARS):
        raise RungNotApplicable(f"allocator already set to {value}")
    edits = [(h, value) for h in current.values()]
    new = bash.replace(script, edits)
    missing = [n for n in ALLOC_VARS if n not in current]
    if missing:
        lines = new.splitlines(keepends=True)
        at = 0
        for i, line in enumerate(lines):  # after the shebang, header and #SBATCH block
            if line.startswith("#!") or line.startswith("#SBATCH") or line.startswith("# runbook:"):
                at = i + 1
        block = [f"export {n}={value}  # set by runbook\n" for n in missing]
        new = "".join(lines[:at] + block + lines[at:])
    return (
        new,
        [f"allocator: {' and '.join(ALLOC_VARS)}={value}"],
        ["both variable names set (PyTorch 2.9 reads only PYTORCH_CUDA_ALLOC_CONF for CUDA)"],
    )


def _merged(current: str, setting: str) -> str:
    items = [s for s in current.split(",") if s]
    return ",".join([s for s in items if s.split(":")[0] != setting.split(":")[0]] + [setting])


def rung(rung_id: str, setting: str, words: str) -> RungDef:
    """An allocator rung: `setting` added in the script, or in the template's alloc_conf (and in
    the rendered script too where the template does not export it)."""

    def script(text: str, ask: Ask) -> tuple[str, list[str], list[str]]:
        return set_allocator(text, setting)

    def template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
        vars2["alloc_conf"] = _merged(str(vars2.get("alloc_conf", "")), setting)
        changes.append(f"alloc_conf -> {vars2['alloc_conf']}")

    return RungDef(
        rung_id,
        ALLOCATOR,
        words,
        allocator=setting,
        template_vars=("alloc_conf",),
        script=script,
        template=template,
    )
