"""Which rung of the remediation ladder (playbooks/oom.yaml) this incident takes.

The lineage is in Slurm itself: a job resubmitted by runbook carries
`--comment=runbook:incident=<id>,parent=<job>,rung=<rung>`, so walking the parents names every
rung already tried on this training run. A rung already tried is never applied again (never
resume into the same OOM); a rung that cannot apply to this job is passed over with the reason;
a rung that changes the science, or an exhausted ladder, stops for a person.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runbook.checkpoints import Checkpoint
from runbook.errors import RunbookError
from runbook.planning.sbatch_patch import Patch, RungNotApplicable, patch

ACTING_VERDICTS = ("true_oom", "fragmentation", "co_tenant", "gpu_fault", "host_oom")
# Rungs that resubmit the job as it is, on other nodes.
NODE_RUNGS = {"exclude_node": False, "drain_node": True, "drain_and_exclude": True}
HUMAN_RUNGS = {"escalate"}


@dataclass
class Plan:
    verdict: str
    rung: str | None = None
    rung_what: str = ""
    why: str = ""
    tried: list[tuple[str, str]] = field(default_factory=list)  # (job id, rung) up the lineage
    passed_over: list[tuple[str, str]] = field(default_factory=list)  # (rung, why not)
    needs_human: bool = False
    human_action: str = ""
    patch: Patch | None = None
    drain: str | None = None
    exclude: list[str] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    checkpoints_skipped: list[Checkpoint] = field(default_factory=list)
    sbatch_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    failed_step: int | None = None
    # Job comments that claimed a runbook lineage and were not believed (unsigned, other user).
    suspicious: list[str] = field(default_factory=list)
    # After sbatch: the original's and the new job's world size and GPUs, as Slurm records them.
    readback: dict | None = None

    @property
    def acts(self) -> bool:
        return self.rung is not None and not self.needs_human


def lineage(client, job, *, secret: bytes, runbook_user: str,
            depth: int = 20) -> tuple[list[tuple[str, str]], list[str]]:  # fmt: skip
    """(job id, rung) for this job and each ancestor runbook resubmitted, nearest first, from
    signed tags only; and, in words, each comment that claimed a lineage but cannot be believed
    (the walk stops there)."""
    from runbook import lineage as tags

    out: list[tuple[str, str]] = []
    suspicious: list[str] = []
    current = job
    for _ in range(depth):
        claim = tags.read(current.job_id, current.comment, current.user, secret=secret,
                          runbook_user=runbook_user)  # fmt: skip
        if claim is None:
            break
        if not claim.trusted:
            suspicious.append(f"job {current.job_id}'s comment claims a runbook lineage "
                              f"(parent {claim.fields.get('parent', '?')}, rung "
                              f"{claim.fields.get('rung', '?')}) but {claim.why}: ignored")  # fmt: skip
            break
        if not claim.fields.get("parent") or not claim.fields.get("rung"):
            break
        out.append((current.job_id, claim.fields["rung"]))
        try:
            current = client.job(claim.fields["parent"])
        except RunbookError:
            break
    return out, suspicious


def candidates(verdict: str, ladder: dict) -> list:
    """The rungs for a verdict in order; the fragmentation ladder continues into true_oom's."""
    out = []
    for rung in ladder.get(verdict, ()):
        if rung.id == "true_oom_ladder":
            out.extend(ladder.get("true_oom", ()))
        else:
            out.append(rung)
    return out


# Rungs that shrink activations: useless when the fixed training cost alone fills the card.
ACTIVATION_RUNGS = {"halve_micro_batch", "activation_checkpointing"}


def plan(verdict: str, ladder: dict, *, script: str, knobs, tried: list[tuple[str, str]],
         node: str | None, resume=None, only_sharding: str | None = None) -> Plan:  # fmt: skip
    """Choose the rung and build the patched script; raise nothing for a rung that does not
    apply, say why instead. `only_sharding` (a reason) passes over the activation rungs."""
    p = Plan(verdict=verdict, tried=tried)
    if verdict not in ACTING_VERDICTS:
        p.why = f"verdict {verdict}: report only, nothing is changed"
        return p
    done = {r for _, r in tried}
    for rung in candidates(verdict, ladder):
        if rung.id in done:
            p.passed_over.append((rung.id, "already tried on this lineage"))
            continue
        if only_sharding and rung.id in ACTIVATION_RUNGS:
            p.passed_over.append((rung.id, only_sharding))
            continue
        if rung.human_only or rung.id in HUMAN_RUNGS:
            p.needs_human = True
            p.rung, p.rung_what = rung.id, rung.what
            p.human_action = rung.what
            p.why = f"next rung `{rung.id}` is for a person: {rung.what}"
            return p
        if rung.id in NODE_RUNGS:
            if not node:
                p.passed_over.append((rung.id, "the failing node is not known"))
                continue
            p.exclude = [node]
            p.drain = node if NODE_RUNGS[rung.id] else None
            script_rung = "unchanged"
        else:
            script_rung = rung.id
        try:
            p.patch = patch(script, script_rung, knobs, resume=resume)
        except RungNotApplicable as e:
            p.passed_over.append((rung.id, e.message))
            p.exclude, p.drain = [], None
            continue
        p.rung, p.rung_what = rung.id, rung.what
        tried_text = ", ".join(r for _, r in tried) or "none"
        p.why = (
            f"first rung of the {verdict} ladder not yet tried (tried on this lineage: "
            f"{tried_text})"
        )
        return p
    p.needs_human = True
    p.why = "the ladder is exhausted: " + "; ".join(f"{r}: {w}" for r, w in p.passed_over)
    p.human_action = "decide by hand: every automatic rung was tried or cannot apply"
    return p
