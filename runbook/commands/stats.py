"""`runbook stats`: what incidents cost, over many."""

from __future__ import annotations

import json
from pathlib import Path

import click

from runbook.commands.nodes import _since


@click.command()
@click.option("--since", default="30d", show_default=True, help="How far back: 30d, 12h.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: incidents, lost_gpu_hours, by_verdict, by_rung, by_node, "
    "and fit (the fitted micro-batch's predictions, under-prediction rate and error, by GPU).",
)
@click.pass_obj
def stats(app, since, as_json):
    """Sum what incidents cost: counts and GPU-hours lost by verdict, rung and node.

    GPU-hours lost per incident are the job's GPUs times the time from its last valid
    checkpoint (its start when there is none) to when the GPUs were freed. A rung's passed and
    failed counts come from `runbook verify`. Incidents whose figures are unknown count as
    incidents with 0 GPU-hours.

    \b
    Examples:
      runbook stats
      runbook stats --since 90d --json
    Exit codes: 0 ok, 2 usage error.
    """
    from runbook import state
    from runbook.report.cost import aggregate

    site = app.site()
    conn = state.site_db(site)
    rows = conn.execute(
        "SELECT folder FROM incidents WHERE created >= ? ORDER BY created", (_since(since),)
    ).fetchall()
    reports = []
    for row in rows:
        try:
            reports.append(json.loads((Path(row["folder"]) / "report.json").read_text()))
        except (OSError, ValueError, TypeError):
            continue  # a folder removed by hand, or an incident that never wrote one
    doc = {"since": since, **aggregate(reports)}
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(
        f"{doc['incidents']} incident(s) since {since}; {doc['lost_gpu_hours']} GPU-hours lost"
    )
    for title, key in (("verdict", "by_verdict"), ("rung", "by_rung"), ("node", "by_node")):
        click.echo(f"by {title}:")
        for name, row in sorted(doc[key].items(), key=lambda kv: -kv[1]["lost_gpu_hours"]):
            extra = "".join(f", {k} {row[k]}" for k in ("passed", "failed") if k in row)
            click.echo(
                f"  {name:<24}{row['incidents']:>4} incident(s), "
                f"{row['lost_gpu_hours']} GPU-hours{extra}"
            )
    if fit := doc.get("fit"):
        err = f", mean error {fit['mean_abs_error']:.1%}" if "mean_abs_error" in fit else ""
        click.echo(
            f"fitted micro-batch: {fit['predictions']} prediction(s), "
            f"{fit['under_predictions']} under-prediction(s) (said it fits, then ran out of "
            f"memory: {fit['under_prediction_rate']:.0%}){err}"
        )
