"""eval_accumulation: an evaluation that keeps every batch's predictions on the GPU until it
ends (docs/design.md §3.1): HF Trainer's eval_accumulation_steps set to 1, so they move to the
CPU after each batch. The `eval_predictions` cause takes it alone (playbooks/oom.yaml)."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.rungs import SCRIPT, Ask, RungDef

# HF TrainingArguments' batch flags: a command line that passes one runs an HF Trainer, whose
# argument parser takes eval_accumulation_steps too, spelled the same way (underscores or dashes).
_HF_BATCH_FLAGS = [
    "--per_device_eval_batch_size",
    "--per-device-eval-batch-size",
    "--per_device_train_batch_size",
    "--per-device-train-batch-size",
]


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """HF Trainer's eval_accumulation_steps set to 1 (an OOM in evaluation where every batch's
    predictions stay on the GPU until it ends: docs/design.md §3.1): they move to the CPU after each
    batch. A value above 1 is lowered; where the script sets none, the flag is added next to the
    Trainer's batch flag on its command line, in that flag's spelling. The batches, evaluation's
    and training's, are not touched."""
    knobs = ask.knobs
    checks = ["the evaluation batch and the training batch are not touched"]
    acc = bash.maybe(script, bash.names(knobs, "eval_accumulation"))
    if acc is not None:
        a = bash.int_value(script, acc)
        if a is None:
            raise RungNotApplicable(
                f"{acc.name} is {acc.value!r}, not a number runbook can lower",
                hint=f"set {acc.name} to 1 where the script gives it that value",
            )
        if a <= 1:
            raise RungNotApplicable(
                f"{acc.name} is already {a}: the predictions already leave the GPU after every "
                "batch",
                hint="what runs out is more than the kept predictions: read the evaluation loop",
            )
        edits = [(bash.literal_site(script, acc), "1")]
        return (
            bash.replace(script, edits),
            [
                f"eval_accumulation_steps {a} -> 1 ({acc.name}): predictions leave the GPU each batch"
            ],
            checks,
        )
    # Beside the evaluation's batch flag where there is one, else the training's.
    anchor = next(
        iter(bash.find(script, _HF_BATCH_FLAGS[:2]) + bash.find(script, _HF_BATCH_FLAGS[2:])), None
    )
    if anchor is None:
        raise RungNotApplicable(
            "the job script sets no eval_accumulation_steps and passes no HF Trainer batch flag "
            f"to add it beside (looked for {', '.join(bash.names(knobs, 'eval_accumulation'))}, "
            f"{', '.join(_HF_BATCH_FLAGS)})",
            hint="set eval_accumulation_steps=1 where the job builds its TrainingArguments",
        )
    flag = "--eval-accumulation-steps" if "-" in anchor.name[2:] else "--eval_accumulation_steps"
    added = f"{flag}{'=' if script[anchor.start - 1] == '=' else ' '}1"
    new = script[: anchor.end] + " " + added + script[anchor.end :]
    return new, [f"{added} added after {anchor.name}: predictions leave the GPU each batch"], checks


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    a = vars2.get("eval_accumulation")
    if not isinstance(a, int) or a < 2:
        raise RungNotApplicable(
            f"the template's eval_accumulation is {a!r}, not a number above 1 to lower to 1",
            hint="give the template an eval_accumulation variable, or set "
            "eval_accumulation_steps=1 in the job by hand",
        )
    vars2["eval_accumulation"] = 1
    changes.append(f"eval_accumulation {a} -> 1")
    checks.append("the evaluation batch and the training batch are not touched")


RUNG = RungDef(
    "eval_accumulation",
    SCRIPT,
    "HF Trainer's eval_accumulation_steps set to 1 (added beside the Trainer's batch flag "
    "where the script sets none): each evaluation batch's predictions move to the CPU; "
    "the evaluation batch and the training batch are not touched",
    template_vars=("eval_accumulation",),
    taken_because="the OOM is in evaluation, which kept every batch's predictions on the GPU: "
    "eval_accumulation_steps=1 moves them to the CPU after each batch; no batch is touched",
    tried_again="the lineage already set eval_accumulation_steps to 1 and it ran out in evaluation again: check the "
    "evaluation loop (no_grad, predictions kept on the GPU)",
    by_hand="set eval_accumulation_steps=1 where the job builds its Trainer's arguments (a loop "
    "of its own: move each batch's outputs to the CPU)",
    refused_because="the OOM is in evaluation and {reason}; halving the training micro-batch "
    "would not change the evaluation",
    script=_script,
    template=_template,
)
