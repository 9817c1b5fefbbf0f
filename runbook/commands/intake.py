"""`runbook hook` and `runbook sweep`: the unattended entry points."""

from __future__ import annotations

import json
import sys
import time

import click

from runbook.errors import ExitCode, InputError, RunbookError
from runbook.intake import triggers
from runbook.pipeline import handle_incident
from runbook.sweep import SweepBusy, parse_since, run_sweep, write_metrics
from runbook.trigger import Options, Trigger


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON result (stdin mode).")
@click.pass_context
def hook(ctx, as_json):
    """Pager webhook intake: Alertmanager or PagerDuty payloads, or a bare job id.

    Without a subcommand, reads one webhook body on standard input (for pager tools that run a
    command) and handles each job it names, in turn. `runbook hook serve` runs the HTTP service.
    The job id comes from the alert label [hook] alertmanager_label (default slurm_job_id), or
    PagerDuty custom details / the incident title ([hook] pagerduty_title_pattern).

    \b
    Example:
      echo '{"job_id": "123456"}' | runbook --site prod hook
      runbook --site prod hook serve          # 127.0.0.1:8787 unless [hook] says otherwise
    """
    if ctx.invoked_subcommand is not None:
        return
    site = ctx.obj.site()
    body = sys.stdin.buffer.read(site.hook.max_body_bytes + 1)
    if len(body) > site.hook.max_body_bytes:
        raise InputError(
            f"webhook body on stdin is over {site.hook.max_body_bytes} bytes",
            hint="raise [hook] max_body_bytes if such bodies are expected",
        )
    parsed = triggers(
        body, label=site.hook.alertmanager_label, title_pattern=site.hook.pagerduty_title_pattern
    )
    opts = Options(site_flags=ctx.obj.site_flags())
    results = [
        handle_incident(Trigger(c.job_id, "hook", "runbook hook"), site, opts)
        for c in parsed.candidates
    ]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ignored": parsed.ignored,
                    "incidents": [
                        {
                            "job_id": c.job_id,
                            "incident": r.incident,
                            "verdict": r.verdict,
                            "exit_code": r.exit_code,
                            "summary": r.summary,
                        }
                        for c, r in zip(parsed.candidates, results, strict=True)
                    ],
                },
                indent=2,
            )
        )
    else:
        for why in parsed.ignored:
            click.echo(f"ignored: {why}")
        for r in results:
            click.echo(r.summary)
    raise SystemExit(max([r.exit_code for r in results], default=int(ExitCode.OK)))


@hook.command("serve")
@click.option("--bind", default=None, help="Address to listen on ([hook] bind, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port ([hook] port, 8787).")
@click.pass_obj
def hook_serve(app, bind, port):
    """Serve the webhook over HTTP: deliveries are queued durably and answered at once.

    202 queued (the incident id; a duplicate gets the same one), 200 nothing to do, 400/401/403/
    413 for the request itself, 503 with Retry-After when a delivery cannot be queued now (state
    database unavailable, queue full): pagers retry 5xx. Workers take deliveries from the queue
    in the state database; a Slurm lookup that fails is retried with backoff, so an outage of
    Slurm loses nothing. GET /healthz (state writable, slurmctld answering) and GET /metrics
    (Prometheus). Put a TLS proxy in front to expose it beyond this host.

    \b
    Example:
      RUNBOOK_HOOK_SECRET=... runbook --site prod hook serve --port 8787
    Exit codes: 2 when it cannot start (port in use, bad address, no secret on a public bind).
    """
    from runbook.errors import ConfigError
    from runbook.hook import serve

    site = app.site()
    host = bind or site.hook.bind
    port = port or site.hook.port
    if not (site.hook.secret or site.hook.token) and host not in ("127.0.0.1", "::1", "localhost"):
        raise ConfigError(
            f"refusing to listen on {host} without a secret or token",
            hint="set RUNBOOK_HOOK_SECRET (PagerDuty signing secret) or RUNBOOK_HOOK_TOKEN, or "
            "bind to 127.0.0.1",
        )

    def ready(recovered: int) -> None:
        again = f"; {recovered} interrupted deliveries queued again" if recovered else ""
        click.echo(f"runbook hook: listening on {host}:{port}{again}", err=True)

    serve(site, host=host, port=port, ready=ready)


@click.command()
@click.option(
    "--since",
    default="2h",
    show_default=True,
    help="Accounting window: jobs that ended in the last 30m, 2h, 1d...",
)
@click.option("--dry-run", is_flag=True, help="Triage and plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document for the whole sweep.")
@click.pass_obj
def sweep(app, since, dry_run, as_json):
    """Triage failed (and wedged) jobs from Slurm, for cron.

    One accounting query for the window; logs confirmed on the nodes, one SSH exec per host.
    Acts only on verdicts the site lets act unattended ([policy] unattended_verdicts), lists the
    others for a person, finishes pending verifications. A second sweep exits at once.
    Keep --since longer than the cron period: the window query of slurmdbd lists a job a second
    or so after it ended, so windows should overlap; jobs already handled are skipped.

    \b
    Example (cron, every 10 minutes):
      */10 * * * * runbook --site prod sweep --since 30m >> /var/log/runbook-sweep.log 2>&1
    Exit codes: 0 ok, 1 a step failed, 4 some job needs a person.
    """
    site = app.site()
    progress = (lambda m: None) if as_json else app.progress
    window = parse_since(since)
    started = time.monotonic()
    try:
        res = run_sweep(site, window, dry_run=dry_run, progress=progress)
    except SweepBusy as e:
        click.echo(json.dumps({"busy": e.message}) if as_json else f"runbook sweep: {e.message}")
        raise SystemExit(int(ExitCode.OK)) from None
    except RunbookError as e:
        if site.sweep.metrics_file and not dry_run:
            write_metrics(
                str(site.path(site.sweep.metrics_file)), None, time.monotonic() - started, e.message
            )
        raise
    if site.sweep.metrics_file and not dry_run:
        write_metrics(str(site.path(site.sweep.metrics_file)), res, time.monotonic() - started)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "jobs": [ln.__dict__ for ln in res.lines],
                    "skipped": res.skipped,
                    "verifications": res.verifications,
                    "stats": res.stats,
                    "exit_code": res.exit_code,
                },
                indent=2,
                default=str,
            )
        )
    else:
        for ln in res.lines:
            click.echo(
                f"{ln.job_id:>10} {ln.user:<10} {ln.state:<14} {ln.verdict:<14} "
                f"{ln.incident or '-':<24} {ln.action}"
            )
        for v in res.verifications:
            click.echo(f"verify {v['incident']}: {v['state']}")
        acted = sum(1 for ln in res.lines if ln.incident)
        click.echo(
            f"total: {len(res.lines)} triaged, {acted} handled, {len(res.skipped)} "
            f"skipped, {len(res.verifications)} verified, {res.stats.get('seconds')}s"
        )
    raise SystemExit(res.exit_code)
