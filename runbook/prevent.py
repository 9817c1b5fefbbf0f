"""handle_prevent: a running job whose worst rank heads for an OOM (the allocator thrashing, a
step peaking near the card, a leak) is asked to checkpoint at one step on every rank, its
rerun (the micro-batch fitted from its own series) is submitted held and read back, and only
then is it cancelled and the rerun released: no step lost, and a job whose rerun cannot be
submitted keeps training. On the same engine as the OOM, hang and grow runbooks (one lock, the
ledger, the dry run, the report).

trigger -> job (Slurm; it must run) -> logs (every rank's memory series, the ranks'
declarations) -> diagnosis (the worst rank, the fit, whether runbook may ask: every rank of the
job's world declared, counted against Slurm's figures, and a person or [policy]
unattended_prevent) -> plan (the fitted rerun) -> request (runbook's file, written as the owner:
each rank says its step and pauses) -> step (the one step every rank saves at) -> checkpoint
(every rank's answer in the log, then rank 0's file read back as the lineage's newest valid
checkpoint) -> actions (the rerun from it, held, read back) -> cancel -> release. Whatever
fails before the cancel withdraws the request: the job goes on training, and the report says
why. Each wait is bounded by [policy] prevent_wait_s; the job's own hold outlasts them all
(planning.prevent.decide refuses a job that holds less).
"""

from __future__ import annotations

import time
from typing import Any

from runbook import engine, words
from runbook.actions import steps
from runbook.actions.policy import confirm_policy
from runbook.errors import RunbookError
from runbook.evidence import collect, handler, job_metrics, trend
from runbook.planning import fit as fitting
from runbook.planning.plan import failing_batch
from runbook.planning.prevent import REPORTED, decide, make_prevent_plan
from runbook.report.model import plain
from runbook.trigger import Options, Result, Trigger

POLL_S = 8.0  # at most between two reads of the job's log while it writes the checkpoint
# How long after the last rank's answer to `next` runbook names the step: the ranks that have
# not answered are blocked in a collective with the paused ones, or finishing their step.
SETTLE_S = 5.0
# The site services: they act on every user's job under [policy], never as a person.
SERVICES = ("sweep", "hook")


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
    # sweep or the hook act (decide() refused otherwise).
    ctx.ex.confirm = (
        None
        if ctx.trigger.source in SERVICES
        else confirm_policy(site, None, assume_yes=opts.assume_yes, confirm=opts.confirm)
    )
    go, saved = _ask(ctx, job, script, run, d)
    if not go:
        return
    plan = ctx.plan = replan(saved, collect.submission_of(ctx.client, job, have=submission))
    _replace(ctx, job, d, plan)
    if saved is not None and ctx.rec.incident.new_job_id:
        _lost(ctx, job, script, saved)


def _replace(ctx: engine.Run, job, d, plan) -> None:
    """The rerun submitted held and read back, then the job cancelled, then the rerun
    released: a rerun that cannot be submitted leaves the job training (the request
    withdrawn), and a job that cannot be cancelled keeps running while its held rerun goes."""
    rec, opts, inc = ctx.rec, ctx.opts, ctx.rec.incident
    engine.act(ctx, plan, d, decided=True, held=not ctx.dry)
    new = inc.new_job_id
    if not ctx.dry and not new:
        _withdraw(ctx, job, d, "its rerun was not submitted and read back held")
        plan.needs_human = True
        plan.human_action = (
            "the rerun could not be submitted (see the actions): the job was not cancelled and "
            "goes on training; lower its micro-batch by hand or fix the submission"
        )
        return
    with rec.step("cancel", opts.progress) as s:
        try:
            r = engine.cancel(ctx, s, hint=f"cancel it by hand (scancel {job.job_id})")
        except RunbookError:
            r = None
    if r is None or r.status not in ("applied", "dry_run", "skipped"):
        if new:  # the held rerun is runbook's doing: it goes, the job trains on
            ctx.ex.run(steps.cancel(ctx.client, new))
            inc.new_job_id = None
        _withdraw(ctx, job, d, "the job could not be cancelled")
        plan.needs_human = True
        plan.human_action = f"job {job.job_id} was not cancelled: it keeps running"
        return
    with rec.step("release", opts.progress) as s:
        if not new:
            s.status, s.detail = "skipped", "dry run: nothing submitted"
            return
        rel = ctx.ex.run(
            steps.release(
                ctx.client, new, inc.id, why=f"job {job.job_id} is cancelled: the rerun runs"
            )
        )
        s.status = "ok" if rel.ok else "failed"
        s.detail = f"{rel.status}: {rel.message}"
        if not rel.ok:
            plan.needs_human = True
            plan.human_action = f"release the rerun by hand: scontrol release {new}"


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
        seen = trend.watch(job_metrics.running_series(job, launch), site.ladder.fit_margin)
        declared = handler.read(launch.instrument, job, handler.seen_ranks(launch))
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
            person=ctx.trigger.source not in SERVICES,
            wait_s=site.policy.prevent_wait_s,
            convention=handler.requeue_convention(script, "\n".join(launch.tails)),
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


def _ask(ctx: engine.Run, job, script: str, run, d) -> tuple[bool, Any]:
    """The request and its answers: (True, the checkpoint every rank wrote at one step), or
    (False, None): nothing more is done, the request withdrawn where it was written. A dry run
    shows the request and goes on to the plan's actions with the newest checkpoint so far."""
    site, rec, opts = ctx.site, ctx.rec, ctx.opts
    with rec.step("request", opts.progress) as s:
        r = _write(ctx, job, d, "next")
        s.detail = f"{r.status}: {r.message}"
        if r.status == "dry_run":
            s.status = "ok"
            return True, collect.checkpoints_of(site, job, run).chosen
        if not (r.status == "applied" or (r.status == "skipped" and r.value)):
            s.status = "skipped" if r.status in ("declined", "skipped") else "failed"
            assert ctx.plan is not None
            ctx.plan.needs_human = r.status == "failed"
            ctx.plan.human_action = f"the request was not written ({r.status}): nothing changed"
            return False, None
        sent = float(r.value or time.time())
    # A person said yes to asking the job: the step, the held rerun, the cancel and the release
    # are that one decision (a no halfway would leave every rank paused until its hold ends).
    ctx.ex.confirm = None
    with rec.step("step", opts.progress) as s:
        target, why = _agree(ctx, job, script, d)
        if target is None:
            return _gave_up(ctx, job, d, s, why)
        r = _write(ctx, job, d, str(target))
        if not r.ok:
            return _gave_up(ctx, job, d, s, f"the step could not be named ({r.message})")
        s.detail = f"every rank saves after step {target} ({why})"
        inc = rec.incident
        inc.evidence["request"] = {"path": d.request, "step": target, "how": why}
    with rec.step("checkpoint", opts.progress) as s:
        saved, why = _await_checkpoint(ctx, job, script, run, d, sent, target)
        if saved is None:
            return _gave_up(ctx, job, d, s, why)
        s.detail = f"step {saved.step}: {saved.path} ({saved.reason}); {why}"
        return True, saved


def _write(ctx: engine.Run, job, d, what: str):
    assert d.request is not None
    return ctx.ex.run(
        steps.request_checkpoint(ctx.actor, job.job_id, d.request, ctx.rec.incident.id, what)
    )


def _withdraw(ctx: engine.Run, job, d, why: str) -> None:
    """The request withdrawn (the ranks that paused or hold go on training). Only after the
    request was written, so after the person's one yes (_ask): never asked again."""
    if ctx.dry or d.request is None:
        return
    r = _write(ctx, job, d, "withdrawn")
    ctx.rec.incident.evidence.setdefault("notes", []).append(
        f"request withdrawn ({r.status}): {why}"
    )


def _gave_up(ctx: engine.Run, job, d, s, why: str) -> tuple[bool, Any]:
    s.status = "unknown"
    s.detail = f"{why}: the request was withdrawn, the job keeps training, nothing else changed"
    _withdraw(ctx, job, d, why)
    assert ctx.plan is not None
    ctx.plan.needs_human = True
    ctx.plan.human_action = s.detail
    return False, None


def _read_answers(ctx: engine.Run, job, script: str):
    logs = collect.read_logs(ctx.site, job, script, ctx.hosts)
    return logs, handler.answers(logs.launch.instrument, ctx.rec.incident.id)


def _until(ctx: engine.Run, job, script: str, judge):
    """The job's log read again and again (soon at first, then less often) until
    `judge(logs, answers, last)` returns something; `last` is True once [policy]
    prevent_wait_s has passed, when it must."""
    deadline = time.monotonic() + ctx.site.policy.prevent_wait_s
    wait = 0.5
    while True:
        last = time.monotonic() >= deadline
        logs, a = _read_answers(ctx, job, script)
        if (got := judge(logs, a, last)) is not None:
            return got
        time.sleep(min(wait, max(0.0, deadline - time.monotonic())))
        wait = min(wait * 2, POLL_S)


def _agree(ctx: engine.Run, job, script: str, d) -> tuple[int | None, str]:
    """The step every rank saves after (handler.step_to_save), from the steps they say on
    seeing the request: read until every rank of the world answered, or the answers stop
    coming for SETTLE_S (the rest are blocked in a collective with the paused ones), bounded
    by [policy] prevent_wait_s. (None, why) when no rank answered."""
    world = d.world
    assert world is not None
    seen = {"count": 0, "since": time.monotonic()}

    def judge(_logs, a, last):
        if len(a.seen) != seen["count"]:
            seen["count"], seen["since"] = len(a.seen), time.monotonic()
        everyone = len(a.seen) >= world
        if everyone or (a.seen and (last or time.monotonic() - seen["since"] >= SETTLE_S)):
            target = handler.step_to_save(a, world)
            if target is None:
                return None, (
                    "the ranks saw the request but said no step: their loop calls "
                    "checkpoint_requested() without the step it finished (expected "
                    "checkpoint_requested(step))"
                )
            return target, (
                f"all {world} ranks paused"
                if everyone
                else f"{len(a.seen)} of {world} ranks paused, the rest one step behind at most"
            )
        if last:
            return None, (
                f"no rank said it saw the request at {d.request} within "
                f"{ctx.site.policy.prevent_wait_s:g} s (is that folder shared with runbook's "
                "host?)"
            )
        return None

    return _until(ctx, job, script, judge)


def _await_checkpoint(ctx: engine.Run, job, script: str, run, d, sent: float, target: int):
    """Every rank's checkpoint line at `target`, then rank 0's file read back as the lineage's
    newest valid checkpoint, written after the request: ((checkpoint, logs), how) or
    (None, why). A rank that passed the step before it saw it (checkpoint-missed) ends the
    wait at once: the ranks would hold at different steps."""
    site = ctx.site
    world = d.world
    assert world is not None

    def judge(logs, a, last):
        if a.missed:
            r, at = next(iter(sorted(a.missed.items())))
            return None, f"rank {r} was past step {target} (at {at}) when it saw the request"
        at_target = {r for r, (step, _) in a.written.items() if step == target}
        if len(at_target) >= world:
            chosen = collect.checkpoints_of(site, job, run).chosen
            if chosen is not None and chosen.step == target and (chosen.mtime or 0) >= sent - 2:
                ctx.rec.raw("log-after-request.txt", logs.raw)
                ctx.rec.incident.evidence["requested_checkpoint"] = {
                    "step": chosen.step,
                    "path": chosen.path,
                    "ranks_written": sorted(at_target),
                    "said": a.written.get(0, (target, ""))[1],
                    "after_s": round((chosen.mtime or sent) - sent, 1),
                }
                return chosen, f"all {world} ranks wrote step {target} and hold"
        if last:
            missing = sorted(set(range(world)) - at_target)
            return None, (
                f"no valid checkpoint of step {target} from every rank within "
                f"{site.policy.prevent_wait_s:g} s ({words.ranks(missing) or 'every rank'} "
                "said none, or the file was not read back as valid)"
            )
        return None

    return _until(ctx, job, script, judge)


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
