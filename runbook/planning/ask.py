"""Asking the job's program itself (issue 54, item 2; docs/design.md, "a check is a proof").

Where the program can answer without training, its answer is the truth the static reading must
agree with: a LightningCLI prints the configuration in force with the job's words
(`--print_config`), a Hydra program its job config (`--cfg job`), a parser its options
(`--help`). Only a program the static reading proved answers so is asked: one whose parser runs
from its entry point, a LightningCLI, a Hydra app. Each question is the plan's own new command
line (its words after the entry file), so the answer is about exactly what the rerun would run.

This module decides the question and judges the answer (pure); the caller runs it (`run`: argv
in, exit code, stdout, stderr and seconds out) in the job's folder, as the job's owner, with no
GPU and a time limit. A program that cannot answer (it fails, or times out) leaves the plan as the static
reading made it, saying so; an answer that disagrees refuses the rung, showing both."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable

import yaml

from runbook.jobfiles import bash
from runbook.jobfiles.config_patch import RungPlan
from runbook.jobfiles.lightning_cli import dig
from runbook.record import record

Run = Callable[[list[str]], tuple[int, str, str, float]]


@record
class Question:
    argv: list[str]  # after the interpreter: the entry file (or -m module) and its words
    judge: Callable[[str], str | None]  # the answer's stdout -> None (agrees) or what differs
    what: str  # what it asks, in words


def command_words(new_script: str, entry: str) -> tuple[list[str], list[str]] | None:
    """(how the interpreter names the program, its words) on the new script's training line."""
    hit = bash.entry_word(new_script, entry)
    if hit is None:
        return None
    line = new_script[hit.end : bash.command_end(new_script, hit.end)].replace("\\\n", " ")
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if any("$" in w for w in words):  # a variable runbook cannot read: no honest question
        return None
    return ([hit.name] if hit.name.endswith(".py") else ["-m", hit.name]), words


def question(old: str, new: str, values_after: dict, program) -> Question | None:
    """The question for a change of the job's script from `old` to `new`, or None where the
    program is not one the static reading proved can answer, or the change adds nothing to ask
    about."""
    if program is None or program.entry is None or old == new:
        return None
    cmd = command_words(new, program.entry)
    if cmd is None:
        return None
    head, words = cmd
    if program.cli is not None and not program.cli.why and program.cli.data is not None:
        return _lightning(values_after, program, head, words)
    before = command_words(old, program.entry)
    was = set(before[1]) if before else set()
    overrides = [w for w in words if _OVERRIDE.fullmatch(w) and w not in was]
    if program.hydra and overrides:
        return _hydra(head, words, overrides, program.hydra)
    had = {w.split("=", 1)[0] for w in was}
    added = [f for f in (w.split("=", 1)[0] for w in words if w.startswith("--")) if f not in had]
    if added and program.flags:
        return _help(head, added)
    return None


def _printed(want: dict) -> Callable[[str], str | None]:
    """The judge of a program that prints its configuration in force as YAML: each dotted key
    of `want` at the value the plan set, or what it prints instead."""

    def judge(out: str) -> str | None:
        try:
            printed = yaml.safe_load(out)
        except yaml.YAMLError:
            return "what it prints is not YAML runbook reads"
        got = {k: dig(printed, k) if isinstance(printed, dict) else None for k in want}
        wrong = [
            f"it prints {k} {got[k]!r} (the plan: {v!r})" for k, v in want.items() if got[k] != v
        ]
        return "; ".join(wrong) or None

    return judge


def _lightning(values_after: dict, program, head, words) -> Question:
    cli = program.cli
    key = cli.prefix + cli.data.micro
    want = {key: values_after.get("micro_batch"),
            "trainer.accumulate_grad_batches": values_after.get("grad_accum")}  # fmt: skip

    shown = ", ".join(f"{k} {v}" for k, v in want.items())
    return Question([*head, *words, "--print_config"], _printed(want),
                    f"it prints {shown}, as planned")  # fmt: skip


_OVERRIDE = re.compile(r"[\w][\w.]*=[^\s=]+")  # a Hydra override `model.micro_batch_size=2`


def _hydra(head, words, overrides: list[str], where: str) -> Question:
    want = {k: yaml.safe_load(v) for k, v in (o.split("=", 1) for o in overrides)}

    shown = ", ".join(f"{k} {v}" for k, v in want.items())
    return Question([*head, *words, "--cfg", "job"], _printed(want),
                    f"its job config (Hydra app, {where}) has {shown}, as planned")  # fmt: skip


def _help(head: list[str], flags: list[str]) -> Question:
    def judge(out: str) -> str | None:
        missing = [f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", out)]
        return f"it does not list {', '.join(missing)}" if missing else None

    return Question([*head, "--help"], judge, f"its --help lists {', '.join(flags)}")


def verdict(
    old: str,
    new: str,
    values_after: dict,
    lands: list[str],
    program,
    python: str,
    run: Run,
    how: str = "",
) -> tuple[str | None, str | None]:
    """(a check line, or None where nothing was asked; a refusal where the answer disagrees).
    `how`: how it was asked, said with the question (`as alice, with PATH only`)."""
    q = question(old, new, values_after, program)
    if q is None:
        return None, None
    shown = " ".join(shlex.quote(w) for w in [python, *q.argv]) + (f"; {how}" if how else "")
    try:
        rc, out, err, secs = run([python, *q.argv])
    except OSError as e:
        return f"asked the program ({shown}): it could not be run ({e})", None
    if rc != 0:
        tail = (err.strip().splitlines() or ["no message"])[-1][:200]
        return (f"asked the program ({shown}): no answer (exit {rc}: {tail}); the plan stands "
                "on the reading above"), None  # fmt: skip
    differs = q.judge(out)
    if differs:
        return None, (f"the program's own answer disagrees with the plan: asked ({shown}), "
                      f"{differs}; the plan had read: {'; '.join(lands)}")  # fmt: skip
    return f"asked the program ({shown}, {secs:.1f} s): {q.what}", None


def asked(plan: RungPlan, program, python: str, run: Run) -> RungPlan:
    """The plan with the program's answer: a check line where it agrees (or could not answer),
    a refusal showing both where it disagrees."""
    if not plan.applicable or not plan.changes:
        return plan
    c = plan.changes[0]
    check, refusal = verdict(c.old, c.new, plan.values_after, plan.lands, program, python, run)
    if refusal:
        return RungPlan(plan.id, False, refusal)
    return dataclasses.replace(plan, checks=[*plan.checks, check]) if check else plan
