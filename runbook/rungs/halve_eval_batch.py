"""halve_eval_batch: an OOM in evaluation (docs/design.md §3.1): the evaluation's own batch
halved, or HF Trainer's eval_accumulation_steps lowered to 1; the training batch is not
touched. The `eval_batch` cause takes it alone (playbooks/oom.yaml)."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.rungs import SCRIPT, Ask, RungDef
from runbook.rungs._program import program_default


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """The evaluation's batch / 2 (an OOM in evaluation: docs/design.md §3.1); at 1, HF Trainer's
    eval_accumulation_steps lowered to 1 (predictions leave the GPU after every batch). The
    training batch is not touched, so the global batch stays as it is."""
    knobs = ask.knobs
    checks = ["the training batch (micro-batch, accumulation, global batch) is not touched"]
    ev = bash.maybe(script, bash.names(knobs, "eval_batch"))
    e = bash.int_value(script, ev) if ev is not None else None
    if ev is not None and e is not None and e >= 2:
        new = e // 2
        edits = [(bash.literal_site(script, ev), str(new))]
        return bash.replace(script, edits), [f"evaluation batch {e} -> {new} ({ev.name})"], checks
    acc = bash.maybe(script, bash.names(knobs, "eval_accumulation"))
    a = bash.int_value(script, acc) if acc is not None else None
    if acc is not None and a is not None and a > 1:
        edits = [(bash.literal_site(script, acc), "1")]
        return (
            bash.replace(script, edits),
            [f"eval_accumulation_steps {a} -> 1 ({acc.name}): predictions leave the GPU each step"],
            checks,
        )
    if ev is None:
        raise RungNotApplicable(
            "the job script has no evaluation batch knob (looked for "
            + ", ".join(bash.names(knobs, "eval_batch"))
            + ")",
            hint="add the name the script uses to [knobs] eval_batch in the site config",
        )
    raise RungNotApplicable(
        f"the evaluation batch {ev.name}={ev.value} cannot be halved (it is 1 or not a number), "
        "and no eval_accumulation_steps above 1 is set"
    )


def _program(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """The evaluation's batch / 2 where it is only the program's default (HF's
    per_device_eval_batch_size 8, an argparse `--eval_batch_size` default): the program's own
    flag added after its entry file."""
    names = bash.names(ask.knobs, "eval_batch")
    d, entry = program_default(script, ask.program, names, "eval_batch")
    if d.value < 2:
        raise RungNotApplicable(f"the evaluation batch {d.flag} is {d.value} by default")
    new = bash.replace(script, [(entry, f" {d.flag} {d.value // 2}")])
    return (
        new,
        [f"evaluation batch {d.value} -> {d.value // 2} ({d.flag} added: the default, {d.where})"],
        ["the training batch (micro-batch, accumulation, global batch) is not touched"],
    )


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    e = vars2.get("eval_batch")
    if not isinstance(e, int) or e < 2:
        raise RungNotApplicable(f"the template's eval_batch is {e!r}: it cannot be halved")
    vars2["eval_batch"] = e // 2
    changes.append(f"eval_batch {e} -> {e // 2}")
    checks.append("the training batch is not touched")


RUNG = RungDef(
    "halve_eval_batch",
    SCRIPT,
    "evaluation batch / 2 (per-device eval batch size), or HF Trainer's "
    "eval_accumulation_steps set so predictions leave the GPU; the training batch is "
    "not touched",
    template_vars=("eval_batch",),
    taken_because="the OOM is in evaluation: its own batch is halved, the training batch is not "
    "touched",
    tried_again="the lineage already halved the evaluation batch and it ran out in evaluation again: check the "
    "evaluation loop (no_grad, predictions kept on the GPU)",
    by_hand="halve the evaluation's batch where the job sets it",
    refused_because="the OOM is in evaluation and {reason}; halving the training micro-batch "
    "would not change the evaluation",
    script=_script,
    template=_template,
    program=_program,
)
