"""activation_checkpointing: recompute activations in the backward pass instead of keeping them
(the site's flag, a runbook template's variable, or a config file's switch); a flag is added only
where the job's program takes it (jobfiles.program)."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.jobfiles import configs as cfg
from runbook.jobfiles.config_patch import Change, JobFiles, RungPlan
from runbook.jobfiles.program import ProgramOptions
from runbook.rungs import SCRIPT, Ask, RungDef

_OFF = {"false": "true", "False": "True", "FALSE": "TRUE", "0": "1", "no": "yes", "off": "on"}


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """On: a flag given off turned on where it is written, else the site's flag the job's
    program takes added to its training command."""
    knobs, program = ask.knobs, ask.program
    flags = [n for n in knobs.activation_checkpointing if n.startswith("-")]
    # Given with an explicit off value (`--gradient_checkpointing false`, HF's boolean
    # arguments take one): off, and turned on where it is written.
    off = [h for h in bash.find(script, flags) if h.value.strip("\"'") in _OFF]
    if off:
        h = off[0]
        on = _OFF[h.value.strip("\"'")]
        new = bash.replace(script, [(h, on)])
        return new, [f"activation checkpointing on ({h.name} {h.value} -> {on})"], []
    present = bash.flag_present(script, knobs.activation_checkpointing)
    if present:
        raise RungNotApplicable(f"activation checkpointing is already on ({present})")
    if not flags:
        raise RungNotApplicable("[knobs] activation_checkpointing names no flag to add")
    micro = bash.one(
        script, [n for n in knobs.micro_batch if n.startswith("-")], "training command"
    )
    flag, why = _flag_the_program_takes(program, flags)
    # After the micro-batch flag's value: on the training command line, whatever the launcher.
    at = bash.Hit(micro.name, "", micro.end, micro.end)
    new = bash.replace(script, [(at, f" {flag}")])
    return new, [f"activation checkpointing on ({flag} added to the training command)"], [why]


def _flag_the_program_takes(program: ProgramOptions | None, flags: list[str]) -> tuple[str, str]:
    """The first of the site's activation-checkpointing flags the job's program takes (its own
    source, read by jobfiles.program): a flag it does not take would fail the rerun at its
    argument parser, so none is added on a guess. (the flag, the check that says so)"""
    if program is None or program.flags is None:
        entry = (program and program.entry) or "the job's program"
        why = (program and program.why) or "its source was not read"
        raise RungNotApplicable(
            f"cannot tell whether {entry} takes {' or '.join(flags)}: {why}",
            hint="add the flag by hand where the program takes it, or give the job's folder",
        )
    taken = next((f for f in flags if f in program.flags), None)
    if taken is None:
        raise RungNotApplicable(
            f"{program.entry} takes none of {', '.join(flags)} ({program.why}): activation "
            "checkpointing cannot be switched on from its command line",
            hint="switch it on in the program's own code or config, or name the program's flag "
            "in [knobs] activation_checkpointing",
        )
    return taken, f"{program.entry} takes {taken} ({program.why})"


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    if vars2.get("activation_checkpointing") in (True, 1, "1", "true", "True"):
        raise RungNotApplicable("activation checkpointing is already on")
    vars2["activation_checkpointing"] = 1
    changes.append("activation_checkpointing 0 -> 1")


def _configs(job: JobFiles) -> RungPlan | None:
    """activation_checkpointing where a config holds the switch (`gradient_checkpointing:
    false`): the copy with it on; None when no config has the switch."""
    script, name, rid = job.script, job.name, RUNG.id
    for f in job.files:
        if f.text is None:
            continue
        for k in cfg.find_knobs(f.name, f.text, job.cat.activation_checkpointing):
            v = k.value.strip("\"'").lower()
            if v in ("true", "1", "yes"):
                return RungPlan(rid, False, f"{k.key} is already on in {f.name}:{k.line}")
            if v in ("false", "0", "no"):
                on = "1" if v == "0" else "true"
                text = f.text[: k.start] + on + f.text[k.end :]
                new_name = cfg.copy_name(f.name, rid)
                new_script = cfg.point_at_copy(script, f, new_name)
                return RungPlan(
                    rid,
                    True,
                    changes=[
                        Change(name, name, script, new_script),
                        Change(f.name, new_name, f.text, text),
                    ],
                    values_after={k.key: True},
                    checks=[bash.bash_n(new_script, original=script)],
                )
    return None


RUNG = RungDef(
    "activation_checkpointing",
    SCRIPT,
    "turn activation checkpointing on (the site's flag or template variable)",
    template_vars=("activation_checkpointing",),
    shrinks_activations=True,
    script=_script,
    template=_template,
    configs=_configs,
)
