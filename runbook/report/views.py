"""Views of an incident for the report: the plan, each node's health, and the conclusion (the
summary line, the next steps a person takes, the exit code of docs/design.md §4.3). Values in, values out;
the incident folder is written by runbook.report.files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from runbook import rungs
from runbook.diagnosis import Diagnosis, human_mib
from runbook.errors import ExitCode
from runbook.evidence import xid
from runbook.evidence.gpu_health import NodeHealth
from runbook.planning import ladder
from runbook.report.cost import incident_cost
from runbook.report.model import Incident, plain


def plan_view(p: ladder.Plan) -> dict:
    return {
        "verdict": p.verdict,
        "rung": p.rung,
        "rung_what": p.rung_what,
        "why": p.why,
        "tried": p.tried,
        "passed_over": p.passed_over,
        "needs_human": p.needs_human,
        "human_action": p.human_action,
        "drain": p.drain,
        "exclude": p.exclude,
        "sbatch_args": p.sbatch_args,
        "het_groups": p.het_groups,
        "env": p.env,
        # Names only: the job's environment may hold the user's credentials.
        "env_file_names": sorted(p.env_file) if p.env_file is not None else None,
        "env_notes": p.env_notes,
        "fit": p.fit.contract() if p.fit is not None else None,
        "failed_step": p.failed_step,
        "stopped_when_asked": p.stopped_when_asked,
        "suspicious": p.suspicious,
        "readback": p.readback,
        "allocator": p.allocator,
        "checkpoint": plain(p.checkpoint),
        "checkpoints_skipped": plain(p.checkpoints_skipped),
        "changes": p.patch.changes if p.patch else [],
        "checks": p.patch.checks if p.patch else [],
        "diff": p.patch.diff("job.sbatch") if p.patch else "",
        "template": p.patch.template if p.patch else None,
        "variables": p.patch.variables if p.patch else None,
    }


def health_view(h: NodeHealth, job_id: str) -> dict:
    view = h.contract()
    for x in view["xids"]:
        entry = xid.lookup(x["xid"])
        x["meaning"] = entry.meaning if entry else "not in runbook's catalog"
    apps = None
    if h.apps is not None:
        foreign = {a.pid for a in h.foreign_apps(job_id)}
        apps = [
            {
                "pid": a.pid,
                "gpu": a.gpu,
                "used_mib": a.used_mib,
                "type": a.type,
                "owner": h.owners[a.pid].user if a.pid in h.owners else None,
                "job": a.pid not in foreign,
            }
            for a in h.apps
        ]
    return {
        **view,
        "error": h.error,
        "apps": apps,
        "unavailable": h.unavailable,
        "unknown": h.unknowns(),
        "stale_dropped": h.kernel.stale_dropped if h.kernel else 0,
        "fault_reasons": h.gpu_fault_reasons(),
    }


def command_line(site_flags: list[str], site, *words: str) -> str:
    """A runbook command line for the next steps, with this run's --site/--config (the hook
    and the sweep name the file their settings came from)."""
    from runbook.site import SiteConfig

    flags = site_flags
    here = Path.cwd() / "site_config"
    if flags[:1] == ["--site"] and Path(site.source).parent.resolve() == here.resolve():
        # Found through ./site_config, which only exists in this folder: the command must work
        # wherever the person reading the report runs it.
        flags = ["--config", shlex.quote(str(Path(site.source).resolve()))]
    if not flags and site.source != SiteConfig().source:
        flags = ["--config", shlex.quote(site.source)]
    return " ".join(["runbook", *flags, *(shlex.quote(w) for w in words)])


def conclude(
    inc: Incident,
    job,
    d: Diagnosis | None,
    plan: ladder.Plan | None,
    results: list,
    dry: bool,
    site_flags: list[str],
    site,
    *,
    verb: str = "oom",
) -> None:
    """The summary line, what a person should do next, and the exit code (docs/design.md §4.3). `verb`
    is the runbook (oom, hang): `d` is its diagnosis."""
    failed = [r for r in results if r.status == "failed"]
    declined = [r for r in results if r.status == "declined"]
    oom_d = d if isinstance(d, Diagnosis) else None
    if (
        inc.status == "running"
        and oom_d is not None
        and oom_d.evidence_incomplete
        and oom_d.evidence.launch
    ):
        # Not handled: the next `runbook oom`, hook delivery or sweep tries again.
        inc.status, inc.stopped_at = "stopped", "logs"
        inc.errors.append(
            "logs: evidence incomplete: " + "; ".join(oom_d.evidence.launch.incomplete)
        )
    if inc.status == "running":
        inc.status = "complete"
    verdict = d.verdict if d else "not reached"
    inc.summary = _summary(inc, d, oom_d, plan, results, dry, verdict)
    _next_steps(inc, job, plan, failed, declined, dry, site_flags, site, verb, verdict)
    if inc.status == "stopped" and inc.stop_exit == ExitCode.NEEDS_HUMAN and not failed:
        inc.exit_code = int(ExitCode.NEEDS_HUMAN)  # refused before any change: a grant, a person
    elif inc.status == "stopped" or failed:
        inc.exit_code = int(ExitCode.STEP_FAILED)
    elif (plan and plan.needs_human) or declined:
        inc.exit_code = int(ExitCode.NEEDS_HUMAN)
    else:
        inc.exit_code = int(ExitCode.OK)
    inc.cost = incident_cost(inc.to_json())


def _summary(inc: Incident, d, oom_d, plan, results: list, dry: bool, verdict: str) -> str:
    """One line: the verdict, where, the message's two numbers, and what was done."""
    ff = oom_d.evidence.launch.first_failure if oom_d and oom_d.evidence.launch else None
    where = ""
    if ff and ff.ranks:
        where = f"rank {', '.join(map(str, ff.ranks))}" + (f" on {ff.node}" if ff.node else "")
    for s in getattr(d, "suspects", None) or []:  # the hang runbook's ranks that stand apart
        rank = s["rank"] if s["rank"] is not None else "?"
        where += (", " if where else "suspect ") + f"rank {rank} on {s['node'] or '?'}"
    did = []
    for r in results:
        if r.status in ("applied", "dry_run") and r.kind == "cancel":
            did.append(("would cancel" if dry else "cancelled") + f" {r.target}")
        elif r.status in ("applied", "dry_run") and r.kind == "drain":
            did.append(("would drain" if dry else "drained") + f" {r.target}")
        elif r.status in ("applied", "dry_run", "skipped") and r.kind == "submit":
            new = r.value or "(dry run)"
            rung = plan.rung if plan else "?"
            did.append(
                f"{'would resubmit' if dry else 'resubmitted as'} {new} with rung {rung}"
                + (f" from {Path(plan.checkpoint.path).name}" if plan and plan.checkpoint else "")
            )
    numbers = ""
    if oom_d and oom_d.oom and oom_d.oom.tried_mib is not None:
        oom = oom_d.oom
        numbers = f" (asked {human_mib(oom.tried_mib)}, {human_mib(oom.free_mib)} free)"
    summary = (
        f"{verdict}: job {inc.job_id}"
        + (f", {where}" if where else "")
        + numbers
        + ("; " + "; ".join(did) if did else "; nothing changed")
    )
    why = (plan.human_action or plan.why) if plan is not None else ""
    if not did and why and inc.evidence.get("runbook") == "prevent":
        # A running job left as it was: why, in the line the sweep and a person read first.
        summary += f": {why}"
    if inc.status == "stopped" and inc.stop_exit == ExitCode.NEEDS_HUMAN:
        # Refused before anything was changed: a grant or a person decides, nothing failed.
        summary += f"; REFUSED at {inc.stopped_at}: {inc.errors[-1].split(': ', 1)[-1]}"[:600]
    elif inc.status == "stopped":
        summary += f"; STOPPED at {inc.stopped_at}"
    return summary


def _next_steps(inc, job, plan, failed, declined, dry, site_flags, site, verb, verdict) -> None:
    """What a person should do next, each with the command it takes."""
    nxt = inc.next_steps
    if inc.status == "stopped":
        nxt.append(
            f"Fix what stopped the runbook at `{inc.stopped_at}` (see Errors), then run "
            f"`{command_line(site_flags, site, verb, inc.job_id)}` again: steps already done are skipped."
        )
    if plan and plan.needs_human:
        nxt.append(f"A person decides: {plan.human_action or plan.why}")
    r = rungs.get(plan.rung or "") if plan else None
    allow = (
        f"set [policy] {r.policy} = true"
        if r is not None and r.policy
        else f"allow verdict {verdict} in [policy] unattended_verdicts"
    )
    for r in declined:
        nxt.append(
            f"Not done (needs confirmation): `{' '.join(r.argv)}`. Run it by hand, or "
            f"rerun with --yes, or {allow}."
        )
    for r in failed:
        nxt.append(f"Failed: `{' '.join(r.argv)}`: {r.message}")
    if inc.new_job_id and not dry:
        nxt.append(
            f"Check the rerun later: `{command_line(site_flags, site, 'verify', '--incident', inc.id)}`."
        )
    if verb == "oom" and verdict in ("not_oom", "unknown") and job is not None:
        nxt.append("Not an OOM runbook can act on: read the report's evidence and the job log.")
    if verb == "hang" and verdict == "unknown" and job is not None:
        nxt.append(
            "No rank stands out: read the rank groups and the capture's unread parts in the "
            "report; the rerun (if any) carries the debug settings so a repeat names the culprit."
        )
    if dry:
        nxt.append("This was a dry run: nothing was changed. Run without --dry-run to act.")
