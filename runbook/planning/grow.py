"""Back to full size: a job that runbook shrank (shrink_world) returns to its lineage's original
node count when the partition can hold it again. Pure functions of values gathered before (the
job, its lineage, the partition's usable nodes, the newest valid checkpoint), tested as data in,
data out.

Growing cancels a job that trains well, so it waits for two things it can read: the nodes (Slurm
says they are usable) and a checkpoint the shrunk job wrote after it started (else its progress
is lost). Everything else it cannot know it says, and changes nothing.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime

from runbook import rungs, words
from runbook.planning import ladder
from runbook.planning.plan import resubmission, rung_patch
from runbook.record import record
from runbook.slurm.client import ACTIVE

RUNG = rungs.of_kind(rungs.GROW)[0].id  # the one rung that grows a shrunk job back
# Verdicts after which runbook waits: asked again later (a person, or the sweep), it may grow.
WAITING = ("nodes_not_back", "no_checkpoint_yet")
SHRINK_RUNGS = {r.id for r in rungs.REGISTRY.values() if r.kind == rungs.SHRINK}


@record
class GrowDecision:
    """grow; or why not: not_running, not_shrunk, nodes_not_back, no_checkpoint_yet, unknown."""

    verdict: str
    reasons: list[str] = field(default_factory=list)
    before: int | None = None  # the job's nodes now
    after: int | None = None  # the lineage's original nodes
    readmit: list[str] = field(default_factory=list)  # excluded nodes that are usable again

    def contract(self) -> dict:
        return {
            "verdict": self.verdict,
            "reasons": self.reasons,
            "nodes_now": self.before,
            "nodes_original": self.after,
            "readmit": self.readmit,
        }


def _when(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def decide(job, run, usable: set[str] | None, newest) -> GrowDecision:
    """`job`: the JobInfo; `run`: its LineageEvidence (tried rungs, root_nodes); `usable`: the
    partition's nodes Slurm could schedule on now (None: unknown); `newest`: the newest valid
    checkpoint of the lineage (checkpoints.Checkpoint or None)."""
    if job.state not in ACTIVE:
        return GrowDecision(
            "not_running",
            [
                f"job {job.job_id} is {job.state}: only a job that runs or waits is grown "
                "(a job that failed is `runbook oom`'s or `runbook hang`'s)"
            ],
        )
    shrunk = [j for j, r in run.tried if r in SHRINK_RUNGS]
    if not shrunk:
        return GrowDecision(
            "not_shrunk",
            [
                f"job {job.job_id}'s lineage has no shrink_world by runbook (signed tags): a job "
                "a person sized is theirs to size"
            ],
        )
    nodes, original = job.num_nodes, run.root_nodes
    if original is None or nodes is None:
        return GrowDecision(
            "unknown",
            [
                "the lineage's original node count is not known (its first job is no longer "
                "in Slurm's records): nothing is changed on a guess"
                if original is None
                else f"Slurm does not say how many nodes job {job.job_id} has"
            ],
        )
    if nodes >= original:
        runs = f"job {job.job_id} runs on {words.count(nodes, 'node')}"
        return GrowDecision(
            "not_shrunk", [f"{runs}, its lineage started on {original}"], nodes, original
        )
    d = GrowDecision("grow", [], nodes, original)
    d.reasons.append(
        f"job {job.job_id} runs on {nodes} of its lineage's {original} nodes since "
        f"shrink_world (job {shrunk[-1]})"
    )
    partition = (job.partition or "?").split(",")[0]
    if usable is None:
        d.verdict = "unknown"
        d.reasons.append(
            f"Slurm did not say which nodes of partition {partition} are usable: nothing is "
            "changed on a guess"
        )
        return d
    d.readmit = sorted(n for n in job.excluded if n in usable)
    has = f"partition {partition} has {words.count(len(usable), 'usable node')}"
    if len(usable) < original:
        d.verdict = "nodes_not_back"
        d.reasons.append(
            f"{has}, the lineage needs {original}: it keeps its size until nodes return"
        )
        return d
    d.reasons.append(
        f"{has} again" + (f"; {', '.join(d.readmit)} no longer excluded" if d.readmit else "")
    )
    if job.state == "RUNNING":
        started = job.start.timestamp() if job.start else None
        written = newest.mtime if newest is not None else None
        if started is None or written is None or written <= started:
            d.verdict = "no_checkpoint_yet"
            d.reasons.append(
                f"job {job.job_id} has saved no valid checkpoint since it started"
                + (f" ({_when(started)})" if started else "")
                + ": growing now would lose its progress; after its next checkpoint"
            )
            return d
        d.reasons.append(
            f"checkpoint {newest.path} (step {newest.step if newest.step is not None else '?'}) "
            f"was written {_when(written)}, after the job started {_when(started)}"
        )
    return d


def make_grow_plan(
    d: GrowDecision, site, *, job, script: str, run, checkpoint, configs=None, submission=None
) -> ladder.Plan:
    """The rerun at full size: the script's accumulation lowered by old/new nodes (only when
    exact, else a person decides), from `checkpoint`, without the exclusions of nodes that are
    usable again. A decision other than grow plans nothing."""
    p = ladder.Plan(verdict=d.verdict, tried=run.tried)
    if d.verdict != "grow":
        p.why = "; ".join(d.reasons[-1:]) or d.verdict
        return p
    assert d.before is not None and d.after is not None
    by_hand = f"the job keeps its {words.count(d.before, 'node')}; resize it by hand"
    world = (d.before, d.after)
    if not rung_patch(p, script, RUNG, site, checkpoint, by_hand, configs=configs, world=world):
        return p
    p.world, p.readmit = (d.before, d.after), d.readmit
    p.why = f"nodes are back: {d.before} -> {d.after} nodes, the global batch kept"
    return resubmission(p, site, job, checkpoint, script, submission)
