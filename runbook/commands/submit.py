"""`runbook submit`: render a job from a site template, record its variables, submit it."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import click

from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.errors import ExitCode, RunbookError
from runbook.jobfiles.bash import bash_n
from runbook.jobfiles.templates import parse_vars, render
from runbook.slurm.factory import slurm_client
from runbook.state import site_db


@click.command()
@click.argument("template", type=click.Path(dir_okay=False))
@click.option(
    "--var",
    "variables",
    multiple=True,
    metavar="K=V",
    help="Template variable (repeat). Numbers become numbers.",
)
@click.option(
    "--sbatch-arg",
    "sbatch_args",
    multiple=True,
    metavar="ARG",
    help="Extra sbatch argument, e.g. --sbatch-arg=--partition=gpu (repeat).",
)
@click.option(
    "--dry-run", is_flag=True, help="Render and check the script; write and submit nothing."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result.")
@click.pass_obj
def submit(app, template, variables, sbatch_args, dry_run, as_json):
    """Render a job from a jinja2 template and submit it.

    The job script records the template and its variables in a header comment, so a later
    incident on this job is patched exactly: by re-rendering with changed variables (micro_batch,
    grad_accum, activation_checkpointing, alloc_conf, resume_from).

    \b
    Example:
      runbook submit templates/train.sbatch.j2 --var micro_batch=8 --var grad_accum=4
    """
    site = app.site(**{"policy.dry_run": dry_run or None})
    text = render(template, parse_vars(list(variables)))
    bash_n(text)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # The content's digest in the name: two different jobs rendered in the same second are two
    # files (and two submissions); the same job twice is one.
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    name = f"{Path(template).stem}-{stamp}-{digest}.sbatch"
    script = str(site.path(site.state.dir) / "scripts" / name)
    conn = site_db(site, dry_run=site.policy.dry_run)
    ex = Executor(
        conn, incident=f"submit-{stamp}", actor="runbook submit", dry_run=site.policy.dry_run
    )
    client = slurm_client(site)
    wrote = ex.run(steps.write_file(script, text))
    sub = None
    if wrote.ok:
        sub = ex.run(steps.submit(client, script, list(sbatch_args), {}, incident=ex.incident))
    result = {
        "template": str(Path(template).resolve()),
        "script": script,
        "dry_run": site.policy.dry_run,
        "job_id": sub.value if sub and sub.status == "applied" else None,
        "actions": [r.__dict__ for r in ex.results],
    }
    failed = [r for r in ex.results if r.status == "failed"]
    if as_json:
        click.echo(json.dumps(result, indent=2, default=str))
    else:
        if site.policy.dry_run:
            click.echo(text, nl=False)
        for r in ex.results:
            click.echo(f"{r.status:>8}  {' '.join(r.argv)}  {r.message}")
        if result["job_id"]:
            click.echo(f"submitted job {result['job_id']} from {script}")
    if failed:
        raise (
            RunbookError(failed[0].message)
            if not as_json
            else SystemExit(int(ExitCode.STEP_FAILED))
        )
