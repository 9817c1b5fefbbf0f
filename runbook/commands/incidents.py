"""`runbook verify`, `runbook incidents`, `runbook report`: after the incident."""

from __future__ import annotations

import json
from pathlib import Path

import click

from runbook import state, store
from runbook import verify as verifying
from runbook.errors import ExitCode, InputError, UsageError
from runbook.report.files import write_reports
from runbook.state import site_db


def _db(app):
    site = app.site()
    return site, site_db(site)


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
    Exit codes: 0 passed, 1 failed (a new incident on the lineage), 4 still pending, or
    refused (the rerun's program refused its arguments at start: the change is named, a
    person fixes it, and runbook resubmits nothing more with it).
    """
    site, conn = _db(app)
    result = verifying.verify_incident(site, conn, incident_id)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(f"{result['state']}: rerun {result.get('job_id') or '-'}")
        for d in result.get("details", []):
            click.echo(f"  {d}")
    code = {
        "passed": ExitCode.OK,
        "failed": ExitCode.STEP_FAILED,
        "pending": ExitCode.NEEDS_HUMAN,
        "refused": ExitCode.NEEDS_HUMAN,  # its program refused the change: a person fixes it
    }.get(result["state"], ExitCode.OK)
    raise SystemExit(int(code))


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list.")
@click.option("--limit", default=50, show_default=True, help="How many, most recent first.")
@click.option(
    "--all-clusters",
    is_flag=True,
    help="Every cluster's incidents from the shared PostgreSQL ([state] url), each with its "
    "cluster; the site's own cluster only without it.",
)
@click.pass_obj
def incidents(app, as_json, limit, all_clusters):
    """List incidents, the most recently run first.

    A resumed incident counts as recent: it lists by when it last ran, not when it was created.

    Status: running, complete, needs_human, stopped (a step failed: fix it and run
    `runbook oom JOB` again), failed, interrupted (its process died: `runbook oom JOB`
    resumes it; steps already done are not done again), or observed (looked at, nothing to do
    yet: `runbook grow` waiting for nodes).

    \b
    Example:
      runbook --site prod incidents --json
      runbook --site prod incidents --all-clusters
    """
    _, conn = _db(app)
    if all_clusters and conn.kind != "postgresql":
        raise UsageError(
            "--all-clusters reads a PostgreSQL shared by several clusters; this site keeps its "
            "state in SQLite",
            hint="set [state] url in each cluster's site config (docs/configuration.md: several clusters)",
        )
    scopes = store.schemas_with_state(conn) if all_clusters else [conn.schema]
    rows = []
    for scope in scopes:
        db = conn if scope == conn.schema else store.connect(conn.target, schema=scope)
        rows += [
            state.listed_incident(db, r) | {"cluster": scope or None}
            for r in state.recent_incidents(db, limit)
        ]
        if db is not conn:
            db.close()
    rows = sorted(rows, key=lambda r: r["updated"] or r["created"] or 0, reverse=True)[:limit]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no incidents")
        return
    many = all_clusters
    head = f"{'cluster':<12} " if many else ""
    click.echo(
        f"{head}{'incident':<26} {'job':>8} {'verdict':<14} {'status':<12} {'new job':>8}  note"
    )
    for r in rows:
        where = f"{r['cluster'] or '-':<12} " if many else ""
        click.echo(
            f"{where}{r['id']:<26} {r['job_id']:>8} {r['verdict'] or '-':<14} {r['status']:<12} "
            f"{r['new_job_id'] or '-':>8}  {r['data'] or ''}"[:180]
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
