"""Verbs whose issues have not landed yet. Each is registered with its real options, so `--help`
already teaches it, and running it says plainly that it is not built and exits 2: a runbook that
pretends to have acted is worse than one that says it cannot."""

from __future__ import annotations

import click

from runbook.errors import NotBuiltYet


def _not_built(verb: str, issue: int, instead: str) -> NotBuiltYet:
    return NotBuiltYet(
        f"`runbook {verb}` is not built yet (tracked in issue #{issue}); nothing was done",
        hint=instead,
    )


_OFFLINE = "run `runbook diagnose --log FILE` on the job's log for an offline diagnosis"


@click.command()
@click.option("--since", default="2h", show_default=True, help="Accounting window to sweep.")
@click.option("--dry-run", is_flag=True, help="Triage only, change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document for the whole sweep.")
def sweep(since, dry_run, as_json):
    """Triage failed jobs from Slurm accounting (for cron).

    \b
    Example:
      runbook --site prod sweep --since 2h
    """
    raise _not_built("sweep", 8, _OFFLINE)


@click.command()
@click.argument("mode", required=False, type=click.Choice(["stdin", "serve"]), default="stdin")
def hook(mode):
    """Pager webhook intake: Alertmanager or PagerDuty payloads, or a bare job id.

    \b
    Example:
      echo '{"job_id": "123456"}' | runbook hook
    """
    raise _not_built("hook", 8, "run `runbook oom --job ID` by hand once it lands")


COMMANDS = [sweep, hook]
