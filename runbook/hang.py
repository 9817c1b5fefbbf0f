"""handle_hang: the hung-job runbook, on the same engine as the OOM runbook.

trigger -> job (Slurm; it must still run) -> logs (last progress, watchdog and transport lines)
-> capture (one exec per node: every rank's py-spy stack, the step's processes, nvidia-smi and
the Xid window; bounded in time) -> diagnosis (who is different) -> scancel (the capture is taken
first: the stacks die with the job) -> plan (playbooks/hang.yaml, the lineage, the checkpoint)
-> actions (through the executor) -> report.
"""

from __future__ import annotations

import time

from runbook import engine, words
from runbook.actions.policy import confirm_policy
from runbook.errors import RunbookError
from runbook.evidence import collect, node_history, stacks
from runbook.hang_diagnosis import HangDiagnosis, classify_hang
from runbook.planning.plan import make_hang_plan
from runbook.playbook import load_hang
from runbook.report.model import plain
from runbook.report.views import health_view
from runbook.trigger import ACTIVE, Options, Result, Trigger


def handle_hang(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the hung-job runbook for one job. Never raises for what happens on the cluster."""
    opts = opts or Options()
    playbook = load_hang(site.playbooks.dir)
    return engine.run_incident(trigger, site, opts, playbook, _run, engine.concluder("hang"))


def _run(ctx: engine.Run) -> None:
    """The hung-job runbook's stages: the stacks are taken before the cancel."""
    site, opts, inc = ctx.site, ctx.opts, ctx.rec.incident
    inc.evidence["runbook"] = "hang"
    if ctx.trigger.reason:
        inc.evidence["detected_by"] = ctx.trigger.reason
    job, script, submission = _job_stage(ctx)
    if job is None:
        return
    lines = _logs_stage(ctx, job, script)
    caps = _capture_stage(ctx, job)
    d = _diagnosis_stage(ctx, job, caps, lines)
    ctx.ex.confirm = confirm_policy(
        site, d.verdict, assume_yes=opts.assume_yes, confirm=opts.confirm
    )
    # A chain after the job (`--dependency=afterany:J`): held before the cancel, pointed at the
    # rerun after it, as the OOM runbook does (from the queue the job stage read).
    dependants = collect.dependants_of(ctx.client, job, inc.evidence, ctx.queue)
    with ctx.rec.step("cancel", opts.progress) as s:
        r, held = engine.hold_and_cancel(
            ctx,
            s,
            dependants,
            hint=f"cancel it by hand (scancel {job.job_id}): the stacks are already in the "
            "incident folder",
        )
    if not r.ok:  # declined: the job still runs, a rerun beside it would share its data
        ctx.plan = None
        if dependants:
            engine.follow_chain(ctx, None, dependants, held)
        return
    with ctx.rec.step("plan", opts.progress) as s:
        client = ctx.client
        run = collect.lineage_of(site, client, job)
        plan = ctx.plan = make_hang_plan(
            d,
            ctx.playbook,
            site,
            job=job,
            script=script,
            run=run,
            checkpoints=collect.checkpoints_of(site, job, run),
            capacity=collect.capacity_later(
                client, job, d.suspect_nodes[0] if len(d.suspect_nodes) == 1 else None
            ),
            submission=collect.submission_of(client, job, have=submission),
        )
        engine.record_plan(ctx, plan, s)
    engine.act(ctx, plan, d)
    if dependants:
        engine.follow_chain(ctx, plan, dependants, held)


def _job_stage(ctx: engine.Run):
    """The job, which must still run (live stacks exist only then), its batch script, how it
    was submitted and slurmctld's jobs (its chain), read at once as the OOM runbook does:
    (None, None, None) when it does not run."""
    rec, inc = ctx.rec, ctx.rec.incident
    with rec.step("job", ctx.opts.progress) as s:
        job = ctx.job = engine.read_job(ctx)
        inc.job = plain(job)
        running = job.state in ACTIVE and bool(job.nodes)
        if running:
            reads = collect.job_reads(ctx.client, job, inc.evidence)
            script, submission, ctx.queue = reads.script, reads.submission, reads.queue
        else:
            script, submission = ctx.client.batch_script(inc.job_id), None
        rec.raw("batch_script.sh", script)
        rec.stage("job", job)
        s.detail = f"{job.state} on {job.node_expr or '?'} ({job.source})"
        if not running:
            d = ctx.diagnosis = HangDiagnosis(verdict="not_running")
            d.reasons.append(
                f"job {job.job_id} is {job.state}: live stacks exist only while it runs (for a "
                "job that ended, `runbook oom` reads what it left)"
            )
            inc.diagnosis = d.contract()
            s.detail += ": nothing to capture"
            ctx.handled = False  # a later `runbook oom` of the ended job is not "handled"
            return None, None, None
    return job, script, submission


def _logs_stage(ctx: engine.Run, job, script) -> list[str]:
    """The log's lines (the last progress, watchdog and transport lines); the stacks matter
    more than the log: a log that cannot be read is said, and the runbook goes on."""
    rec, inc = ctx.rec, ctx.rec.incident
    lines: list[str] = []
    with rec.step("logs", ctx.opts.progress) as s:
        logs: collect.JobLogs | None = None
        try:
            logs = ctx.trigger.logs or collect.read_logs(ctx.site, job, script, ctx.hosts)
        except RunbookError as e:
            s.status, s.detail = "unknown", f"logs not read: {e}"
            inc.evidence.setdefault("notes", []).append(f"logs not read: {e}")
        if logs is not None:
            rec.raw("log-excerpt.txt", logs.raw)
            lines = [ln for ln in logs.raw.splitlines() if not ln.startswith("@@")]
            last = logs.failed_step - 1 if logs.failed_step else None
            inc.evidence["last_step"] = last
            s.detail = f"last training step printed: {last if last is not None else 'none'}"
    return lines


def _capture_stage(ctx: engine.Run, job) -> dict:
    """One exec per node: every rank's stack, the step's processes, the node's health."""
    rec, inc, site = ctx.rec, ctx.rec.incident, ctx.site
    with rec.step("capture", ctx.opts.progress) as s:
        started = time.time()
        caps = stacks.capture_nodes(
            ctx.hosts,
            job.nodes,
            job.raw,
            site.probes,
            site.hang,
            job.start,
            max_parallel=site.ssh.max_parallel,
        )
        for node, cap in caps.items():
            for name, text in cap.raw.items():
                rec.raw(f"{node}.{name.replace(' ', '-')}.txt", text)
        inc.evidence["node_health"] = {
            n: health_view(c.health, job.raw) for n, c in caps.items() if c.health is not None
        }
        seen = sum(len(c.ranks) for c in caps.values())
        inc.evidence["capture"] = {
            "seconds": round(time.time() - started, 2),
            "execs_per_node": 1,
            "nodes": {
                n: {"ranks": len(c.ranks), "error": c.error, "unavailable": c.unavailable}
                for n, c in caps.items()
            },
        }
        s.detail = f"{words.count(seen, 'rank stack')} from {words.count(len(caps), 'node')}"
        if seen == 0:
            s.status = "unknown"
    return caps


def _diagnosis_stage(ctx: engine.Run, job, caps: dict, lines: list[str]) -> HangDiagnosis:
    rec, inc = ctx.rec, ctx.rec.incident
    with rec.step("diagnosis", ctx.opts.progress) as s:
        d = ctx.diagnosis = classify_hang(
            caps,
            log_lines=lines,
            world_size=job.num_tasks,
            nodes=job.nodes,
            tasks_per_node=job.tasks_per_node,
            straggler_max_share=ctx.playbook.thresholds.straggler_max_share,
        )
        inc.diagnosis = d.contract()
        rec.stage("diagnosis", inc.diagnosis)
        if not ctx.dry:  # what the capture saw on each node joins the nodes' history
            probed = {n: c.health for n, c in caps.items() if c.health is not None}
            node_history.record(
                ctx.conn,
                ctx.site,
                collect.HealthEvidence(probed),
                None,
                incident=inc.id,
                verdict=None,
                job_id=job.job_id,
                now=time.time(),
            )
        s.detail = d.verdict + (
            f": suspects {', '.join(_who(x) for x in d.suspects)}" if d.suspects else ""
        )
    return d


def _who(s: dict) -> str:
    rank = s["rank"] if s["rank"] is not None else "?"
    return f"rank {rank} on {s['node'] or '?'}"
