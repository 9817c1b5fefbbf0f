"""handle_prevent: a running job whose worst rank heads for an OOM (the allocator thrashing, a
step peaking near the card, a leak) is asked to checkpoint now, then cancelled and resubmitted
from that checkpoint with the micro-batch fitted from its own series: no step lost. On the same
engine as the OOM, hang and grow runbooks (one lock, the ledger, the dry run, the report).

trigger -> job (Slurm; it must run) -> logs (every rank's memory series, the ranks' declared
checkpoint handler) -> diagnosis (the worst rank, the fit, whether runbook may ask: a handler on
every rank, and a person or [policy] unattended_prevent) -> plan (the fitted rerun) -> signal
(scancel --signal to the ranks, as the owner) -> checkpoint (the job's answer in its log, then
the file read back as the lineage's newest valid checkpoint, bounded by [policy]
prevent_wait_s) -> cancel -> actions (the rerun from that checkpoint, read back) -> report.
Without a handler, or no checkpoint in time, nothing but the signal is done, and it says why.
"""

from __future__ import annotations

import time

from runbook import engine
from runbook.actions import steps
from runbook.actions.policy import confirm_policy
from runbook.errors import RunbookError
from runbook.evidence import collect, handler, trend
from runbook.planning import fit as fitting
from runbook.planning.plan import failing_batch
from runbook.planning.prevent import REPORTED, decide, make_prevent_plan
from runbook.report.model import plain
from runbook.trigger import Options, Result, Trigger

POLL_S = 8.0  # at most between two reads of the job's log while it writes the checkpoint


def handle_prevent(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the prevention runbook for one job. Never raises for what happens on the cluster."""
    opts = opts or Options()
    return engine.run_incident(trigger, site, opts, None, _run, engine.concluder("prevent"))


def _run(ctx: engine.Run) -> None:
    site, opts, rec = ctx.site, ctx.opts, ctx.rec
    inc = rec.incident
    inc.evidence["runbook"] = "prevent"
    with rec.step("job", opts.progress) as s:
        job = ctx.job = engine.read_job(ctx)
        inc.job = plain(job)
        reads = collect.job_reads(ctx.client, job, inc.evidence)
        script, submission, ctx.queue = reads.script, reads.submission, reads.queue
        rec.raw("batch_script.sh", script)
        rec.stage("job", job)
        s.detail = f"{job.state} on {job.node_expr or '?'}"
    launch = _logs(ctx, job, script)
    d = _decide(ctx, job, script, launch)
    run = collect.lineage_of(site, ctx.client, job)
    configs = collect.configs_of(job, script)

    def replan(checkpoint, sub):
        return make_prevent_plan(
            d,
            site,
            job=job,
            script=script,
            run=run,
            checkpoint=checkpoint,
            configs=configs,
            submission=sub,
        )

    with rec.step("plan", opts.progress) as s:
        # Before the request, from the newest checkpoint so far (what a dry run shows).
        plan = ctx.plan = replan(collect.checkpoints_of(site, job, run).chosen, submission)
        engine.record_plan(ctx, plan, s)
    if not plan.acts:
        return
    # A person asked (`runbook prevent`: --yes or the terminal), or the site's policy let the
    # sweep act (decide() refused otherwise).
    ctx.ex.confirm = (
        None
        if ctx.trigger.source == "sweep"
        else confirm_policy(site, None, assume_yes=opts.assume_yes, confirm=opts.confirm)
    )
    sent = _signal(ctx, job, d)
    if sent is None:
        return
    saved = _await_checkpoint(ctx, job, script, run, d, sent)
    if saved is None and not ctx.dry:
        return
    with rec.step("cancel", opts.progress) as s:
        r = engine.cancel(ctx, s, hint=f"cancel it by hand (scancel {job.job_id})")
    if r.status not in ("applied", "dry_run", "skipped"):
        plan.needs_human = True
        plan.human_action = f"job {job.job_id} was not cancelled ({r.status}): it keeps running"
        return
    if saved is not None:
        plan = ctx.plan = replan(saved, collect.submission_of(ctx.client, job, have=submission))
        _lost(ctx, job, script, saved)
    engine.act(ctx, plan, d, decided=True)


def _logs(ctx: engine.Run, job, script):
    rec = ctx.rec
    with rec.step("logs", ctx.opts.progress) as s:
        logs = ctx.trigger.logs or collect.read_logs(ctx.site, job, script, ctx.hosts)
        rec.raw("log-excerpt.txt", logs.raw)
        launch = logs.launch
        s.detail = f"{len(launch.trends)} rank series, {len(launch.instrument)} instrument lines"
    return launch


def _decide(ctx: engine.Run, job, script: str, launch):
    site, rec = ctx.site, ctx.rec
    inc = rec.incident
    with rec.step("diagnosis", ctx.opts.progress) as s:
        seen = trend.watch(launch.trends, site.ladder.fit_margin)
        declared = handler.read(launch.instrument, handler.seen_ranks(launch))
        f = None
        if seen is not None and fitting.fittable(seen.trend):
            m, a = failing_batch(script, site.knobs)
            f = fitting.from_series(
                seen.trend, micro_batch=m, grad_accum=a, margin=site.ladder.fit_margin
            )
        d = ctx.diagnosis = decide(
            job,
            seen,
            declared,
            f,
            mode=site.policy.unattended_prevent,
            person=ctx.trigger.source != "sweep",
        )
        # The latest step any rank's series shows: the requested checkpoint is at it or after.
        done = [x for t in launch.trends for x in t.steps if x is not None]
        d.step = max(done) if done else d.step
        inc.diagnosis = d.contract()
        inc.evidence["handler"] = plain(declared)
        if seen is not None:
            inc.evidence["trend"] = seen.trend.contract()
        rec.stage("diagnosis", inc.diagnosis)
        s.detail = f"{d.decision}: {d.reasons[-1]}" if d.reasons else d.decision
        if d.decision in REPORTED:
            ctx.handled = False  # nothing changed: a later look may act
            s.status = "ok"
    return d


def _signal(ctx: engine.Run, job, d) -> float | None:
    """The request, through the executor; when it was sent (None: not sent, nothing else done)."""
    with ctx.rec.step("signal", ctx.opts.progress) as s:
        r = ctx.ex.run(
            steps.signal(ctx.client, job.job_id, d.signal, ctx.rec.incident.id, known=job)
        )
        s.detail = f"{r.status}: {r.message}"
        if r.status == "dry_run":
            return time.time()
        if r.status != "applied" and not (r.status == "skipped" and r.value):
            s.status = "skipped" if r.status in ("declined", "skipped") else "failed"
            assert ctx.plan is not None
            ctx.plan.needs_human = r.status == "failed"
            ctx.plan.human_action = f"the request was not sent ({r.status}): nothing changed"
            return None
        try:
            return float(r.value or time.time())
        except ValueError:
            return time.time()


def _await_checkpoint(ctx: engine.Run, job, script: str, run, d, sent: float):
    """The checkpoint the job wrote on request: its line in the log (at the last step seen or
    later), then the file read back as the lineage's newest valid checkpoint, written after the
    request. Polled until [policy] prevent_wait_s; None when it never came."""
    site = ctx.site
    with ctx.rec.step("checkpoint", ctx.opts.progress) as s:
        if ctx.dry:
            s.status, s.detail = "skipped", "dry run: no request sent, none awaited"
            return None
        at_least = d.step + 1 if d.step is not None else None
        deadline = time.monotonic() + site.policy.prevent_wait_s
        said, wait = None, 0.5
        while True:
            logs = collect.read_logs(site, job, script, ctx.hosts)
            said = handler.written(logs.launch.instrument, at_least) or said
            if said is not None:
                chosen = collect.checkpoints_of(site, job, run).chosen
                if (
                    chosen is not None
                    and chosen.step == said[0]
                    and (chosen.mtime or 0) >= sent - 2
                ):
                    ctx.rec.raw("log-after-request.txt", logs.raw)
                    s.detail = f"step {chosen.step}: {chosen.path} ({chosen.reason})"
                    ctx.rec.incident.evidence["requested_checkpoint"] = {
                        "step": chosen.step,
                        "path": chosen.path,
                        "said": said[1],
                        "after_s": round((chosen.mtime or sent) - sent, 1),
                    }
                    return chosen
            if time.monotonic() >= deadline:
                break
            # Soon at first (a job saves in seconds), then less often (a large model's save).
            time.sleep(min(wait, max(0.0, deadline - time.monotonic())))
            wait = min(wait * 2, POLL_S)
        s.status = "unknown"
        s.detail = (
            f"no new valid checkpoint within {site.policy.prevent_wait_s:g} s of the request"
            + (
                f" (the job said {said[1]} at step {said[0]}, not read back as valid)"
                if said
                else ""
            )
            + ": the job keeps running, nothing else changed"
        )
        assert ctx.plan is not None
        ctx.plan.needs_human = True
        ctx.plan.human_action = s.detail
        return None


def _lost(ctx: engine.Run, job, script: str, saved) -> None:
    """The steps the job ran past its checkpoint before the cancel, from its own log (the
    progress the cost says was lost)."""
    try:
        logs = collect.read_logs(ctx.site, job, script, ctx.hosts)
    except RunbookError:
        return
    done = [x for t in logs.launch.trends for x in t.steps if x is not None]
    # A memory line of step N is printed at the start of step N + 1: N is done.
    last = max(done) if done else None
    ctx.rec.incident.evidence["prevention"] = {
        "checkpoint_step": saved.step,
        "last_step_seen": last,
        "steps_lost": max(0, last - saved.step)
        if last is not None and saved.step is not None
        else None,
        "projected_step": ctx.diagnosis.projected_step,
    }
