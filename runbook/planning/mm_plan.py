"""Halving the micro-batch of an OpenMMLab program (jobfiles.mmconfig): `--cfg-options
train_dataloader.batch_size=H optim_wrapper.accumulative_counts=2A` on its command line, merged
by the program over its config after the files (the config files stay as they are: other jobs
read them). Only mmengine's configs: its OptimWrapper takes `accumulative_counts`; an mmcv 1.x
config accumulates only through another optimizer hook, which runbook does not swap in."""

from __future__ import annotations

import re

from runbook.jobfiles import bash, mmconfig
from runbook.jobfiles.config_patch import Change, RungPlan
from runbook.rungs._program import entry_word
from runbook.rungs.halve_micro_batch import new_sizes, whole

BATCH = "train_dataloader.batch_size"
ACCUM = "optim_wrapper.accumulative_counts"
# The wrappers of mmengine that take accumulative_counts as OptimWrapper does (AmpOptimWrapper is
# what the programs' own --amp sets). Another type (DeepSpeed's, ColossalAI's) keeps its own.
_WRAPPERS = (None, "OptimWrapper", "AmpOptimWrapper")


def _in_force(conf, over: dict, key: str) -> tuple[object, str | None]:
    if key in over:
        return over[key][0], "the job's --cfg-options"
    value, at = mmconfig.get(conf.values, key)
    if at is not None and conf.chain and not at.startswith(conf.chain[-1] + ":"):
        at += f", a _base_ of {conf.chain[-1]}"
    return value, at


def plan(rid: str, job, program, why: str, target: int | None = None) -> RungPlan:
    mm, conf = program.mm, program.mm_config
    entry = entry_word(job.script, program.entry)
    words = bash.words_after(job.script, entry.end) if entry else []

    def refuse(what: str) -> RungPlan:
        return RungPlan(rid, False, f"{why}; {program.entry} is an OpenMMLab program: {what}")

    if isinstance(conf.values, mmconfig.Unknown):
        return refuse(f"its config {conf.file} was not read: {conf.values.why}")
    if mm.engine != "mmengine":
        return refuse(f"it loads its config with {mm.engine} 1.x, whose accumulation is an "
                      "optimizer hook runbook does not swap in")  # fmt: skip
    if entry is None or any(w.lstrip("\"'").startswith("$") for w in words[1:]):
        return refuse("its arguments are not all words runbook reads (one may set --cfg-options)")
    over = mmconfig.overrides(words)
    (m, m_at), (a, a_at) = _in_force(conf, over, BATCH), _in_force(conf, over, ACCUM)
    wrapper, w_at = _in_force(conf, over, "optim_wrapper.type")
    if m_at is None:
        return refuse(f"{conf.file} sets no {BATCH} ({m!r})" if m is not None
                      else f"{conf.file} and its _base_ files set no {BATCH}")  # fmt: skip
    if mmconfig.get(conf.values, "optim_wrapper")[1] is None or wrapper not in _WRAPPERS:
        return refuse(f"its optim_wrapper is {wrapper!r} ({w_at}), not one runbook knows takes "
                      "accumulative_counts")  # fmt: skip
    if a_at is None:
        a, a_at = (
            1,
            f"not set by {conf.file} or its _base_ files: {wrapper or 'OptimWrapper'}'s default",
        )
    scale, s_at = _in_force(conf, over, "auto_scale_lr.enable")
    if "--auto-scale-lr" in words or scale in (True, "True", "true"):
        said = "--auto-scale-lr" if "--auto-scale-lr" in words else f"auto_scale_lr.enable ({s_at})"
        return refuse(f"{said} scales the learning rate by world size x {BATCH}, without the "
                      "accumulation: halving the micro-batch would halve the learning rate")  # fmt: skip
    sizes = new_sizes(whole(m), whole(a), target)
    if isinstance(sizes, str):
        return refuse(f"{BATCH} {m!r} ({m_at}), accumulation {a!r} ({a_at}): {sizes}")
    (m, a), (m2, a2) = (whole(m), whole(a)), sizes
    new_script, added = _edited(job.script, entry.end, over, {BATCH: m2, ACCUM: a2})
    checks = [
        mm.proof + "; its parser defines --cfg-options",
        f"{BATCH} is the micro-batch (mmengine builds each rank's DataLoader with it): in force "
        f"{m} ({m_at})",
        f"{ACCUM} in force {a} ({a_at})",
        f"global batch per rank: {BATCH} x {ACCUM} {m} x {a} = {m2} x {a2}, unchanged "
        "(--cfg-options merges after the config files)",
        "learning rate unchanged: no --auto-scale-lr, and auto_scale_lr.enable "
        + (f"{scale!r} ({s_at})" if s_at else "not set"),
        bash.bash_n(new_script, original=job.script),
    ]
    return RungPlan(rid, True, changes=[Change(job.name, job.name, job.script, new_script)],
                    values_after={"micro_batch": m2, "grad_accum": a2}, checks=checks,
                    lands=[added])  # fmt: skip


def _edited(script: str, after: int, over: dict, pairs: dict[str, int]) -> tuple[str, str]:
    """The script with `pairs` set on the program's command: a pair the job's --cfg-options
    already sets changed in place, the rest after its --cfg-options (or a new one at the end)."""
    end = len(script[: bash.command_end(script, after)].rstrip())
    head, body, tail = script[:after], script[after:end], script[end:]
    said = []
    for key, value in pairs.items():
        if key in over:
            body = re.sub(rf"(?<=\s){re.escape(key)}=\S+", f"{key}={value}", body, count=1)
            said.append(f"{key}={value} in the job's --cfg-options")
    rest = " ".join(f"{k}={v}" for k, v in pairs.items() if k not in over)
    if rest and "--cfg-options" in body.split():
        body = re.sub(r"(?<=\s)--cfg-options(?=\s)", f"--cfg-options {rest}", body, count=1)
        said.append(f"{rest} added to the job's --cfg-options")
    elif rest:
        body += f" --cfg-options {rest}"
        said.append(f"--cfg-options {rest} at the end of the training command")
    return head + body + tail, "; ".join(said)
