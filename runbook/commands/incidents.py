"""`runbook verify`, `runbook incidents`, `runbook report`: after the incident."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from runbook import state
from runbook import verify as verifying
from runbook.errors import ExitCode, InputError
from runbook.report.files import write_reports
from runbook.slurm.factory import slurm_client
from runbook.state import site_db


def _db(app):
    site = app.site()
    return site, site_db(site)


def verify_incident(site, conn, incident_id: str) -> dict:
    """Judge an incident's rerun and append the result to its report (also used by the sweep)."""
    from runbook.pipeline import _read_logs  # the same log reading as the incident itself
    from runbook.transport.ssh import SshHosts, SshSettings

    inc = verifying.load_incident(conn, incident_id)
    data = json.loads((Path(inc["folder"]) / "report.json").read_text())
    rerun = verifying.rerun_of(conn, inc)
    if not rerun:
        result = {"state": "not applicable", "job_id": None, "at": time.time(),
                  "details": ["nothing was resubmitted for this incident"]}  # fmt: skip
    else:
        client = slurm_client(site)
        job = client.job(rerun)
        script = client.batch_script(rerun)

        class _Discard:  # verification writes no raw files of its own
            def raw(self, name, text):
                pass

        with SshHosts(SshSettings.from_site(site)) as hosts:
            launch, _, _ = _read_logs(site, job, script, hosts, _Discard())
            tails = launch.tails
        result = verifying.judge(data.get("plan", {}), job, launch, tails, site.logs.step_pattern)
    verifying.append(inc["folder"], result)
    conn.execute("UPDATE incidents SET data = ? WHERE id = ?",
                 (f"verification {result['state']}", incident_id))  # fmt: skip
    return result


@click.command()
@click.option(
    "--incident",
    "incident_id",
    required=True,
    metavar="ID",
    help="Incident whose rerun to check (see `runbook incidents`).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verification as JSON.")
@click.pass_obj
def verify(app, incident_id, as_json):
    """Check that the rerun got past the step that failed; appends the result to the report.

    \b
    Example:
      runbook verify --incident 20261121-052259-254
    Exit codes: 0 passed, 1 failed (a new incident on the lineage), 4 still pending.
    """
    site, conn = _db(app)
    result = verify_incident(site, conn, incident_id)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(f"{result['state']}: rerun {result.get('job_id') or '-'}")
        for d in result.get("details", []):
            click.echo(f"  {d}")
    code = {"passed": ExitCode.OK, "failed": ExitCode.STEP_FAILED,
            "pending": ExitCode.NEEDS_HUMAN}.get(result["state"], ExitCode.OK)  # fmt: skip
    raise SystemExit(int(code))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list.")
@click.option("--limit", default=50, show_default=True, help="How many, newest first.")
@click.pass_obj
def incidents(app, as_json, limit):
    """List incidents, newest first.

    Status: running, complete, needs_human, stopped (a step failed: fix it and run
    `runbook oom JOB` again), failed, or interrupted (its process died: `runbook oom JOB`
    resumes it; steps already done are not done again).

    \b
    Example:
      runbook --site prod incidents --json
    """
    _, conn = _db(app)
    rows = [dict(r) | {"status": state.incident_state(conn, r)} for r in conn.execute(
        "SELECT id, job_id, source, created, status, verdict, new_job_id, folder, data "
        "FROM incidents ORDER BY created DESC LIMIT ?", (limit,))]  # fmt: skip
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no incidents")
        return
    click.echo(f"{'incident':<26} {'job':>8} {'verdict':<14} {'status':<12} {'new job':>8}  note")
    for r in rows:
        click.echo(
            f"{r['id']:<26} {r['job_id']:>8} {r['verdict'] or '-':<14} {r['status']:<12} "
            f"{r['new_job_id'] or '-':>8}  {r['data'] or ''}"[:160]
        )


@click.command()
@click.argument("incident_id")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "html", "path"]),
    default="md",
    show_default=True,
    help="What to print after re-rendering.",
)
@click.pass_obj
def report(app, incident_id, fmt):
    """Re-render one incident's report (Markdown, JSON, HTML) from its report.json.

    \b
    Example:
      runbook report 20261121-052259-254 --format html > incident.html
    """
    _, conn = _db(app)
    inc = verifying.load_incident(conn, incident_id)
    path = Path(inc["folder"]) / "report.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(
            f"cannot read {path}: {e}",
            hint="the incident folder was moved or its report.json damaged; `runbook incidents` "
            "lists each incident's folder",
        ) from None
    out = write_reports(inc["folder"], data)
    if fmt == "path":
        click.echo(inc["folder"])
    else:
        click.echo(out[f"report.{fmt}"], nl=False)
