"""Before the OOM (issue 56): whether runbook asks a running job heading for an OOM to
checkpoint now, then cancels and resubmits it with the micro-batch fitted from its own series,
losing no step. Pure functions of values gathered before (the job, the worst rank's watch, what
the ranks declared, the fit), tested as data in, data out.

Acting on a job that still trains is opt-in twice over: the job must handle the request (every
rank of its world declared it polls runbook's request file, counted against Slurm's figures:
evidence.handler), and either a person asked (`runbook prevent`) or
the site lets the sweep act ([policy] unattended_prevent: "declared" for every job with a
handler, "opted_in" for those whose owner also set RUNBOOK_PREVENT=1, "never"). Anything else is
reported, with why, and nothing is changed.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from runbook import rungs
from runbook.planning import ladder
from runbook.planning.plan import resubmission, rung_patch
from runbook.record import record

# The rung that sets the fitted micro-batch (the global batch kept), as after an OOM.
RUNG = next(r.id for r in rungs.REGISTRY.values() if r.fitted)
# Verdicts after which nothing was changed: a later look (a person, the next sweep) may act.
REPORTED = ("report_only", "nothing_seen", "not_running")
# What runbook needs after the job saved, before the cancel ends its hold: the rerun's files,
# its held submission and read-back, the cancel and its read-back (each read-back waits at most
# 20 s). A job that holds less than that (its RUNBOOK_CHECKPOINT_HOLD_S) is not asked: it
# could train on past the step it saved.
AFTER_SAVE_S = 120.0


@record
class PreventDecision:
    """The decision: prevent; or report_only (with why), nothing_seen, not_running."""

    decision: str
    reasons: list[str] = field(default_factory=list)
    kind: str | None = None  # thrashing | near_capacity | leak (evidence.trend.Watch)
    rank: int | None = None
    request: str | None = None  # the file the ranks poll, which runbook writes as the owner
    world: int | None = None  # the world size every rank declared, confirmed by Slurm
    step: int | None = None  # the last step any rank's series shows completed
    projected_step: int | None = None  # a leak's step at the card
    fit: Any = None  # planning.fit.Fit from the worst rank's series

    @property
    def verdict(self) -> str:
        """What the worst rank shows (thrashing, near_capacity, leak), else the decision."""
        return self.kind or self.decision

    def contract(self) -> dict:
        return {
            "verdict": self.verdict,
            "runbook": "prevent",
            "decision": self.decision,
            "reasons": self.reasons,
            "kind": self.kind,
            "rank": self.rank,
            "request": self.request,
            "world": self.world,
            "last_step": self.step,
            "projected_step": self.projected_step,
            "fit": self.fit.contract() if self.fit is not None else None,
        }


def _fit_words(fit) -> str | None:
    """Why the fit gives no smaller micro-batch, or None when it does."""
    if fit is None:
        return (
            "no micro-batch could be fitted (the series names no card size or step peak, or "
            "the script states no micro-batch)"
        )
    if fit.micro_batch is None or fit.micro_batch >= fit.from_micro_batch:
        if fit.needed_mib <= fit.limit_mib:
            return (
                f"its step peaks at {fit.needed_mib / 1024:.1f} GiB, within the margin of the "
                f"{fit.card_mib / 1024:.1f} GiB card: a smaller micro-batch is not the fix "
                "(fragmentation: the allocator's setting, `runbook oom` when it runs out)"
            )
        return fit.reasons[-1] if fit.reasons else "no smaller micro-batch is predicted to fit"
    return None


def decide(
    job,
    seen,
    handler,
    fit,
    *,
    mode: str,
    person: bool,
    wait_s: float = 300.0,
    convention: list[str] | None = None,
) -> PreventDecision:
    """`seen`: evidence.trend.Watch of the worst rank (None: nothing seen); `handler`:
    evidence.handler.Handler; `fit`: planning.fit.Fit from that rank's series (None: none);
    `mode`: [policy] unattended_prevent; `person`: a person asked (`runbook prevent`), not the
    sweep; `wait_s`: [policy] prevent_wait_s, how long runbook waits for each answer;
    `convention`: Slurm's checkpoint-and-requeue convention the job follows
    (evidence.handler.requeue_convention)."""
    if job.state != "RUNNING":
        return PreventDecision(
            "not_running",
            [f"job {job.job_id} is {job.state}: only a running job is asked to checkpoint"],
        )
    if seen is None:
        return PreventDecision(
            "nothing_seen",
            [
                "no rank's memory series shows it heading for an OOM (thrashing, near the card, "
                "or leaking): nothing to prevent, which says nothing of a rank that prints none"
            ],
        )
    steps = [s for s in seen.trend.steps if s is not None]
    d = PreventDecision(
        "prevent",
        [seen.why],
        kind=seen.kind,
        rank=seen.rank,
        request=handler.request,
        world=handler.world,
        step=max(steps) if steps else None,
        projected_step=seen.projected_step,
        fit=fit,
    )
    refusal = None
    if handler.request is None and convention:
        refusal = (
            f"the job follows Slurm's checkpoint-and-requeue convention ({', '.join(convention)}): "
            "it saves and requeues itself on SIGUSR1, at its own batch (which would run out "
            "again), and a signal through Slurm also reaches its launcher; runbook does not "
            "signal it. Lower its micro-batch by hand, or declare runbook's request "
            "(runbook.instrument.checkpoint_on) on every rank"
        )
    elif handler.request is None:
        refusal = f"{handler.why}: runbook cannot ask it to checkpoint"
    elif handler.hold_s is not None and handler.hold_s < wait_s + AFTER_SAVE_S:
        refusal = (
            f"the job holds {handler.hold_s:g} s after its checkpoint (RUNBOOK_CHECKPOINT_HOLD_S); "
            f"runbook may need {wait_s + AFTER_SAVE_S:g} s ([policy] prevent_wait_s + "
            f"{AFTER_SAVE_S:g} s) before its cancel: it would train on past the step it saved"
        )
    elif (why := _fit_words(fit)) is not None:
        refusal = why
    elif not person and mode == "never":
        refusal = '[policy] unattended_prevent = "never": the sweep only reports'
    elif not person and mode == "opted_in" and not handler.opted_in:
        refusal = (
            "the job handles the signal but did not opt in to a resubmission (RUNBOOK_PREVENT=1 "
            'in its environment) and [policy] unattended_prevent = "opted_in"'
        )
    if refusal:
        d.decision = "report_only"
        d.reasons.append(refusal)
        return d
    assert fit is not None
    d.reasons.append(
        f"every rank of the {handler.world} ({handler.confirmed_by}) polls {handler.request}: "
        f"asked to checkpoint at one step, its rerun submitted held at micro-batch "
        f"{fit.micro_batch} (from {fit.from_micro_batch}, the global batch kept), then it is "
        "cancelled and the rerun released"
    )
    return d


def make_prevent_plan(
    d: PreventDecision, site, *, job, script: str, run, checkpoint, configs=None, submission=None
) -> ladder.Plan:
    """The rerun from `checkpoint` (the one the job wrote on request; in a dry run, the newest
    one so far) with the fitted micro-batch, as halve_micro_batch writes it (accumulation raised
    to keep the global batch, only when exact). A decision other than prevent plans nothing."""
    p = ladder.Plan(verdict=d.verdict, tried=run.tried, fit=d.fit)
    if d.decision != "prevent":
        p.why = d.reasons[-1] if d.reasons else d.verdict
        return p
    by_hand = "the job keeps running as it is; lower its micro-batch by hand"
    if not rung_patch(p, script, RUNG, site, checkpoint, by_hand, configs=configs, fit=d.fit):
        return p
    if checkpoint is not None and checkpoint.step is not None:
        p.failed_step, p.stopped_when_asked = checkpoint.step, True
    p.why = f"{d.kind} on rank {d.rank if d.rank is not None else '?'}: " + d.reasons[0]
    return resubmission(p, site, job, checkpoint, script, submission)
