"""Halving the micro-batch of a LightningCLI program (jobfiles.lightning_cli): the datamodule's
parameter that its train loader's batch_size is, halved, and the Trainer's
accumulate_grad_batches doubled, as `--data.X H --trainer.accumulate_grad_batches 2A` on the
job's own command after its configs (LightningCLI applies the words in order, so they win; the
config files stay as they are: other jobs read them). A job's own `--data.X` is changed where it
is written."""

from __future__ import annotations

import re

from runbook.jobfiles import bash
from runbook.jobfiles.config_patch import Change, RungPlan
from runbook.jobfiles.lightning_cli import dig
from runbook.rungs._program import entry_word
from runbook.rungs.halve_micro_batch import new_sizes, whole

ACCUM = "trainer.accumulate_grad_batches"


def _in_force(job, key: str, default, default_at: str):
    """(value, where) of a dotted key: the job's last word for it, else the configs, else the
    default."""
    short = key.replace(".init_args.", ".")
    for k in (key, short):
        if k in job.over:
            return job.over[k][0], f"the job's --{k}"
    value = dig(job.values, key)
    if value is not None:
        return value, job.at.get(key, "the configs")
    return default, default_at


def plan(rid: str, job_files, program, why: str, target: int | None = None) -> RungPlan:
    cli = program.cli
    script = job_files.script

    def refuse(what: str) -> RungPlan:
        return RungPlan(rid, False, f"{why}; {program.entry} is a LightningCLI: {what}")

    if cli.why:
        return refuse(cli.why)
    data = cli.data
    if cli.manual:
        return refuse(f"the model turns automatic optimization off ({cli.manual}): Lightning "
                      "accumulates no gradients for it")  # fmt: skip
    key = cli.prefix + data.micro
    m, m_at = _in_force(cli, key, data.default, f"{data.name}'s default")
    a, a_at = _in_force(cli, ACCUM, 1, "not set: Lightning's Trainer default")
    sizes = new_sizes(whole(m), whole(a), target)
    if isinstance(sizes, str):
        return refuse(f"{key} {m!r} ({m_at}), accumulation {a!r} ({a_at}): {sizes}")
    (m, a), (m2, a2) = (whole(m), whole(a)), sizes
    entry = entry_word(script, program.entry)
    if entry is None:
        return refuse(f"{program.entry} is not a word runbook can add options after")
    new_script, lands = _edited(script, entry.end, cli, {key: m2, ACCUM: a2})
    checks = [
        f"{cli.program.proof}: {'fit ' if cli.program.run else ''}reads "
        f"{', '.join(cli.configs) or 'no config'}, then the job's words in order (the last wins)",
        data.proof + f": {key} is the micro-batch, in force {m} ({m_at})",
        f"{ACCUM} in force {a} ({a_at})",
        f"global batch per rank: {m} x {a} = {m2} x {a2}, unchanged",
        "the model keeps automatic optimization (no automatic_optimization = False read)",
        bash.bash_n(new_script, original=script),
    ]
    return RungPlan(rid, True, changes=[Change(job_files.name, job_files.name, script, new_script)],
                    values_after={"micro_batch": m2, "grad_accum": a2}, checks=checks,
                    lands=lands)  # fmt: skip


def _edited(script: str, after: int, cli, pairs: dict[str, int]) -> tuple[str, list[str]]:
    """The script with each `--key value` set: where the job writes the key, its value changed
    there; else added at the end of the training command."""
    end = len(script[: bash.command_end(script, after)].rstrip())
    head, body, tail = script[:after], script[after:end], script[end:]
    lands, added = [], []
    for key, value in pairs.items():
        short = key.replace(".init_args.", ".")
        said = next((k for k in (key, short) if k in cli.over), None)
        if said is None:
            added.append(f"--{key} {value}")
            continue
        pat = rf"(?<=\s)--{re.escape(said)}(=|\s+)\S+"
        m = re.search(pat, body)
        if m is not None:
            body = body[: m.start()] + f"--{said}{m.group(1)}{value}" + body[m.end() :]
        lands.append(f"--{said} {value} where the job sets it")
    if added:
        body += " " + " ".join(added)
        lands.append(f"{' '.join(added)} at the end of the training command")
    return head + body + tail, lands
