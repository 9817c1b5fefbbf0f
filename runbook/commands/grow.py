"""`runbook grow --job ID`: a job runbook shrank goes back to full size when the nodes are back.
`runbook prevent --job ID`: a running job heading for an OOM is rerun fitted before it runs out.
Both act on a job that still trains, from a checkpoint it wrote since it started."""

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


@click.command()
@incident_options
def prevent(app, job_arg, job_id, dry_run, yes, force, as_json):
    """Ask a running job heading for an OOM to checkpoint, then rerun it fitted.

    Reads every rank's memory series in the job's log (runbook.instrument's per-step line) and
    takes the worst rank: the allocator's retries rising (thrashing), the step's peak within
    [ladder] fit_margin of the card (near_capacity), or memory at step starts rising towards the
    card (leak). When every rank of the job's world declared that it checkpoints on request
    (runbook.instrument's checkpoint_on, or RUNBOOK_CHECKPOINT_ON_REQUEST=1 in the job's
    environment; counted against Slurm's task and node counts), it writes the request file the
    ranks poll, as the job's owner (never a signal: one would reach torchrun's agent too): the
    ranks say their step and pause, every rank saves one step runbook names and holds. Then the
    rerun, from that checkpoint with the micro-batch fitted from the worst rank's own series and
    the global batch kept, is submitted held and read back, the job is cancelled, and the rerun
    released. No step is lost; a rerun that cannot be submitted leaves the job training.

    Without every rank declared, or no checkpoint in time ([policy] prevent_wait_s), it reports,
    withdraws its request and changes nothing else. A person confirms once, before the request
    (--yes or the terminal);
    `runbook sweep` does it by itself under [policy] unattended_prevent ("opted_in": jobs with
    RUNBOOK_PREVENT=1; "declared"; "never").

    \b
    Examples:
      runbook --site prod prevent 123456 --dry-run
      runbook --site prod prevent --job 123456 --yes --json
    Exit codes: 0 done, or nothing to do (the summary says why: no rank heading for an OOM, no
    handler), 1 a step failed, 2 usage or configuration error, 3 Slurm does not know the job id,
    4 a person is needed (declined, no checkpoint in time, no fitted micro-batch applies, the
    rerun could not be submitted).
    """
    run_verb(app, _prevent(), "prevent", job_arg, job_id, dry_run, yes, force, as_json)


def _prevent():
    from runbook.prevent import handle_prevent  # loaded only by this verb

    return handle_prevent
