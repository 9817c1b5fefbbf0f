"""The engine every runbook runs on (the OOM runbook in pipeline.py, the hung job in hang.py).

One incident per job: an incident that stopped, or whose process died, is resumed; the job's
lock is held for the whole run; the incident folder is written after every stage; every mutation
goes through the one executor (dry run, ledger, idempotency, confirmation); the SSH connections
are shared by the stages. A runbook brings its body (its stages, in order) and its conclusion
(summary, next steps, exit code); the engine saves, closes and notifies whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runbook import state
from runbook.actions import chain, steps
from runbook.actions.executor import Executor
from runbook.actions.policy import confirm_policy
from runbook.actions.remediate import apply_plan, outcome
from runbook.errors import ArrayJobError, ExitCode, JobNotFound, RunbookError
from runbook.planning import ladder
from runbook.record import record
from runbook.report.model import Incident, plain
from runbook.report.recorder import Recorder, Stopped
from runbook.report.views import conclude, plan_view
from runbook.slurm.factory import slurm_client
from runbook.transport.ssh import SshHosts, SshSettings
from runbook.trigger import Options, Result, Trigger, new_incident_id
from runbook.words import count


@record
class Run:
    """One incident in progress: what every stage of a runbook's body reads and writes. The
    body fills job, diagnosis and plan as it goes; its conclusion reads them."""

    trigger: Trigger
    site: Any
    playbook: Any
    opts: Options
    client: Any
    conn: Any
    rec: Recorder
    ex: Executor
    hosts: SshHosts
    dry: bool
    job: Any = None
    diagnosis: Any = None
    plan: ladder.Plan | None = None
    # False when the runbook only looked and found nothing to do yet (grow_world waiting for
    # nodes): the incident is closed as `observed`, and the job may be handled later.
    handled: bool = True
    # The job as intake read it (to refuse an unknown id or a whole array), handed to the job
    # stage: one `scontrol show job` per incident, not two a few milliseconds apart.
    intake_job: Any = None
    # slurmctld's jobs as the job stage read them (collect.queue_of): the chain and the
    # lineage check read this, not a queue of their own.
    queue: list | None = None
    # Who acts on the job (runbook.identity.Actor), settled by read_job before any change.
    actor: Any = None


def read_job(ctx: Run):
    """The job for the body's job stage: the record intake read moments ago, else Slurm's.
    Who acts on it is settled here, before any stage can change anything: from now on the
    client runs the job's commands as its owner (runbook.identity), or the run stops with the
    grant it needs (exit 4)."""
    from runbook import identity
    from runbook.jobfiles import owner_read

    job, ctx.intake_job = ctx.intake_job, None
    job = job if job is not None else ctx.client.job(ctx.rec.incident.job_id)
    actor = identity.for_job(ctx.site.identity, job)
    ctx.actor = actor
    # The job's files on this host are read with its owner's rights from here on.
    owner_read.read_for(
        actor.owner if actor.as_owner else None, actor.wrap if actor.mode == "sudo" else None
    )
    ctx.client = ctx.client.acting_as(actor)
    ctx.rec.incident.evidence["identity"] = {
        "owner": actor.owner.name,
        "mode": actor.mode,
        "runbook": actor.me.name,
        "how": actor.describe(),
    }
    return job


def run_incident(
    trigger: Trigger,
    site,
    opts: Options,
    playbook,
    body: Callable[[Run], None],
    finish: Callable[[Run], None],
) -> Result:
    """The engine every runbook runs on: one incident per job (resumed when one stopped), the
    job's lock, the incident folder, the executor and the SSH connections; then `body` runs the
    runbook's stages and `finish` writes its conclusion, and the incident is saved, closed and
    notified whatever happened."""
    dry = opts.dry_run or site.policy.dry_run
    client = slurm_client(site)
    job_id = trigger.job_id
    intake_job = _refuse_unknown_ids(client, job_id)
    conn = state.site_db(site, dry_run=dry)
    if not dry:
        try:
            state.check_free_space(site.path(site.state.dir), site.state.min_free_mib)
        except state.StateUnavailable as e:
            return Result(None, None, None, int(ExitCode.STEP_FAILED), e.message)
    # An incident of this job that stopped or whose process died is resumed, not started anew:
    # the ledger skips what it already did.
    resumed = None if dry or trigger.incident_id else state.resumable_incident(conn, job_id)
    incident_id = trigger.incident_id or resumed or new_incident_id(job_id)
    holder = f"{trigger.source}:{os.getpid()}:{incident_id}"
    try:
        lock = (
            contextlib.nullcontext(None)
            if dry
            else state.job_lock(conn, job_id, holder, ttl_s=site.state.lease_s)
        )
        with lock as lock_name:
            folder, done = _start(conn, site, trigger, incident_id, dry, opts.force)
            if done is not None:
                msg = (
                    f"job {job_id} was already handled by incident {done['id']} "
                    f"({done['verdict']}, new job {done['new_job_id'] or 'none'})"
                )
                return Result(
                    done["id"], None, done["verdict"], int(ExitCode.OK), msg, done["new_job_id"]
                )
            inc = Incident(
                id=incident_id,
                job_id=job_id,
                source=trigger.source,
                actor=trigger.actor,
                site=site.site.name,
                dry_run=dry,
            )
            rec = Recorder(folder, inc)
            ex = Executor(
                conn,
                incident=inc.id,
                actor=f"{trigger.source}:{trigger.actor}",
                dry_run=dry,
                lock=lock_name,
                lock_holder=holder,
            )
            hosts = SshHosts(SshSettings.from_site(site))
            r = Run(trigger, site, playbook, opts, client, conn, rec, ex, hosts, dry)
            r.intake_job = intake_job
            return _run_body(r, body, finish)
    except state.LockBusy as e:
        return Result(None, None, None, int(ExitCode.OK), e.message)


def _start(conn, site, trigger: Trigger, incident_id: str, dry: bool, force: bool):
    """(the incident's folder, the incident that already handled the job or None). Not handled
    (unless forced), then recorded as running: one transaction under the lock. The same
    incident id again (the hook's queue after a crash mid-incident, whose lock the dead holder
    lost) resumes that incident: the ledger skips the steps it already applied."""
    if dry:
        folder = Path(tempfile.mkdtemp(prefix="runbook-dry-run-")) / incident_id
        return folder, None if force else state.handled_incident(conn, trigger.job_id)
    folder = site.path(site.state.dir) / "incidents" / incident_id
    done = state.start_incident(
        conn, incident_id, trigger.job_id, trigger.source, str(folder), force=force
    )
    return folder, done


def _refuse_unknown_ids(client, job_id: str):
    """A plain id may be a whole job array, or one Slurm does not know (a mistyped id): the
    caller's to fix, said before an incident is opened or anything recorded for it. Slurm not
    answering here is the job step's to say. The job read, else None."""
    if "_" in job_id:
        return None
    try:
        return client.job(job_id)
    except (ArrayJobError, JobNotFound):
        raise
    except RunbookError:
        return None


def concluder(verb: str) -> Callable[[Run], None]:
    """A runbook's conclusion (summary, next steps, exit code) from what its body left in the
    Run; `verb` is the runbook's command (oom, hang, grow), for the next steps it names."""

    def finish(r: Run) -> None:
        conclude(
            r.rec.incident,
            r.job,
            r.diagnosis,
            r.plan,
            r.ex.results,
            r.dry,
            r.opts.site_flags,
            r.site,
            verb=verb,
        )

    return finish


def _run_body(r: Run, body, finish) -> Result:
    inc, rec, conn, site = r.rec.incident, r.rec, r.conn, r.site
    try:
        body(r)
    except Stopped:
        pass
    except BaseException:
        # Cut short by what no step handles (a full disk under the state, a crash): never
        # "complete", so the job is not counted as handled and the next run resumes here.
        inc.status, inc.stopped_at = "stopped", inc.stopped_at or "interrupted"
        raise
    finally:
        from runbook.jobfiles import owner_read

        owner_read.read_for(None)  # this thread's next incident (the hook's worker) settles its own
        inc.evidence["ssh"] = r.hosts.stats()
        r.hosts.close()
        inc.actions = [plain(x) for x in r.ex.results]
        finish(r)
        code = int(inc.exit_code if inc.exit_code is not None else ExitCode.STEP_FAILED)
        inc.finished = time.time()
        rec.save()
        if not r.dry:
            from runbook import notify

            with conn.write():  # closed and its message queued: both or neither
                state.close_incident(
                    conn,
                    inc.id,
                    exit_code=code,
                    verdict=inc.diagnosis.get("verdict"),
                    new_job_id=inc.new_job_id,
                    summary=inc.summary,
                    handled=r.handled,
                    stopped=inc.status == "stopped",
                )
                notify.queue(conn, site, inc.id, inc.summary, str(rec.folder))
            notify.flush(conn, site)
    return Result(
        inc.id,
        str(rec.folder),
        inc.diagnosis.get("verdict"),
        code,
        inc.summary,
        inc.new_job_id,
        inc.actions,
        list(inc.next_steps),
        list(inc.errors),
    )


def hold_and_cancel(ctx: Run, s, dependants, *, hint: str):
    """The jobs a cancel would set off held first (actions.chain), then the job's scancel;
    (the cancel's result, the ids runbook held)."""
    held = (
        chain.hold_before_cancel(ctx.ex, ctx.client, dependants, ctx.job) if dependants else set()
    )
    return cancel(ctx, s, hint=hint), held


def follow_chain(ctx: Run, plan, dependants, held: set[str]) -> None:
    """The jobs that wait on this one, pointed at its rerun (or named for a person: the plan,
    when there is one, says a person is needed)."""
    inc = ctx.rec.incident
    with ctx.rec.step("chain", ctx.opts.progress) as s:
        rows, person = chain.repoint(ctx.ex, ctx.client, dependants, ctx.job, inc.new_job_id, held)
        inc.evidence["dependants"] = rows
        s.detail = f"{count(len(rows), 'job')} wait on {ctx.job.job_id}"
        if person:
            s.status = "unknown"
            if plan is not None:
                plan.needs_human = True
                plan.human_action = "; ".join(x for x in (plan.human_action, person) if x)
                inc.plan = plan_view(plan)  # the report's plan says a person is needed too
            else:
                s.detail += ": " + "; ".join(person)


def cancel(ctx: Run, s, *, hint: str):
    """The job's scancel, through the executor, as a step of the timeline; a scancel that failed
    stops the run (the report says so, with `hint`)."""
    job = ctx.job
    r = ctx.ex.run(steps.cancel(ctx.client, job.job_id, known=job))
    s.status = "ok" if r.ok else ("skipped" if r.status == "declined" else "failed")
    s.detail = f"{r.status}: {r.message}"
    if r.status == "failed":
        raise RunbookError(f"scancel {job.job_id} failed: {r.message}", hint=hint)
    return r


def record_plan(ctx: Run, plan: ladder.Plan, s) -> None:
    """The plan into the incident (its view, suspicious lineage claims first among the notes)
    and the timeline."""
    inc = ctx.rec.incident
    inc.plan = plan_view(plan)
    for note in plan.suspicious:  # said where a reader looks first
        inc.evidence.setdefault("notes", []).append(f"SUSPICIOUS: {note}")
    ctx.rec.stage("plan", inc.plan)
    s.detail = (
        f"rung {plan.rung}"
        if plan.acts
        else ("needs a person: " + plan.why if plan.needs_human else plan.why)
    )


def act(
    ctx: Run, plan: ladder.Plan, diagnosis, *, decided: bool = False, held: bool = False
) -> None:
    """The actions step both runbooks end with: who may say yes (the verdict's policy, and the
    rung's: shrinking waits for a person unless the site allows it; `decided`: the runbook
    settled it already, as the prevention runbook does from its own policy), then the plan
    through the executor, and the new job as Slurm reads it back (`held`: submitted held, the
    job it replaces still running)."""
    if not decided:
        ctx.ex.confirm = confirm_policy(
            ctx.site,
            diagnosis.verdict,
            rung=plan.rung,
            assume_yes=ctx.opts.assume_yes,
            confirm=ctx.opts.confirm,
        )
    inc = ctx.rec.incident
    with ctx.rec.step("actions", ctx.opts.progress) as s:
        if plan.acts:
            known = (
                steps.Known(ctx.queue, steps.lineage_window(ctx.job))
                if ctx.queue is not None
                else None
            )
            apply_plan(
                ctx.ex,
                ctx.client,
                ctx.site,
                ctx.job,
                plan,
                ctx.rec.folder,
                diagnosis,
                known,
                actor=ctx.actor,
                held=held,
            )
            inc.plan = plan_view(plan)  # with the read-back of the new job
            inc.new_job_id, s.status, s.detail = outcome(ctx.ex.results, plan)
        else:
            s.status, s.detail = "skipped", "nothing to change"
