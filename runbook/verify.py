"""Did the rerun get past the step that failed, with the setting the plan chose?

States: pending (not far enough yet), passed (past the failing step, and the allocator setting
the plan chose was in force per runbook.instrument's start-up line), failed (the rerun ended
without getting past it, or failed again: that is a new incident on the lineage).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from runbook.errors import UsageError
from runbook.evidence.launcher_log import LaunchReport
from runbook.evidence.progress import training_steps
from runbook.report.cost import incident_cost
from runbook.report.files import write_reports
from runbook.slurm.client import TERMINAL_STATES


def expected_allocator(plan: dict) -> str | None:
    """The allocator setting the plan chose: its own (a thin pool adds one to a script rung), or
    its allocator rung's."""
    from runbook.rungs import allocator_setting

    return plan.get("allocator") or allocator_setting(plan.get("rung"))


# How much faster than the original the rerun may train before a step number it prints is taken
# for something else (a job id, a sample count): a smaller micro-batch steps faster, not 10x.
PLAUSIBLE_SPEEDUP = 10.0


def plausible_step(plan: dict, original: dict | None, job) -> tuple[int | None, str]:
    """The highest step the rerun could have reached, from the original's pace (its failed step
    over its run time) over the rerun's run time, from the step it resumed at; (None, "") when
    either run time is not known. `original` is the incident's report.json."""
    from datetime import datetime

    def seconds(start, end, until: datetime) -> float | None:
        """A run's time so far: slurmctld gives a running job's end as start + time limit."""
        try:
            a = start if isinstance(start, datetime) else datetime.fromisoformat(str(start))
            b = end if isinstance(end, datetime) else datetime.fromisoformat(str(end or until))
        except (TypeError, ValueError):
            return None
        return max((min(b, until) - a).total_seconds(), 0.0)

    failed = plan.get("failed_step")
    resumed = ((plan.get("checkpoint") or {}).get("step")) or 0
    o = (original or {}).get("job") or {}
    # The original ran at most until its incident began (a wedged job runs on past its OOM).
    began = (original or {}).get("started")
    until = datetime.fromtimestamp(began) if isinstance(began, (int, float)) else datetime.now()
    ran = seconds(o.get("start"), o.get("end"), until)
    start = getattr(job, "start", None)
    rerun = seconds(start, getattr(job, "end", None), datetime.now()) if start else None
    if not failed or not ran or rerun is None:
        return None, ""
    pace = failed / ran  # steps a second, the original's (it started from step 0 or less)
    bound = int(resumed + PLAUSIBLE_SPEEDUP * pace * rerun) + 10
    return bound, (
        f"steps above {bound} set aside: more than the rerun could have trained in {rerun:.0f} s "
        f"from step {resumed} ({PLAUSIBLE_SPEEDUP:g}x the original's {pace:.2f} steps/s)"
    )


def fit_check(fit: dict | None, peaks: list, oomed_again: bool) -> dict | None:
    """The fitted micro-batch's prediction against the rerun: the peak it measured
    (runbook.instrument's peak line, when the job prints one) and whether it ran out of memory
    again, which after a "fits" is an under-prediction; None when the plan made no fit."""
    if not fit or not fit.get("micro_batch") or fit.get("predicted_peak_mib") is None:
        return None
    predicted = float(fit["predicted_peak_mib"])
    # The fit predicts the allocation's peak: runbook.instrument's peak line carries it since
    # this version; an older line has only the reserved peak, 9-14% above it (said as such).
    kind = "allocated" if any("max_memory_allocated" in p.fields for p in peaks) else "reserved"
    measured = None
    for p in peaks:
        try:
            mib = int(p.fields[f"max_memory_{kind}"]) / 2**20
        except (KeyError, ValueError):
            continue
        measured = mib if measured is None else max(measured, mib)
    # The prediction is of the card: it counts what was held outside PyTorch's allocations at
    # the failure (the context, other processes, a pool kept); the rerun's line measures only
    # PyTorch's own. The same outside is added to it (a reserved peak holds the pool already).
    outside = float(fit.get("outside_mib") or 0.0)
    if kind == "reserved":
        outside -= float(fit.get("pool_mib") or 0.0)
    outside = max(outside, 0.0)
    if measured is not None:
        measured += outside
    error = round((measured - predicted) / predicted, 4) if measured and predicted else None
    said = (
        f"fit: micro-batch {fit['micro_batch']} predicted at {predicted:.0f} MiB"
        + (
            f", measured {measured:.0f} MiB ({kind} peak"
            + (f" + {outside:.0f} MiB held outside PyTorch at the failure" if outside else "")
            + f", {error:+.1%})"
            if error is not None
            else ""
        )
        + (
            " (the reserved peak: the allocator keeps more than it allocates)"
            if error is not None and kind == "reserved"
            else ""
        )
        + ("; it ran out of memory again: an under-prediction" if oomed_again else "")
    )
    return {
        "micro_batch": fit["micro_batch"],
        "predicted_peak_mib": predicted,
        "measured_peak_mib": round(measured, 1) if measured is not None else None,
        "measured_kind": kind if measured is not None else None,
        "error": error,
        "under_predicted": oomed_again,
        "card_mib": fit.get("card_mib"),
        "said": said,
    }


# A program refusing its arguments at start, as each parser words it (what a rerun whose rung
# added a flag the program does not take dies of): the parser, and the refusal.
_REFUSALS = (
    ("argparse", re.compile(r"(?:^|\s)\S+: error: (unrecognized arguments: .+|argument \S+: .+)$")),
    (
        "HfArgumentParser",
        re.compile(r"(Some specified arguments are not used by the HfArgumentParser: .+)$"),
    ),
    (
        "Hydra",
        re.compile(
            r"(Could not override '.+|Key '.+' is not in struct.*|Error merging override .+)$"
        ),
    ),
    ("click", re.compile(r"^Error: (No such option:? .+)$")),
    ("fire", re.compile(r"^ERROR: (Could not consume arg: .+)$")),
)


def refusal(lines) -> tuple[str, str] | None:
    """(the parser, its words) where the log says the program refused its arguments, else None.
    A pure function of the log's lines (`srun -l`'s "N: " label allowed)."""
    for line in lines:
        text = re.sub(r"^\s*\d{1,6}: ", "", line.rstrip())
        for parser, pattern in _REFUSALS:
            if m := pattern.search(text):
                return parser, m.group(1)[:300]
    return None


def _caused_by(plan: dict, words: str) -> list[str]:
    """The flags of the refusal that runbook's own change added (its diff's + lines)."""
    added = [ln for ln in (plan.get("diff") or "").splitlines() if ln.startswith("+")]
    flags = sorted(set(re.findall(r"--?[A-Za-z][\w.-]*", words)))
    return [f for f in flags if any(f in ln for ln in added)]


def _refused(plan: dict, job, lines, details: list[str]) -> bool:
    """A rerun that ended before its first step because its program refused its arguments: the
    change runbook made is named, and a person decides (no second rerun with the same change)."""
    said = refusal(lines) if job.state in TERMINAL_STATES and job.state != "COMPLETED" else None
    if said is None:
        return False
    parser, words = said
    ours = _caused_by(plan, words)
    details.append(
        f"the rerun's program refused its arguments at start ({parser}: {words})"
        + (
            f": {', '.join(ours)} came from runbook's change (rung {plan.get('rung') or '?'}); "
            "a person must fix it, and runbook will not resubmit with that change"
            if ours
            else ": the refused argument is not one runbook's change added; a person must look"
        )
    )
    return True


def judge(
    plan: dict,
    job,
    launch: LaunchReport,
    tails: list[str],
    step_pattern: str,
    original: dict | None = None,
    lines: list[str] | None = None,
) -> dict:
    """`lines`: the rerun's log excerpt (a refusal of its arguments is looked for there too)."""
    failed_step = plan.get("failed_step")
    bound, why = plausible_step(plan, original, job)
    last = training_steps(tails, step_pattern, at_most=bound)
    details = []
    if bound is not None and training_steps(tails, step_pattern) != last:
        details.append(why)
    ran_past = last is not None and failed_step is not None and last >= failed_step
    if last is not None:
        was = (
            f"was stopped at step {failed_step} when asked to checkpoint"
            if plan.get("stopped_when_asked")
            else f"failed at step {failed_step}"
            if failed_step is not None
            else "failed at a step the logs did not say"
        )
        details.append(f"last step seen: {last} (the original job {was})")
    applied = _allocator_applied(plan, launch, details)
    peaks = [i for i in launch.instrument if i.kind == "peak"]
    for p in peaks:
        try:
            used, total = int(p.fields["max_memory_reserved"]), int(p.fields["total"])
            details.append(
                f"rank {p.rank}: peak reserved {used / 2**30:.2f} GiB of "
                f"{total / 2**30:.2f} GiB, headroom {(total - used) / 2**30:.2f} GiB"
            )
        except (KeyError, ValueError):
            pass
    ff = launch.first_failure
    oomed = ff is not None and ff.kind in ("oom", "host_oom")
    fitted = fit_check(plan.get("fit"), peaks, oomed and not ran_past)
    if fitted:
        details.append(fitted["said"])
    if not ran_past and _refused(plan, job, [*(lines or []), *tails], details):
        state = "refused"
    elif ff is not None and oomed and not ran_past:
        state = "failed"
        details.append(
            f"the rerun failed again ({ff.kind}): a new incident "
            f"on the lineage, `runbook oom --job {job.job_id}`"
        )
    elif ran_past and applied is not False:
        state = "passed"
    elif job.state == "COMPLETED":
        state = "passed" if applied is not False else "failed"
        details.append("the rerun completed")
    elif job.state in TERMINAL_STATES:
        state = "failed"
        details.append(f"the rerun ended {job.state} before step {failed_step}")
    else:
        state = "pending"
        details.append(f"the rerun is {job.state}; not past step {failed_step} yet")
    submitted = job.submit.timestamp() if job.submit else None
    started = job.start.timestamp() if job.start else None
    now = time.time()
    return {
        "state": state,
        "job_id": job.job_id,
        # The rerun's wait in the queue, as Slurm records it (None until it starts).
        "submitted": submitted,
        "started": started,
        "queue_wait_s": round(started - submitted, 1) if submitted and started else None,
        # When runbook first saw the rerun past the failed step: an upper bound of the moment.
        "passed_at": now if state == "passed" else None,
        "last_step": last,
        "failed_step": failed_step,
        "allocator_applied": applied,
        "fit": fitted,
        "details": details,
        "at": now,
    }


def _allocator_applied(plan: dict, launch: LaunchReport, details: list[str]) -> bool | None:
    """Whether the allocator setting the plan set was in force on every rank (runbook.instrument's
    start-up line); None where the plan set none or the job does not say."""
    want = expected_allocator(plan)
    applied = None
    if want:
        starts = [i for i in launch.instrument if i.kind == "start"]
        if starts:
            applied = all(want in i.line for i in starts)
            details.append(
                f"allocator {want} in force on {sum(want in i.line for i in starts)}"
                f"/{len(starts)} ranks (runbook.instrument's start-up line)"
            )
        else:
            details.append(
                f"allocator {want}: not verifiable, the job does not use runbook.instrument"
            )
    return applied


def rerun_of(conn, incident: dict) -> str | None:
    """The newest job on the incident's lineage: its rerun, or the rerun's rerun."""
    job = incident.get("new_job_id")
    for _ in range(20):
        row = conn.execute(
            "SELECT new_job_id FROM incidents WHERE job_id = ? AND new_job_id IS "
            "NOT NULL ORDER BY created DESC LIMIT 1",
            (job,),
        ).fetchone()
        if row is None or not row["new_job_id"]:
            return job
        job = row["new_job_id"]
    return job


def load_incident(conn, incident_id: str) -> dict:
    row = conn.execute("SELECT * FROM incidents WHERE id = ?", (incident_id,)).fetchone()
    if row is None:
        known = [
            r["id"] for r in conn.execute("SELECT id FROM incidents ORDER BY created DESC LIMIT 5")
        ]
        raise UsageError(
            f"no incident {incident_id!r}",
            hint=f"`runbook incidents` lists them; recent: {', '.join(known) or 'none'}",
        )
    return dict(row)


def append(folder: str, verification: dict) -> dict:
    """Add the verification to the incident's report and render it again."""
    path = Path(folder) / "report.json"
    data = json.loads(path.read_text())
    before = data.get("verification") or {}
    if before.get("passed_at") and verification.get("passed_at"):
        verification["passed_at"] = before["passed_at"]  # the first time it was seen past
    data["verification"] = verification
    data["cost"] = incident_cost(data)  # now with the rerun's queue wait and pass
    write_reports(folder, data)
    return data


def verify_incident(site, conn, incident_id: str) -> dict:
    """Judge an incident's rerun and append the result to its report (`runbook verify`, and the
    sweep for pending ones): the rerun's logs are read as the incident's own were."""
    from runbook.evidence import collect
    from runbook.slurm.factory import slurm_client
    from runbook.transport.ssh import SshHosts, SshSettings

    inc = load_incident(conn, incident_id)
    data = json.loads((Path(inc["folder"]) / "report.json").read_text())
    rerun = rerun_of(conn, inc)
    if not rerun:
        result = {
            "state": "not applicable",
            "job_id": None,
            "at": time.time(),
            "details": ["nothing was resubmitted for this incident"],
        }
    else:
        client = slurm_client(site)
        job = client.job(rerun)
        script = client.batch_script(rerun)
        with SshHosts(SshSettings.from_site(site)) as hosts:
            logs = collect.read_logs(site, job, script, hosts)
        launch = logs.launch
        result = judge(
            data.get("plan", {}),
            job,
            launch,
            launch.tails,
            site.logs.step_pattern,
            original=data,
            lines=logs.raw.splitlines(),
        )
    append(inc["folder"], result)
    conn.execute(
        "UPDATE incidents SET data = ? WHERE id = ?",
        (f"verification {result['state']}", incident_id),
    )
    return result
