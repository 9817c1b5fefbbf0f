"""`runbook hang --job ID`: the hung-job runbook for one job that still runs."""

from __future__ import annotations

import click

from runbook.commands.oom import incident_options, run_verb


@click.command()
@incident_options
def hang(app, job_arg, job_id, dry_run, yes, force, as_json):
    """Run the hung-job runbook for one RUNNING job whose ranks make no progress.

    Takes every rank's Python stack with py-spy while the job is alive (one SSH exec per node,
    bounded in time, with nvidia-smi and the Xid window), groups the ranks by where they stand,
    names the ranks outside the majority and their nodes, then cancels the job and resubmits it
    from the last valid checkpoint by the ladder in playbooks/hang.yaml: without the suspect
    node and with NCCL's flight recorder and NCCL_DEBUG=INFO on; drain on a GPU fault; a person
    on a repeat.

    py-spy must be on the nodes ([hang] py_spy); reading another user's processes needs root or
    sudo ([hang] sudo, docs/hang.md: "What a site grants for runbook hang").

    \b
    Examples:
      runbook --site prod hang 123456 --dry-run
      runbook --site prod hang --job 123456 --yes --json
    Exit codes: 0 done (or nothing to do), 1 a step failed (the report says which),
    2 usage or configuration error, 3 Slurm does not know the job id (nothing is recorded),
    4 a person is needed (declined step, human-only rung, exhausted ladder).
    """
    run_verb(app, _handler(), "hang", job_arg, job_id, dry_run, yes, force, as_json)


def _handler():
    from runbook.hang import handle_hang  # loaded only by this verb

    return handle_hang
