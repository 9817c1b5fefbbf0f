"""`runbook oom --job ID`: the whole runbook for one job."""

from __future__ import annotations

import json
import sys

import click

from runbook.pipeline import handle_incident
from runbook.slurm.client import check_job_id
from runbook.trigger import Options, Trigger


def incident_options(f):
    """The options every runbook verb takes (oom, hang): the job, dry run, --yes, --force,
    --json."""
    for deco in reversed(
        [
            click.argument("job_arg", metavar="[JOB_ID]", required=False),
            click.option(
                "--job",
                "job_id",
                metavar="ID",
                help="Slurm job id (or give it as the argument: `runbook oom 123456`).",
            ),
            click.option(
                "--dry-run",
                is_flag=True,
                help="Gather evidence and show the plan, the exact commands and the diff; change "
                "nothing (the report goes to a temporary folder).",
            ),
            click.option("--yes", is_flag=True, help="Apply mutating steps without asking."),
            click.option(
                "--force", is_flag=True, help="Handle a job that already has a finished incident."
            ),
            click.option(
                "--json", "as_json", is_flag=True, help="Print one machine-readable result."
            ),
            click.pass_obj,
        ]
    ):
        f = deco(f)
    return f


@click.command()
@incident_options
def oom(app, job_arg, job_id, dry_run, yes, force, as_json):
    """Run the whole runbook for one job that died of CUDA OOM.

    Reads the job from Slurm, pulls the relevant log lines (filtered on the node), finds the rank
    that ran out of memory first, cancels the job if its other ranks are wedged, checks the OOM
    node's GPU health, classifies the OOM, applies the next rung of the ladder to the job script
    and resubmits from the last valid checkpoint, and writes the incident report.

    Mutating steps (scancel, drain, writing the new script, sbatch) ask first at a terminal;
    without a terminal they run only for verdicts the site lets act unattended, or with --yes.

    \b
    Examples:
      runbook --site prod oom 123456 --dry-run
      runbook --site prod oom --job 123456 --yes
    Exit codes: 0 done (or nothing to do), 1 a step failed (the report says which),
    2 usage or configuration error, 3 Slurm does not know the job id (nothing is recorded),
    4 a person is needed (declined step, human-only rung, exhausted ladder).
    """
    run_verb(app, handle_incident, "oom", job_arg, job_id, dry_run, yes, force, as_json)


def run_verb(app, handler, verb, job_arg, job_id, dry_run, yes, force, as_json) -> None:
    """One incident through `handler` (pipeline.handle_incident, hang.handle_hang), with the
    person at the terminal asked per mutating step, and the result printed or as JSON."""
    if job_arg and job_id and job_arg != job_id:
        raise click.UsageError(f"two job ids given ({job_arg} and --job {job_id}); give one")
    job_id = job_id or job_arg
    if not job_id:
        raise click.UsageError(f"which job? give its id: `runbook {verb} 123456` (or --job 123456)")
    site = app.site()
    interactive = sys.stdin.isatty() and not as_json and not yes

    def confirm(action) -> bool:
        return click.confirm(f"  run `{' '.join(action.argv)}`?", default=False, err=True)

    def progress(message: str) -> None:
        if not as_json:
            app.progress(message)

    opts = Options(
        dry_run=dry_run,
        assume_yes=yes,
        force=force,
        progress=progress,
        confirm=confirm if interactive else None,
        site_flags=app.site_flags(),
    )
    result = handler(Trigger(check_job_id(job_id), "cli", f"runbook {verb}"), site, opts)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "incident": result.incident,
                    "folder": result.folder,
                    "verdict": result.verdict,
                    "exit_code": result.exit_code,
                    "summary": result.summary,
                    "new_job_id": result.new_job_id,
                    "next_steps": result.next_steps,
                    "errors": result.errors,
                    "actions": [
                        {k: a[k] for k in ("kind", "target", "argv", "status", "message")}
                        for a in result.actions
                    ],
                },
                indent=2,
            )
        )
    else:
        click.echo(result.summary)
        if result.folder:
            click.echo(f"report: {result.folder}/report.md (also report.html, report.json)")
        for step in result.next_steps:
            click.echo(f"next: {step}")
    raise SystemExit(result.exit_code)
