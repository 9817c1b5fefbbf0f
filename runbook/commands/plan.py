"""`runbook plan SCRIPT`: what runbook would change in a job, rung by rung, without a cluster."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from runbook.errors import ExitCode, InputError, UsageError
from runbook.words import settings


@click.command()
@click.argument("script", metavar="SCRIPT")
@click.argument("args", nargs=-1, metavar="[ARGS]...")
@click.option(
    "--workdir",
    metavar="DIR",
    help="Where the job runs: config paths in the script resolve against it (default: the "
    "script's folder).",
)
@click.option("--rung", metavar="ID", help="Plan only this rung (e.g. halve_micro_batch).")
@click.option(
    "--env",
    "env",
    multiple=True,
    metavar="NAME=VALUE",
    help="A variable of the environment the job is submitted with (`CONFIG_FILE=x.yaml sbatch "
    "job.sh`): read as the job would; repeatable. A knob that is one of them is not changed.",
)
@click.option(
    "--ask",
    "ask",
    metavar="PYTHON",
    help="The job's interpreter (its venv's bin/python): runbook runs the job's program with it, "
    "stopped where its parser hands back its configuration (argparse, HfArgumentParser, "
    "jsonargparse/LightningCLI, click, typer, fire, tyro, Hydra, OmegaConf, mmengine): the "
    "micro-batch fix is decided there and the patched command line parsed again (only the "
    "batch may change); other plans are checked against its answer (--print_config, --cfg "
    "job, --help). As you, in the job's folder, with no GPU and a 120 s limit; a disagreement "
    "refuses the rung. Only for your own job script (else exit 4).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: script, configs, knobs (value, file, line, key, kind), "
    "global_batch (formula, value), rungs (id, applicable, changes with diffs, values_after, "
    "checks, or reason).",
)
@click.pass_obj
def plan(app, script, args, workdir, rung, env, ask, as_json):
    """Show what each rung of the ladder would change in a job script.

    ARGS are the words that followed the script on its sbatch line (the job reads them as
    $1..$N): a recipe path the script builds from them is resolved with them. Put `--` before
    them when they start with a dash.

    Finds the training knobs (micro-batch, gradient accumulation, global batch) in the script's
    flags and variables and in the YAML/TOML/JSON config files it names, then for every rung
    prints the exact change (diffs of the script and of each config copy; a user's config is
    never edited in place, a copy beside it is), the values after, and the global-batch check
    re-read from the patched files; or why the rung cannot apply. Changes nothing.

    \b
    Examples:
      runbook plan train.sbatch
      runbook plan jobs/sft.sbatch --workdir /scratch/me/run1 --rung halve_micro_batch --json
      runbook plan recipes/launch.slurm zephyr-7b-beta sft full deepspeed_zero3
      runbook plan recipes/launch.slurm --json -- --model qwen --task sft --config demo
      runbook plan train.sh --env CONFIG_FILE=configs/sft.yaml
      runbook plan train.sbatch --ask /shared/envs/train/bin/python
    Exit codes: 0 at least one rung applies, 4 none does (a person decides), 3 the script
    cannot be read, 2 usage error.
    """
    from runbook.planning.offline import plan_script
    from runbook.playbook import load as load_playbook

    path = Path(script)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(
            f"job script {script}: cannot be read ({getattr(e, 'strerror', None) or e})",
            hint="give the path of the sbatch script the job was submitted with",
        ) from None
    pairs = {}
    for item in env:
        key, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise UsageError(
                f"--env {item!r}: expected NAME=VALUE (a shell variable's name, then =)",
                hint="for example --env CONFIG_FILE=configs/sft.yaml",
            )
        pairs[key] = value
    doc = plan_script(
        text,
        path.name,
        workdir or str(path.parent or "."),
        app.site().knobs,
        only=rung,
        book=load_playbook(app.site().playbooks.dir),
        args=list(args) if args else None,
        env=pairs or None,
        ask=_asker(ask, path, workdir or str(path.parent or "."), pairs) if ask else None,
    )
    if as_json:
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(render(doc))
    if not any(r["applicable"] for r in doc["rungs"]):
        raise SystemExit(int(ExitCode.NEEDS_HUMAN))


def render(doc: dict) -> str:
    lines = [f"script: {doc['script']} (job runs in {doc['workdir']})"]
    if doc.get("arguments"):
        lines.append(f"arguments ($1..$N): {' '.join(doc['arguments'])}")
    for c in doc["configs"]:
        lines.append(
            f"config named: {c['file']}" + ("" if c["read"] else f" (NOT READ: {c['why']})")
        )
    lines.append("knobs:")
    for name, k in doc["knobs"].items():
        where = (
            f"{k['key']}={k['as_written']} ({k['kind']}, {k['file']}:{k['line']})"
            if k
            else "not found"
        )
        lines.append(f"  {name:<14}{where}")
    g = doc["global_batch"]
    lines.append(f"global batch: {g['formula']}" + (f" = {g['value']}" if g.get("value") else ""))
    for r in doc["rungs"]:
        if not r["applicable"]:
            lines.append(f"\n[{r['id']}] cannot apply: {r['reason']}")
            continue
        lines.append(f"\n[{r['id']}] applies; values after: {settings(r['values_after'])}")
        lines.extend(f"  change: {c}" for c in r.get("lands") or [])
        lines.extend(f"  check: {c}" for c in r["checks"])
        for ch in r["changes"]:
            lines.append(ch["diff"].rstrip("\n"))
    return "\n".join(lines)


def _asker(python: str, script: Path, workdir: str, env: dict[str, str]):
    """(the interpreter, how it is run): as the invoking user, who must own the job script (a
    program is asked only as its job's owner), in the job's folder, with no GPU, no input, no
    bytecode written into the user's tree, and a time limit."""
    import os
    import shutil
    import subprocess
    import time

    from runbook.identity import NotPermitted

    owner = script.stat().st_uid
    if owner != os.geteuid():
        import pwd

        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = str(owner)
        raise NotPermitted(
            f"--ask runs the job's program as you, and {script} is {name}'s: runbook asks a "
            "program only as its job's owner; nothing was run",
            hint=f"run runbook plan --ask as {name}, or plan without --ask",
        )
    exe = shutil.which(python) if "/" not in python else python
    if exe is None or not os.access(exe, os.X_OK):
        raise UsageError(f"--ask {python}: not an interpreter runbook can run",
                         hint="give the job's interpreter, e.g. /shared/envs/train/bin/python")  # fmt: skip
    keep = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "USER") if k in os.environ}
    run_env = {**keep, **env, "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"}

    def run(argv: list[str]) -> tuple[int, str, str, float]:
        t0 = time.monotonic()
        try:
            r = subprocess.run([exe, *argv[1:]], cwd=workdir, env=run_env, capture_output=True,
                               text=True, stdin=subprocess.DEVNULL, timeout=120)  # fmt: skip
        except subprocess.TimeoutExpired:
            return 124, "", "no answer within 120 s", time.monotonic() - t0
        return r.returncode, r.stdout, r.stderr, time.monotonic() - t0

    return python, run
