"""handle_incident: the one function that runs the runbook for one job.

trigger -> job (Slurm) -> logs (filtered on the node) -> scancel (when the job is wedged on an
OOM) -> node health -> diagnosis -> plan (the ladder, the lineage, the checkpoint) -> actions
(through the executor) -> report. The incident folder is written after every stage, so a stage
that fails still leaves everything gathered before it, and the report says where it stopped.
"""

from __future__ import annotations

import dataclasses
import time

from runbook import engine, state
from runbook.actions.policy import confirm_policy
from runbook.asking import process
from runbook.diagnosis import classify
from runbook.evidence import collect, node_history
from runbook.evidence.gather import Code, Metrics, gather
from runbook.planning import environment
from runbook.planning.plan import make_plan
from runbook.playbook import load as load_playbook
from runbook.report.model import plain
from runbook.report.views import health_view
from runbook.trigger import ACTIVE, OOM_KINDS, Options, Result, Trigger
from runbook.words import count, numbers


def handle_incident(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the OOM runbook for one job. Never raises for what happens on the cluster: the
    outcome, the exit code and the report say it."""
    opts = opts or Options()
    playbook = opts.playbook or load_playbook(site.playbooks.dir)  # once per run, passed down
    return engine.run_incident(trigger, site, opts, playbook, _run, engine.concluder("oom"))


def _run(ctx: engine.Run) -> None:
    """The OOM runbook's stages, in their one direction; each records what it found."""
    job, script, submission, dependants = _job_stage(ctx)
    launch, failed_step, dump = _logs_stage(ctx, job, script)
    ff = launch.first_failure
    wedged = job.state in ACTIVE and ff is not None and ff.kind in OOM_KINDS
    preliminary = gather(launch=launch, slurm=collect.slurm_text(job), job_id=job.raw)
    prelim_verdict = classify(preliminary, ctx.playbook.thresholds).verdict
    ctx.ex.confirm = confirm_policy(
        ctx.site, prelim_verdict, assume_yes=ctx.opts.assume_yes, confirm=ctx.opts.confirm
    )
    # The job's own PIDs on the failing node, while they still exist: after the cancel,
    # `scontrol listpids` has nothing to say, and the message's "Process N has X in use" lines
    # of the job's own ranks would read as co-tenants.
    own_pids = collect.job_pids_of(ctx.site, ctx.hosts, job, ff.node) if wedged and ff else None
    # The command line the ranks ran, from their /proc, for the program's own parser (asking):
    # after the cancel only the batch script's static reading is left.
    procs = _processes(ctx, job, ff.node) if wedged and ff else None
    held = _cancel_stage(ctx, job, wedged, dependants)
    node = ff.node if ff and ff.node else None
    health = _health_stage(ctx, job, node, own_pids)
    diagnosis, history, run = _diagnosis_stage(ctx, launch, dump, script, health, node)
    with ctx.rec.step("plan", ctx.opts.progress) as s:
        # The environment the job stage did not wait for: accounting has had the stages since
        # to store it (asked again only when it still lacks it).
        submission = collect.submission_of(ctx.client, job, have=submission)
        if submission is not None and (args := process.batch_args(procs or [])) is not None:
            submission = dataclasses.replace(submission, args=args)
        # A config the job names through its environment (`CONFIG_FILE=x.yaml sbatch job.sh`)
        # is read as the job reads it: the recorded value as an assignment in the script.
        env = submission.env if submission is not None else None
        planned, head = environment.with_env(script, environment.config_paths(script, env))
        program = collect.program_of(job, planned)
        plan = ctx.plan = make_plan(
            diagnosis,
            ctx.playbook,
            ctx.site,
            job=job,
            script=planned,
            env_head=(script, head),
            run=run,
            checkpoints=collect.checkpoints_of(ctx.site, job, run),
            configs=collect.configs_of(job, planned),
            program=program,
            ask=collect.program_asker(
                ctx.site,
                ctx.actor,
                job,
                submission,
                planned,
                program,
                procs,
                ff.ranks[0] if ff and ff.ranks else None,
            ),  # fmt: skip
            node=node,
            failed_step=failed_step,
            node_events=history,
            capacity=collect.capacity_later(ctx.client, job, node),
            submission=submission,
        )
        if plan.fit is not None:  # the fitted micro-batch joins the diagnosis (docs/design.md §4.1)
            diagnosis.fit = plan.fit
            ctx.rec.incident.diagnosis = diagnosis.contract()
            ctx.rec.stage("diagnosis", ctx.rec.incident.diagnosis)
        engine.record_plan(ctx, plan, s)
    engine.act(ctx, plan, diagnosis)
    if dependants:
        engine.follow_chain(ctx, plan, dependants, held)


def _processes(ctx: engine.Run, job, node: str | None):
    """The job's Python processes on its failing node, where the site asks its program (the one
    reader of them); None elsewhere."""
    if not ctx.site.identity.ask_program or ctx.actor is None:
        return None
    return collect.process_of(ctx.site, ctx.hosts, job, node, ctx.actor.owner.name)


def _job_stage(ctx: engine.Run):
    """The job from Slurm, its batch script, and how it was submitted (its sbatch line:
    --open-mode tells whether its log holds other runs; its environment: what the rerun is
    given)."""
    rec = ctx.rec
    inc = rec.incident
    with rec.step("job", ctx.opts.progress) as s:
        job = engine.read_job(ctx)
        client = ctx.client  # from here on, the job's reads and changes are its owner's
        inc.job = plain(job)
        ctx.job = job
        if not ctx.trigger.logs and ctx.site.logs.read_on != "local" and collect.log_host(job):
            ctx.hosts.warm(collect.log_host(job))  # the logs stage's host, connected meanwhile
        reads = collect.job_reads(client, job, inc.evidence)
        script, submission, ctx.queue = reads.script, reads.submission, reads.queue
        rec.raw("batch_script.sh", script)
        job = ctx.job = dataclasses.replace(job, submit_line=submission.line)
        rec.stage("job", job)
        s.detail = f"{job.state} on {job.node_expr or '?'} ({job.source})"
        dependants = collect.dependants_of(client, job, inc.evidence, ctx.queue)
    return job, script, submission, dependants


def _logs_stage(ctx: engine.Run, job, script):
    """The launcher logs' relevant lines, filtered on the node, and the in-job dump."""
    rec, site, hosts = ctx.rec, ctx.site, ctx.hosts
    inc = rec.incident
    with rec.step("logs", ctx.opts.progress) as s:
        # Where the sweep's watch read the job while it ran, only what its logs gained since.
        logs = ctx.trigger.logs
        if logs is None:
            held = collect.Held(*state.watch_held(ctx.conn, job.job_id, state.watch_run(job)))
            logs = collect.read_logs(site, job, script, hosts, held=held)
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
            f"first failure {ff.kind} rank {numbers(ff.ranks) or '?'} on {ff.node or '?'}"
            if ff
            else "no failure found in the logs"
        )
    return launch, failed_step, dump


def _cancel_stage(ctx: engine.Run, job, wedged: bool, dependants) -> set[str]:
    """The wedged job cancelled, the jobs a cancel would set off held first; the ids held."""
    held: set[str] = set()
    with ctx.rec.step("cancel", ctx.opts.progress) as s:
        if wedged:
            _, held = engine.hold_and_cancel(
                ctx,
                s,
                dependants,
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
    return held


def _health_stage(ctx: engine.Run, job, node: str | None, own_pids):
    rec = ctx.rec
    with rec.step("node health", ctx.opts.progress) as s:
        health = collect.node_health(ctx.site, ctx.hosts, job, node)
        if health.oom_node is not None and health.oom_node.job_pids is None and own_pids:
            health.oom_node.job_pids = own_pids
            health.oom_node.unavailable.pop("job_pids", None)
        for n, h in health.nodes.items():
            for name, text in h.raw.items():
                rec.raw(f"{n}.{name}.txt", text)
        rec.incident.evidence["node_health"] = {
            n: health_view(h, job.raw) for n, h in health.nodes.items()
        }
        s.detail = f"{count(len(health.nodes), 'node')} probed"
        if health.unknown:  # a probe that failed is not a healthy node
            s.status = "unknown"
            s.detail += "; health unknown on " + "; ".join(
                f"{n} ({', '.join(u)})" for n, u in health.unknown.items()
            )
    return health


def _diagnosis_stage(ctx: engine.Run, launch, dump, script, health, node: str | None):
    """The verdict, recorded; the node's history of such verdicts (not on a dry run); the
    job's lineage."""
    rec, job = ctx.rec, ctx.job
    with rec.step("diagnosis", ctx.opts.progress) as s:
        # The lineage's rungs are evidence too: a rerun that halved the micro-batch and ran out
        # again mid-run is a leak, not a reason for the next rung (docs/design.md §3.1).
        run = collect.lineage_of(ctx.site, ctx.client, job)
        evidence = gather(
            launch=launch,
            slurm=collect.slurm_text(job),
            job_id=job.raw,
            node_health=health.oom_node,
            dump=dump,
            lineage=run,
            code=Code(job.work_dir or ".", script or ""),
            metrics=Metrics(folder=job.work_dir, started=job.start, ended=job.end),
        )
        diagnosis = ctx.diagnosis = classify(evidence, ctx.playbook.thresholds)
        rec.incident.diagnosis = diagnosis.contract()
        rec.stage("diagnosis", rec.incident.diagnosis)
        s.detail = diagnosis.verdict
        history = (
            0
            if ctx.dry
            else node_history.record(
                ctx.conn,
                ctx.site,
                health,
                node,
                incident=rec.incident.id,
                verdict=diagnosis.verdict,
                job_id=job.job_id,
                now=time.time(),
            )
        )
    return diagnosis, history, run
