"""`runbook grow --job ID`: a job runbook shrank goes back to full size when the nodes are back."""

from __future__ import annotations

import click

from runbook.commands.oom import incident_options, run_verb


@click.command()
@incident_options
def grow(app, job_arg, job_id, dry_run, yes, force, as_json):
    """Return a job runbook shrank to its lineage's original node count.

    For a job that `shrink_world` resubmitted on fewer nodes after a GPU fault (its signed
    lineage says so): once the job's partition has enough usable nodes again and the job has
    saved a valid checkpoint since it started, cancel it and resubmit it on the original node
    count from that checkpoint, with gradient accumulation lowered by old/new nodes (only when
    exact) so the global batch is unchanged; Slurm's record of the new job is read back.
    Until then it changes nothing and says what it waits for (nodes, or a checkpoint).

    Cancelling a job that trains well asks first: --yes, a person at the terminal, or
    [policy] unattended_grow = true (then `runbook sweep` grows shrunk jobs by itself).

    \b
    Examples:
      runbook --site prod grow 123456 --dry-run
      runbook --site prod grow --job 123456 --yes --json
    Exit codes: 0 done, or nothing to do yet (the summary says what it waits for),
    1 a step failed, 2 usage or configuration error, 3 Slurm does not know the job id
    (nothing is recorded), 4 a person is needed (declined step, accumulation that does not
    divide).
    """
    run_verb(app, _handler(), "grow", job_arg, job_id, dry_run, yes, force, as_json)


def _handler():
    from runbook.grow import handle_grow  # loaded only by this verb

    return handle_grow
