"""What starts an incident and what comes back: the trigger (a person, a pager, the sweep), the
options of the run, and the result, as the intake verbs and the pipeline share them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field

from runbook.actions.executor import Action
from runbook.evidence.collect import JobLogs
from runbook.playbook import Playbook
from runbook.record import record
from runbook.slurm.client import ACTIVE

__all__ = ["ACTIVE", "OOM_KINDS", "Options", "Result", "Trigger", "new_incident_id"]
OOM_KINDS = {"oom", "host_oom"}


@record
class Trigger:
    job_id: str
    source: str = "cli"  # cli | hook | sweep
    actor: str = "runbook oom"
    incident_id: str | None = None  # chosen by the caller (the hook answers with it at once)
    # The job's logs when the caller has just read them (the sweep reads every candidate's in
    # one exec per host): the incident's evidence, not read again.
    logs: JobLogs | None = None
    # Why the caller thinks the job needs the runbook (the sweep's stall check), for the report.
    reason: str = ""


def new_incident_id(job_id: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{job_id}"


@record
class Options:
    dry_run: bool = False
    assume_yes: bool = False
    confirm: Callable[[Action], bool] | None = None  # a person at a terminal, asked per step
    progress: Callable[[str], None] = lambda message: None
    force: bool = False  # handle a job that already has a finished incident
    # How this run chose its settings (["--site", "prod"]), so that next-step commands in the
    # output and the report can be copied as they stand.
    site_flags: list[str] = field(default_factory=list)
    # The playbook the caller already loaded for this run (the sweep loads it once for all).
    playbook: Playbook | None = None


@record
class Result:
    incident: str | None
    folder: str | None
    verdict: str | None
    exit_code: int
    summary: str
    new_job_id: str | None = None
    actions: list = field(default_factory=list)
    # What a person does next, as commands carrying this run's --site/--config.
    next_steps: list[str] = field(default_factory=list)
    # Why a stage stopped, with what to do (the report's Errors): a refusal names the grant.
    errors: list[str] = field(default_factory=list)
