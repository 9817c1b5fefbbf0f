"""A chain of jobs: the pending jobs that wait on the one runbook cancels and resubmits
(`sbatch --dependency=afterok:A eval.sbatch`). Left alone, a job on `afterok:A` pends for ever
once A is cancelled (DependencyNeverSatisfied), and one on `afterany`/`afternotok` starts the
moment A is cancelled, before the rerun has trained a step. So: the second kind is held before
the cancel; once the rerun is in Slurm, each dependant of the job's own user is pointed at it
(the same types, read back) and released if runbook held it. Another user's job is named, never
changed: a person decides. Every change goes through the executor."""

from __future__ import annotations

from runbook.actions import steps
from runbook.slurm.client import valid_job_id
from runbook.slurm.dependency import SET_OFF_BY_CANCEL, Dependant, repointed, types_on


def changeable(d: Dependant, job) -> str | None:
    """Why runbook leaves dependant `d` of `job` alone, or None."""
    if d.user != job.user:
        return (
            f"job {d.job_id} is {d.user}'s, not {job.user}'s: runbook changes only the job owner's"
        )
    if valid_job_id(d.job_id) is None:
        return f"job {d.job_id} is not one job runbook can update (an array's pending tasks?)"
    return None


def hold_before_cancel(ex, client, dependants: list[Dependant], job) -> set[str]:
    """Hold the owner's dependants a cancel would set off; the ids runbook holds (a job the user
    held already stays theirs to release)."""
    held = set()
    for d in dependants:
        if changeable(d, job) or not types_on(d.dependency, d.on) & SET_OFF_BY_CANCEL:
            continue
        r = ex.run(steps.hold(client, d.job_id, ex.incident, on=d.on, owner=job.user))
        if r.status in ("applied", "dry_run") or (r.status == "skipped" and r.value == "held"):
            held.add(d.job_id)
    return held


def repoint(ex, client, dependants: list[Dependant], job, rerun: str | None, held: set[str]):
    """Each dependant pointed at `rerun` and released where runbook held it; (rows for the
    report, what a person must do, or "")."""
    rows, person = [], []
    for d in dependants:
        row = {"job": d.job_id, "user": d.user, "dependency": d.dependency, "now": None}
        rows.append(row)
        why = changeable(d, job)
        new = repointed(d.dependency, d.on, rerun) if rerun and not why else None
        if why:
            row["status"] = f"not changed: {why}"
            person.append(f"point job {d.job_id} at the rerun by hand ({why})")
        elif ex.dry_run:
            row["status"] = "dry run: would be pointed at the rerun, the same types"
        elif rerun is None:
            row["status"] = "not changed: there is no rerun" + (
                "; held by runbook" * (d.job_id in held)
            )
            person.append(
                f"job {d.job_id} waits on {job.job_id}, which has no rerun: "
                + (
                    "release it (held by runbook) or cancel it"
                    if d.job_id in held
                    else "cancel it or point it elsewhere"
                )
            )
        elif new is None:
            row["status"] = "not changed: its dependency is not one runbook can read"
            person.append(f"point job {d.job_id} at {rerun} by hand (Dependency={d.dependency})")
        else:
            r = ex.run(steps.depend(client, d.job_id, new, rerun, on=d.on, owner=job.user))
            status = f"{r.status}: {r.message}"
            if not r.ok:
                person.append(f"point job {d.job_id} at {rerun} by hand: {r.message}")
            elif d.job_id in held:
                rel = ex.run(steps.release(client, d.job_id, ex.incident))
                status += f"; release {rel.status}: {rel.message}"
                if not rel.ok:
                    person.append(f"release job {d.job_id}: {rel.message}")
            row["now"], row["status"] = new, status
    return rows, "; ".join(person)
