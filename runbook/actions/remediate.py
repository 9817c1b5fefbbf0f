"""The actions stage: carry out a plan through the one executor (dry run, ledger, idempotency,
confirmation), and read back what Slurm made of it."""

from __future__ import annotations

from pathlib import Path

from runbook import lineage
from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.diagnosis import Diagnosis
from runbook.errors import RunbookError
from runbook.hang_diagnosis import HangDiagnosis
from runbook.jobfiles.configs import point_script_at
from runbook.planning import ladder, resources
from runbook.planning.environment import env_file_text


def apply_plan(
    ex: Executor,
    client,
    site,
    job,
    plan: ladder.Plan,
    folder: Path,
    d: Diagnosis | HangDiagnosis,
    known: steps.Known | None = None,
    actor=None,
    held: bool = False,
) -> None:
    """Drain (when the rung says so), write the patched script where its owner reads it, submit
    it as the owner with the lineage tag, and read the new job back: the same world size and
    GPUs, or it is cancelled and a person decides. Every mutation goes through the executor.
    `actor` (runbook.identity): who the job's files and commands belong to; runbook itself
    when None or `self`. `held`: submitted with --hold, and read back held (the job it
    replaces still runs; the caller cancels it, then releases this one)."""
    if plan.drain:
        reasons = (d.reasons[0] if d.reasons else d.verdict)[:200]
        r = ex.run(
            steps.drain(
                client, plan.drain, f"runbook {ex.incident}: {d.verdict}: {reasons}", ex.incident
            )
        )
        if not r.ok:
            return
    writer = _writer(site, job, plan, folder, actor, ex.incident)
    if writer is None:
        return
    written = _write_job(ex, plan, *writer)
    if written is None:
        return
    script, args = written
    if held:
        args = ["--hold", *args]
    sub = ex.run(
        steps.submit(
            client,
            script,
            args,
            plan.sbatch_env,
            incident=ex.incident,
            parent=job.job_id,
            rung=plan.rung,
            secret=lineage.site_secret(site),
            runbook_user=lineage.runbook_user(site),
            array_task=getattr(job, "array_task", None),
            script_args=plan.script_args,
            failed_step=plan.failed_step,
            need=lineage.need_text(
                plan.fit.from_micro_batch if plan.fit is not None else None,
                plan.fit.needed_mib if plan.fit is not None else None,
            ),
            known=known,
            owner=job.user or "",
        )
    )
    if sub.status != "applied" or not sub.value:
        return
    _read_back(ex, client, job, plan, sub.value, held)


def _writer(site, job, plan: ladder.Plan, folder: Path, actor, incident: str):
    """(where the rerun's files go, how one is written): the incident folder, by runbook, when
    runbook is the job's owner; else a folder of the owner's under the job's working directory
    ([identity] rerun_dir), by the owner, mode 700, so the rerun (and its sbatch) can read them
    and no other user can. None: there is no such folder (the plan then needs a person)."""
    if actor is None or not actor.as_owner:
        return folder, lambda path, text, mode: steps.write_file(path, text, mode=mode)
    if not job.work_dir or not job.work_dir.startswith("/"):
        plan.needs_human = True
        plan.human_action = (
            f"Slurm names no working directory for job {job.job_id} ({job.work_dir or 'none'}): "
            f"runbook has no folder of {actor.owner.name}'s to write the rerun's files in; "
            "resubmit it by hand as its owner"
        )
        return None
    own = Path(job.work_dir) / site.identity.rerun_dir / incident
    return own, lambda path, text, mode: steps.write_owner_file(actor, path, text, mode=mode)


def _write_job(
    ex: Executor, plan: ladder.Plan, folder: Path, write
) -> tuple[str, list[str]] | None:
    """The patched script, its config copies and its environment file in `folder`, each by
    `write`; the script's path and sbatch's options (None: a write failed, the executor said
    why)."""
    assert plan.patch is not None  # a plan that acts has its script
    text = plan.patch.new
    # Config copies beside the new script, the script pointed at them by absolute path (the
    # rerun runs in the original's folder, where the copies are not).
    for name, copy in plan.patch.files.items():
        target = str(folder / Path(name).name)
        if not ex.run(write(target, copy, 0o600)).ok:
            return None
        text = point_script_at(text, name, target)
    script = str(folder / f"job.{plan.rung}.sbatch")
    if not ex.run(write(script, text, 0o700)).ok:
        return None
    args = list(plan.sbatch_args)
    if plan.env_file is not None:
        # The job's environment for --export-file, readable by runbook's user only: it may hold
        # the user's own credentials. The ledger keeps its hash, never its text.
        env_path = str(folder / f"job.{plan.rung}.env")
        written = ex.run(write(env_path, env_file_text(plan.env_file), 0o600))
        if not written.ok:
            return None
        args.append(f"--export-file={env_path}")
    for group in plan.het_groups:  # a heterogeneous job's later components, each its own
        args += [":", *group]
    return script, args


def _read_back(
    ex: Executor, client, job, plan: ladder.Plan, new_id: str, held: bool = False
) -> None:
    """Read the new job back: the same world size and GPUs (and held, when it was submitted
    held), or it is not the same job (it is cancelled and a person decides)."""
    try:
        new = client.job(new_id)
    except RunbookError as e:
        plan.needs_human = True
        plan.human_action = f"check new job {new_id} by hand: it could not be read back ({e})"
        return
    wrong = resources.mismatches(job, new, plan.rung, plan.world)
    # A heterogeneous job: every component read back, each against its own.
    pairs = resources.components(job, new) if len(job.components) > 1 else []
    wrong += [w for c in pairs for w in c["mismatches"]]
    if held and not new.reason.startswith("JobHeld"):
        wrong.append(f"submitted with --hold, Slurm shows it {new.state} ({new.reason or '-'})")
    plan.readback = {
        "original": resources.world(job),
        "new": resources.world(new),
        "mismatches": wrong,
        **({"components": pairs} if pairs else {}),
    }
    if wrong:
        ex.run(steps.cancel(client, new_id))
        plan.needs_human = True
        plan.human_action = (
            f"new job {new_id} did not get the original's resources "
            f"({'; '.join(wrong)}): it was cancelled; resubmit by hand"
        )


def outcome(results: list, plan: ladder.Plan) -> tuple[str | None, str, str]:
    """(the new job's id, the step's status, its detail) from what the executor did: no new job
    when the submission failed, or was read back as not the same job and cancelled."""
    sub = next((r for r in results if r.kind == "submit"), None)
    new = sub.value if sub and sub.status in ("applied", "skipped") else None
    if plan.readback and plan.readback["mismatches"]:
        new = None
    failed = [r for r in results if r.status == "failed"]
    if failed:
        return new, "failed", failed[0].message
    if sub and sub.status == "dry_run":
        return new, "ok", f"would run: {' '.join(sub.argv)}"
    return new, "ok", f"new job {new}" if new else "nothing submitted"
