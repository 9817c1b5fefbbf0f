"""The job's program keeps its batch where only its own command line reaches it: a program that
configures itself from `--key=value` words (jobfiles.configurator), an OpenMMLab Python config
under `--cfg-options` (planning.mm_plan), a LightningCLI (planning.lightning_plan). Each plan is a
change of the job script's training command alone, the same in `runbook plan` and in an
incident (sbatch_patch.from_program), where the failure's fit may ask a smaller micro-batch than
half."""

from __future__ import annotations

from runbook.jobfiles import bash
from runbook.jobfiles.config_patch import Change, RungPlan
from runbook.jobfiles.program import ACCUM_NAME, PER_GPU
from runbook.planning import lightning_plan, mm_plan
from runbook.record import record
from runbook.rungs._program import entry_word
from runbook.rungs.halve_micro_batch import new_sizes


@record(frozen=True)
class ScriptOnly:
    """The job's script alone: all these plans change (its training command)."""

    script: str
    name: str


def script_family(rid: str, job, program, why: str, target: int | None = None) -> RungPlan | None:
    """The plan of the family the job's program is (None: none of these); `why` is what the
    script and the program's options said first."""
    if program is None:
        return None
    if program.configurator is not None:
        return configured(rid, job, program, why, target)
    if program.mm is not None:
        return mm_plan.plan(rid, job, program, why, target)
    if program.cli is not None:
        return lightning_plan.plan(rid, job, program, why, target)
    return None


def configured(rid: str, job, program, why: str, target: int | None = None) -> RungPlan:
    """The micro-batch a self-configuring program (jobfiles.configurator) keeps in a global that
    its own comment calls the micro-batch, with its accumulation global: both set on the command
    line by `--key=value` after the config files (the last word wins), the global batch kept."""
    conf = program.configurator
    micro = next((k for k, c in conf.comments.items() if PER_GPU.search(c)), None)
    accum = next((k for k in conf.values if ACCUM_NAME.match(k)), None)
    if micro is None or accum is None or micro not in conf.values:
        return RungPlan(rid, False, f"{why}; {conf.file} sets globals, but no global is said to "
                        "be the micro-batch with an accumulation beside it")  # fmt: skip
    (m, m_at), (a, a_at) = conf.values[micro], conf.values[accum]
    sizes = new_sizes(m, a, target)
    if isinstance(sizes, str):
        return RungPlan(rid, False, f"{why}; {micro} = {m} ({m_at}): {sizes}")
    m2, a2 = sizes
    entry = entry_word(job.script, program.entry)
    words = bash.words_after(job.script, entry.end) if entry else []
    if entry is None or any(w.lstrip("\"'").startswith("$") for w in words):
        return RungPlan(
            rid, False, f"{why}; the command's arguments are not all words runbook reads"
        )
    end = len(job.script[: bash.command_end(job.script, entry.end)].rstrip())
    added = f" --{micro}={m2} --{accum}={a2}"
    new_script = job.script[:end] + added + job.script[end:]
    checks = [
        conf.proof,
        f"{micro} is the micro-batch: {program.entry} says {conf.comments[micro]!r}; in force "
        f"{m} ({m_at}), {accum} {a} ({a_at})",
        f"global batch: micro-batch x accumulation {m} x {a} = {m2} x {a2}, unchanged "
        "(the last --key=value wins over the config files)",
        bash.bash_n(new_script, original=job.script),
    ]
    lands = [f"{added.strip()} at the end of the training command"]
    return RungPlan(rid, True, changes=[Change(job.name, job.name, job.script, new_script)],
                    values_after={"micro_batch": m2, "grad_accum": a2}, checks=checks,
                    lands=lands)  # fmt: skip
