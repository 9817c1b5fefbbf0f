"""handle_grow: a job runbook shrank (shrink_world, after a GPU fault with no spare node) goes
back to its lineage's original size when the nodes are back. On the same engine as the OOM and
hang runbooks.

trigger -> job (Slurm; it must run or wait) -> lineage (signed tags: shrunk by runbook, the
original node count) -> capacity (the partition's usable nodes) and the newest valid checkpoint
(written after the job started) -> decision -> plan (accumulation lowered by old/new nodes,
only when exact) -> scancel (only once the plan applies) -> actions (the rerun from the newest
checkpoint, read back from Slurm at full size) -> report.
"""

from __future__ import annotations

from runbook import engine, words
from runbook.actions.policy import confirm_policy
from runbook.evidence import collect
from runbook.planning.grow import RUNG, WAITING, decide, make_grow_plan
from runbook.report.model import plain
from runbook.trigger import Options, Result, Trigger


def handle_grow(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the grow-back runbook for one job. Never raises for what happens on the cluster."""
    opts = opts or Options()
    return engine.run_incident(trigger, site, opts, None, _run, engine.concluder("grow"))


def _run(ctx: engine.Run) -> None:
    site, opts, rec = ctx.site, ctx.opts, ctx.rec
    inc = rec.incident
    inc.evidence["runbook"] = "grow"
    with rec.step("job", opts.progress) as s:
        job = ctx.job = engine.read_job(ctx)
        client = ctx.client  # from here on, the job's reads and changes are its owner's
        inc.job = plain(job)
        rec.stage("job", job)
        s.detail = (
            f"{job.state} on {words.count(job.num_nodes, 'node')} {job.node_expr or ''}".strip()
        )

    run, usable, saved = _evidence(ctx, job)

    with rec.step("diagnosis", opts.progress) as s:
        d = ctx.diagnosis = decide(job, run, usable, saved.chosen)
        inc.diagnosis = d.contract()
        rec.stage("diagnosis", inc.diagnosis)
        s.detail = f"{d.verdict}: {d.reasons[-1]}" if d.reasons else d.verdict
        if d.verdict != "grow":
            ctx.handled = False  # nothing done: asked again later, the job may grow
            if d.verdict in WAITING:
                inc.next_steps.append(
                    f"Nothing changed; ask again later: `runbook grow --job {job.job_id}` (the "
                    "sweep does it by itself with [policy] unattended_grow = true)."
                )

    with rec.step("plan", opts.progress) as s:
        script = client.batch_script(job.job_id) if d.verdict == "grow" else ""
        if script:
            rec.raw("batch_script.sh", script)
        configs = collect.configs_of(job, script) if script else None
        plan = ctx.plan = make_grow_plan(
            d,
            site,
            job=job,
            script=script,
            run=run,
            checkpoint=saved.chosen,
            configs=configs,
            submission=collect.submission_of(ctx.client, job),
        )
        engine.record_plan(ctx, plan, s)
    if not plan.acts:
        return

    ctx.ex.confirm = confirm_policy(
        site, d.verdict, rung=RUNG, assume_yes=opts.assume_yes, confirm=opts.confirm
    )
    with rec.step("cancel", opts.progress) as s:
        r = engine.cancel(
            ctx,
            s,
            hint=f"cancel it by hand (scancel {job.job_id}), then run `runbook grow` again",
        )
    if r.status not in ("applied", "dry_run", "skipped"):
        # The shrunk job still runs: a second job from the same checkpoints would race it.
        plan.needs_human = True
        plan.human_action = (
            f"job {job.job_id} was not cancelled ({r.status}): it keeps its size; rerun with "
            "--yes, or allow [policy] unattended_grow"
        )
        return
    if not ctx.dry:
        # The job may have saved once more while it stopped: resume from the newest.
        newer = collect.checkpoints_of(site, job, run).chosen
        if newer is not None and newer.path != (plan.checkpoint.path if plan.checkpoint else None):
            plan = ctx.plan = make_grow_plan(
                d,
                site,
                job=job,
                script=script,
                run=run,
                checkpoint=newer,
                configs=configs,
                submission=collect.submission_of(ctx.client, job),
            )
    engine.act(ctx, plan, d)


def _evidence(ctx: engine.Run, job):
    """The lineage (where it started, what it tried), the partition's usable nodes, and the
    newest valid checkpoint: what deciding to grow rests on."""
    site, client, rec = ctx.site, ctx.client, ctx.rec
    inc = rec.incident
    with rec.step("evidence", ctx.opts.progress) as s:
        run = collect.lineage_of(site, client, job)
        usable = collect.usable_nodes(client, job)
        saved = collect.checkpoints_of(site, job, run)
        inc.evidence["lineage"] = {"tried": run.tried, "original_nodes": run.root_nodes}
        inc.evidence["usable_nodes"] = sorted(usable) if usable is not None else None
        for note in run.suspicious:
            inc.evidence.setdefault("notes", []).append(f"SUSPICIOUS: {note}")
        s.detail = (
            f"lineage started on {words.count(run.root_nodes, 'node')}; "
            f"{len(usable) if usable is not None else '?'} usable in the partition; newest "
            f"checkpoint {saved.chosen.path if saved.chosen else 'none'}"
        )
    return run, usable, saved
