"""handle_incident: the one function that runs the runbook for one job.

trigger -> job (Slurm) -> logs (filtered on the node) -> scancel (when the job is wedged on an
OOM) -> node health -> diagnosis -> plan (the ladder, the lineage, the checkpoint) -> actions
(through the executor) -> report. The incident folder is written after every stage, so a stage
that fails still leaves everything gathered before it, and the report says where it stopped.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from runbook import state
from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.actions.policy import confirm_policy
from runbook.actions.remediate import apply_plan, outcome
from runbook.diagnosis import Diagnosis, Evidence, classify
from runbook.errors import ExitCode, RunbookError
from runbook.evidence import collect, node_history
from runbook.planning import ladder
from runbook.planning.plan import make_plan
from runbook.playbook import load as load_playbook
from runbook.report.model import Incident, plain
from runbook.report.recorder import Recorder, Stopped
from runbook.report.views import conclude, health_view, plan_view
from runbook.slurm.factory import slurm_client
from runbook.transport.ssh import SshHosts, SshSettings
from runbook.trigger import ACTIVE, OOM_KINDS, Options, Result, Trigger, new_incident_id


def handle_incident(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the runbook for one job. Never raises for what happens on the cluster: the outcome,
    the exit code and the report say it."""
    opts = opts or Options()
    dry = opts.dry_run or site.policy.dry_run
    client = slurm_client(site)
    job_id = trigger.job_id
    playbook = opts.playbook or load_playbook(site.playbooks.dir)  # once per run, passed down
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
        lock = contextlib.nullcontext(None) if dry else state.job_lock(conn, job_id, holder)
        with lock as lock_name:
            if not opts.force and (done := state.handled_incident(conn, job_id)) is not None:
                msg = (
                    f"job {job_id} was already handled by incident {done['id']} "
                    f"({done['verdict']}, new job {done['new_job_id'] or 'none'})"
                )
                return Result(
                    done["id"], None, done["verdict"], int(ExitCode.OK), msg, done["new_job_id"]
                )
            base = (
                Path(tempfile.mkdtemp(prefix="runbook-dry-run-"))
                if dry
                else site.path(site.state.dir) / "incidents"
            )
            folder = base / incident_id
            inc = Incident(
                id=incident_id,
                job_id=job_id,
                source=trigger.source,
                actor=trigger.actor,
                site=site.site.name,
                dry_run=dry,
            )
            rec = Recorder(folder, inc)
            if not dry:
                # The same incident id again (the hook's queue after a crash mid-incident, whose
                # lock the dead holder lost above) resumes that incident: the ledger skips the
                # steps it already applied.
                state.open_incident(conn, incident_id, job_id, trigger.source, str(folder))
            return _run(trigger, site, playbook, opts, client, conn, rec, lock_name, holder, dry)
    except state.LockBusy as e:
        return Result(None, None, None, int(ExitCode.OK), e.message)


def _run(
    trigger, site, playbook, opts, client, conn, rec: Recorder, lock_name, holder, dry
) -> Result:
    inc = rec.incident
    ex = Executor(
        conn,
        incident=inc.id,
        actor=f"{trigger.source}:{trigger.actor}",
        dry_run=dry,
        lock=lock_name,
        lock_holder=holder,
    )
    hosts = SshHosts(SshSettings.from_site(site))
    diagnosis: Diagnosis | None = None
    plan: ladder.Plan | None = None
    job = None
    try:
        with rec.step("job", opts.progress) as s:
            job = client.job(inc.job_id)
            inc.job = plain(job)
            script = client.batch_script(inc.job_id)
            rec.raw("batch_script.sh", script)
            rec.stage("job", job)
            s.detail = f"{job.state} on {job.node_expr or '?'} ({job.source})"

        with rec.step("logs", opts.progress) as s:
            logs = trigger.logs or collect.read_logs(site, job, script, hosts)
            rec.raw("log-excerpt.txt", logs.raw)
            launch, failed_step = logs.launch, logs.failed_step
            inc.evidence.update(
                first_failure=launch.first_failure.contract() if launch.first_failure else None,
                timed_out_ranks=launch.timed_out_ranks,
                failing_ranks=launch.failing_ranks,
                failed_step=failed_step,
                notes=logs.notes,
            )
            ff = launch.first_failure
            dump, dump_raw = collect.fetch_dump(site, job, launch, hosts)
            if dump_raw:
                rec.raw("oom-dump.json", dump_raw)
            if dump:
                inc.evidence["dump"] = {k: v for k, v in dump.items() if k != "snapshot"}
            s.detail = (
                f"first failure {ff.kind} rank {ff.ranks} on {ff.node or '?'}"
                if ff
                else "no failure found in the logs"
            )

        wedged = job.state in ACTIVE and ff is not None and ff.kind in OOM_KINDS
        preliminary = Evidence(launch=launch, slurm=collect.slurm_text(job), job_id=job.job_id)
        prelim_verdict = classify(preliminary, playbook.thresholds).verdict
        ex.confirm = confirm_policy(
            site, prelim_verdict, assume_yes=opts.assume_yes, confirm=opts.confirm
        )
        with rec.step("cancel", opts.progress) as s:
            if wedged:
                r = ex.run(steps.cancel(client, job.job_id))
                s.status = "ok" if r.ok else ("skipped" if r.status == "declined" else "failed")
                s.detail = f"{r.status}: {r.message}"
                if r.status == "failed":
                    raise RunbookError(
                        f"scancel {job.job_id} failed: {r.message}",
                        hint=f"cancel it by hand (scancel {job.job_id}) so its ranks "
                        "free the GPUs, then run `runbook oom` again",
                    )
            else:
                s.status = "skipped"
                s.detail = (
                    f"job is {job.state}"
                    if job.state not in ACTIVE
                    else "no OOM in the logs: not runbook's to stop"
                )

        with rec.step("node health", opts.progress) as s:
            node = ff.node if ff and ff.node else None
            health = collect.node_health(site, hosts, job, node)
            for n, h in health.nodes.items():
                for name, text in h.raw.items():
                    rec.raw(f"{n}.{name}.txt", text)
            inc.evidence["node_health"] = {
                n: health_view(h, job.job_id) for n, h in health.nodes.items()
            }
            s.detail = f"{len(health.nodes)} node(s) probed"
            if health.unknown:  # a probe that failed is not a healthy node
                s.status = "unknown"
                s.detail += "; health unknown on " + "; ".join(
                    f"{n} ({', '.join(u)})" for n, u in health.unknown.items()
                )

        with rec.step("diagnosis", opts.progress) as s:
            evidence = Evidence(
                launch=launch,
                slurm=collect.slurm_text(job),
                node_health=health.oom_node,
                job_id=job.job_id,
                dump=dump,
            )
            diagnosis = classify(evidence, playbook.thresholds)
            inc.diagnosis = diagnosis.contract()
            rec.stage("diagnosis", inc.diagnosis)
            s.detail = diagnosis.verdict
            history = (
                0
                if dry
                else node_history.record(
                    conn,
                    site,
                    health,
                    node,
                    incident=inc.id,
                    verdict=diagnosis.verdict,
                    job_id=job.job_id,
                    now=time.time(),
                )
            )

        with rec.step("plan", opts.progress) as s:
            run = collect.lineage_of(site, client, job)
            saved = collect.checkpoints_of(site, job, run)
            named = collect.configs_of(job, script)
            plan = make_plan(
                diagnosis,
                playbook,
                site,
                job=job,
                script=script,
                run=run,
                checkpoints=saved,
                configs=named,
                node=node,
                failed_step=failed_step,
                node_events=history,
            )
            inc.plan = plan_view(plan)
            for note in plan.suspicious:  # said where a reader looks first
                inc.evidence.setdefault("notes", []).append(f"SUSPICIOUS: {note}")
            rec.stage("plan", inc.plan)
            s.detail = (
                f"rung {plan.rung}"
                if plan.acts
                else ("needs a person: " + plan.why if plan.needs_human else plan.why)
            )

        ex.confirm = confirm_policy(
            site, diagnosis.verdict, assume_yes=opts.assume_yes, confirm=opts.confirm
        )
        with rec.step("actions", opts.progress) as s:
            if plan.acts:
                apply_plan(ex, client, site, job, plan, rec.folder, diagnosis)
                inc.plan = plan_view(plan)  # with the read-back of the new job
                inc.new_job_id, s.status, s.detail = outcome(ex.results, plan)
            else:
                s.status, s.detail = "skipped", "nothing to change"
    except Stopped:
        pass
    finally:
        inc.evidence["ssh"] = hosts.stats()
        hosts.close()
        inc.actions = [plain(r) for r in ex.results]
        conclude(inc, job, diagnosis, plan, ex.results, dry, opts.site_flags, site)
        code = int(inc.exit_code if inc.exit_code is not None else ExitCode.STEP_FAILED)
        inc.finished = time.time()
        rec.save()
        if not dry:
            state.close_incident(
                conn,
                inc.id,
                exit_code=code,
                verdict=inc.diagnosis.get("verdict"),
                new_job_id=inc.new_job_id,
                summary=inc.summary,
            )
            from runbook import notify

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
    )
