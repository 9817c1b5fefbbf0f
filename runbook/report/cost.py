"""What an incident cost, from its own record (report.json): values in, values out.

Every time comes from what Slurm or the job itself recorded, never from a projection:
- the failure: runbook.instrument's dump of the failing rank (the time it ran out, on its own
  clock) where the job wrote one, within the job's run; else the job's end as Slurm records it
  for a job in a final state; for a job still wedged (RUNNING: its EndTime is only start + time
  limit, a projection) the first failure's own stamp in the logs; else unknown;
- detection: from the failure to the incident's start (never negative: a failure stamped after
  the incident began means the clocks disagree, and the figure is unknown);
- diagnosis and resubmission: from the incident's start to the end of its diagnosis step and to
  the applied `sbatch`;
- GPU-hours lost: the job's GPUs (Slurm's TRES) x the time from the last valid checkpoint (the
  job's start when there is none, or when the checkpoint is older than the job: a rerun that
  resumed from its parent's checkpoint and ran out before writing its own lost only its own
  run, the parent's loss being the parent's incident's) to when the GPUs were freed: the end
  Slurm recorded for the cancel (read back), else the job's own end in a final state. A job that
  was not stopped still holds its GPUs: its loss is unknown, never counted to its projected end;
- once `runbook verify` has judged the rerun: its queue wait (Slurm's submit and start times) and
  the time from the failure to when runbook saw it past the failed step.
A number runbook cannot read from the record is None ("unknown"), never guessed; `basis` says
what each figure came from.
"""

from __future__ import annotations

from datetime import datetime


def _ts(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).replace("_", "T")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt.timestamp()


def _gpus(tres: str) -> int | None:
    from runbook.planning.resources import gpus

    return gpus(tres or "")


def _final(job: dict) -> bool:
    """A job in a final state: only then is Slurm's EndTime when it ended."""
    from runbook.slurm.client import TERMINAL_STATES

    return str(job.get("state") or "").split(" ")[0] in TERMINAL_STATES


def _dump_time(report: dict, job: dict) -> float | None:
    """When the failing rank ran out, as runbook.instrument's dump of it says: the job's own
    (its SLURM_JOB_ID) and within its run, else None."""
    dump = (report.get("evidence") or {}).get("dump") or {}
    at = _ts(dump.get("time"))
    if at is None:
        return None
    ids = {str(report.get("job_id") or ""), str(job.get("job_id") or ""), str(job.get("raw") or "")}
    if dump.get("job_id") and str(dump["job_id"]) not in ids - {""}:
        return None
    start, end = _ts(job.get("start")), _ts(job.get("end")) if _final(job) else None
    slack = 120.0  # the nodes' and slurmctld's clocks
    if (start is not None and at < start - slack) or (end is not None and at > end + slack):
        return None
    return at


def _failure(report: dict, job: dict, basis: list[str]) -> float | None:
    if (at := _dump_time(report, job)) is not None:
        basis.append("failure: runbook.instrument's dump of the failing rank (its own clock)")
        return at
    if _final(job) and _ts(job.get("end")) is not None:
        basis.append(f"failure: the job's end in Slurm ({job.get('state')})")
        return _ts(job.get("end"))
    ff = (report.get("evidence") or {}).get("first_failure") or {}
    at = _ts(ff.get("time"))
    if at is not None:
        basis.append("failure: the first failure's own stamp in the logs")
    else:
        basis.append(
            f"failure: unknown (the job was {job.get('state') or 'in an unknown state'} and its "
            "logs carry no time stamp)"
        )
    return at


def _freed(actions: list[dict], job: dict, basis: list[str]) -> float | None:
    """When the GPUs were freed, as Slurm recorded it."""
    cancel = next(
        (
            a
            for a in actions
            if a.get("kind") == "cancel" and a.get("status") in ("applied", "skipped")
        ),
        None,
    )
    if cancel is not None and _ts(cancel.get("value")) is not None:
        basis.append("GPUs freed: the cancelled job's end as Slurm recorded it")
        return _ts(cancel.get("value"))
    if cancel is not None and cancel.get("status") == "applied":
        basis.append("GPUs freed: when the cancel was read back (Slurm recorded no end)")
        return _ts(cancel.get("at"))
    if _final(job) and _ts(job.get("end")) is not None:
        basis.append("GPUs freed: the job's end in Slurm")
        return _ts(job.get("end"))
    basis.append(
        f"GPUs freed: unknown (the job was {job.get('state') or 'in an unknown state'} and was "
        "not stopped by this incident)"
    )
    return None


def _gpu_hours(hours: float) -> float:
    """Three decimals, and a loss under a thousandth kept to two significant digits: a job
    cancelled half a second after its checkpoint lost 0.00047 GPU-hours, not nothing (seen on
    the test cluster once the incident got fast)."""
    return round(hours, 3) if hours >= 0.001 or hours == 0 else float(f"{hours:.2g}")


def _lost_since(plan: dict, job: dict, basis: list[str]) -> float | None:
    """Where the lost work starts: the last valid checkpoint, never before the job began."""
    ckpt = (plan.get("checkpoint") or {}).get("mtime")
    began = _ts(job.get("start"))
    if ckpt and began is not None and ckpt < began:
        # Resumed from an older job's checkpoint: this job's loss is its own run only.
        basis.append(
            "lost work: since the job's start (its last valid checkpoint was written before it "
            "began, by an earlier job: that loss is the earlier job's incident's)"
        )
        return began
    if ckpt:
        basis.append("lost work: since the last valid checkpoint")
        return ckpt
    if began is not None:
        basis.append("lost work: since the job's start (no valid checkpoint)")
    return began


def incident_cost(report: dict) -> dict:
    job = report.get("job") or {}
    plan = report.get("plan") or {}
    actions = report.get("actions") or []
    basis: list[str] = []
    started = _ts(report.get("started"))
    prevented = _prevented(report, basis)
    failure_at = None if prevented is not None else _failure(report, job, basis)
    detection = None
    if started is not None and failure_at is not None:
        if started >= failure_at:
            detection = round(started - failure_at, 1)
        else:
            basis.append("detection: unknown (the failure is stamped after the incident began)")

    def applied(kind: str) -> float | None:
        hit = next(
            (a for a in actions if a.get("kind") == kind and a.get("status") == "applied"), None
        )
        return _ts(hit.get("at")) if hit else None

    diagnosed = next(
        (s.get("finished") for s in report.get("timeline") or [] if s.get("name") == "diagnosis"),
        None,
    )
    resubmitted = applied("submit")
    freed = _freed(actions, job, basis)
    ckpt = _lost_since(plan, job, basis)
    gpus = _gpus(job.get("tres", ""))
    lost = None
    # Slurm records an end in whole seconds: a cancel within the second of the checkpoint (a
    # prevented job held at it) ends "before" it by less than one.
    if gpus is not None and freed is not None and ckpt is not None and freed >= ckpt - 1.0:
        lost = _gpu_hours(gpus * max(0.0, freed - ckpt) / 3600.0)

    def since_start(t: float | None) -> float | None:
        return round(t - started, 1) if t is not None and started is not None else None

    ver = report.get("verification") or {}
    passed = _ts(ver.get("passed_at"))
    if ver.get("queue_wait_s") is not None:
        basis.append("rerun queue wait: Slurm's submit and start times of the rerun")
    # The picture's marks: each moment the record holds, in order.
    marks = [
        (label, t)
        for label, t in (
            ("failure", failure_at),
            # Drawn only where the delay is known: a point the report calls unknown is not drawn.
            ("detected", started if detection is not None else None),
            ("GPUs freed", freed),
            ("diagnosed", diagnosed),
            ("resubmitted", resubmitted),
            ("rerun started", _ts(ver.get("started"))),
            ("rerun past the failed step", passed),
        )
        if t is not None
    ]
    return {
        "failure_at": failure_at,
        "detection_s": detection,
        "diagnosis_s": since_start(diagnosed),
        "resubmission_s": since_start(resubmitted),
        "gpus": gpus,
        "lost_gpu_hours": lost,
        "rerun_queue_s": ver.get("queue_wait_s"),
        # From the failure to when runbook saw the rerun past the failed step (an upper bound).
        "recovered_s": round(passed - failure_at, 1)
        if passed is not None and failure_at is not None
        else None,
        "marks": [{"label": label, "at": t} for label, t in marks],
        "basis": basis,
        "prevented": prevented,
    }


def _prevented(report: dict, basis: list[str]) -> dict | None:
    """A prevented OOM (runbook prevent): no failure to date; the steps the job ran past the
    checkpoint it wrote when asked (its own log), and the step the trend projected for the
    OOM. None for any other incident."""
    evidence = report.get("evidence") or {}
    if evidence.get("runbook") != "prevent":
        return None
    p = evidence.get("prevention") or {}
    basis.append("failure: none (prevented before it ran out; nothing to detect)")
    if p.get("steps_lost") is not None:
        basis.append(
            "steps lost: the last step the job's own memory lines show done, less the step of "
            "the checkpoint it wrote when asked"
        )
    return {
        "steps_lost": p.get("steps_lost"),
        "checkpoint_step": p.get("checkpoint_step"),
        "projected_step": p.get("projected_step"),
    }


def aggregate(reports: list[dict]) -> dict:
    """`runbook stats`: counts and GPU-hours lost by verdict, by rung and by node, and how often
    a rung's rerun passed its verification."""
    out: dict = {
        "incidents": len(reports),
        "lost_gpu_hours": 0.0,
        # Incidents whose loss is unknown (a job not stopped, no GPU count): not in the sum.
        "lost_unknown": 0,
        "by_verdict": {},
        "by_rung": {},
        "by_node": {},
    }
    for r in reports:
        # From the record, not the stored figure: a report written before the cost read Slurm's
        # measured times (a running job's projected end) is summed as it is now computed.
        cost = incident_cost(r)
        lost = cost.get("lost_gpu_hours")
        if lost is None:
            out["lost_unknown"] += 1
            lost = 0.0
        out["lost_gpu_hours"] = round(out["lost_gpu_hours"] + lost, 3)
        verdict = (r.get("diagnosis") or {}).get("verdict") or "not reached"
        rung = (r.get("plan") or {}).get("rung") or "none"
        ff = (r.get("evidence") or {}).get("first_failure") or {}
        node = ff.get("node") or "unknown"
        for table, key in (("by_verdict", verdict), ("by_rung", rung), ("by_node", node)):
            row = out[table].setdefault(key, {"incidents": 0, "lost_gpu_hours": 0.0})
            row["incidents"] += 1
            row["lost_gpu_hours"] = round(row["lost_gpu_hours"] + lost, 3)
        state = (r.get("verification") or {}).get("state")
        if rung != "none" and state in ("passed", "failed"):
            row = out["by_rung"][rung]
            row[state] = row.get(state, 0) + 1
        _count_fit(out, (r.get("verification") or {}).get("fit"))
    return out


def _count_fit(out: dict, fit: dict | None) -> None:
    """The fitted micro-batch's record over incidents: how often it said "fits" and
    the rerun ran out of memory anyway (the under-prediction rate), and its error where a peak
    was measured, in all and by card size (the GPU model as the OOM message states it)."""
    if not fit:
        return
    card = fit.get("card_mib")
    key = f"{card / 1024:.0f} GiB card" if isinstance(card, (int, float)) else "card unknown"
    for table in (
        out.setdefault("fit", {}),
        out["fit"].setdefault("by_gpu", {}).setdefault(key, {}),
    ):
        table["predictions"] = table.get("predictions", 0) + 1
        table["under_predictions"] = table.get("under_predictions", 0) + bool(
            fit["under_predicted"]
        )
        table["under_prediction_rate"] = round(table["under_predictions"] / table["predictions"], 4)
        if fit.get("error") is not None:
            errors = table.setdefault("errors", [])
            errors.append(fit["error"])
            table["mean_abs_error"] = round(sum(abs(e) for e in errors) / len(errors), 4)
