"""The rung registry: every rung of every ladder, defined once.

A playbook's ladder names rungs by id (playbooks/oom.yaml); what a rung does is here: its kind,
the exact change in words (for `runbook diagnose`'s next step and the report), the allocator
setting it adds, the template variables it changes, whether it shrinks activations, whether it
drains a node. The patcher (sbatch_patch), the ladder walk (ladder), and verification (verify)
read these fields instead of keeping their own lists of rung names.

Pure data, no imports beyond the standard library: `runbook diagnose` loads it.
"""

from __future__ import annotations

from runbook.record import record

ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")  # 2.9 ignores the new name for CUDA
EXPANDABLE = "expandable_segments:True"
MAX_SPLIT = "max_split_size_mb:512"

# Kinds: how the rung changes the job.
SCRIPT = "script"  # a knob in the job script (or its template variables)
ALLOCATOR = "allocator"  # an allocator setting, under both variable names
NODE = "node"  # the job resubmitted as it is, without the node (drained or not)
HUMAN = "human"  # stops for a person
CONTINUE = "continue"  # continues with another verdict's ladder
SHRINK = "shrink"  # the job on fewer nodes without the failing one, the global batch kept
GROW = "grow"  # a shrunk job back on its lineage's original node count, the global batch kept
RESIZE = (SHRINK, GROW)  # the rungs that change the node count (accumulation follows)


@record(frozen=True)
class RungDef:
    """What a rung changes, where (script, allocator, node, ...) and in exact words."""

    id: str
    kind: str
    setting: str  # the exact change, in words a person can apply by hand
    allocator: str | None = None
    template_vars: tuple[str, ...] = ()
    shrinks_activations: bool = False
    drains: bool = False
    continues_with: str | None = None  # CONTINUE: the verdict whose ladder follows
    debug_env: bool = False  # the rerun gets the playbook's debug_env (the hang runbook)
    needs_node: bool = True  # NODE: excludes the failing node, so it must be known


def _alloc(value: str) -> str:
    return " and ".join(f"{n}={value}" for n in ALLOC_VARS) + " in the job's environment"


REGISTRY: dict[str, RungDef] = {
    r.id: r
    for r in (
        RungDef(
            "expandable_segments",
            ALLOCATOR,
            _alloc(EXPANDABLE),
            allocator=EXPANDABLE,
            template_vars=("alloc_conf",),
        ),
        RungDef(
            "max_split_size",
            ALLOCATOR,
            _alloc(MAX_SPLIT),
            allocator=MAX_SPLIT,
            template_vars=("alloc_conf",),
        ),
        RungDef(
            "true_oom_ladder",
            CONTINUE,
            "continue with the true_oom ladder",
            continues_with="true_oom",
        ),
        RungDef(
            "halve_micro_batch",
            SCRIPT,
            "micro-batch / 2 and gradient accumulation x 2 (where the script sets the global "
            "batch instead, only the micro-batch); the global batch stays the same",
            template_vars=("micro_batch", "grad_accum"),
            shrinks_activations=True,
        ),
        RungDef(
            "halve_eval_batch",
            SCRIPT,
            "evaluation batch / 2 (per-device eval batch size), or HF Trainer's "
            "eval_accumulation_steps set so predictions leave the GPU; the training batch is "
            "not touched",
            template_vars=("eval_batch",),
        ),
        RungDef(
            "eval_accumulation",
            SCRIPT,
            "HF Trainer's eval_accumulation_steps set to 1 (added beside the Trainer's batch flag "
            "where the script sets none): each evaluation batch's predictions move to the CPU; "
            "the evaluation batch and the training batch are not touched",
            template_vars=("eval_accumulation",),
        ),
        RungDef(
            "activation_checkpointing",
            SCRIPT,
            "turn activation checkpointing on (the site's flag or template variable)",
            template_vars=("activation_checkpointing",),
            shrinks_activations=True,
        ),
        RungDef(
            "raise_sharding",
            SCRIPT,
            "raise the sharding degree by one (FSDP/ZeRO stage), capped at 3",
        ),
        RungDef(
            "sequence_length", HUMAN, "shorter sequences: changes the science, a person decides"
        ),
        RungDef(
            "exclude_node",
            NODE,
            "resubmit unchanged with --exclude=<node>; never kill another user's processes",
        ),
        RungDef(
            "drain_node",
            NODE,
            "drain <node> with a reason, resubmit with --exclude=<node>",
            drains=True,
        ),
        RungDef(
            "drain_and_exclude",
            NODE,
            "drain <node> with a reason, resubmit unchanged with --exclude=<node>",
            drains=True,
        ),
        RungDef("escalate", HUMAN, "hand the incident to a person"),
        RungDef(
            "raise_mem", SCRIPT, "double the job's --mem (host RAM)", template_vars=("mem_mib",)
        ),
        RungDef("unchanged", NODE, "resubmit the job as it is", needs_node=False),
        RungDef(
            "shrink_world",
            SHRINK,
            "drain <node>, resubmit on one node fewer with gradient accumulation raised by "
            "old/new nodes (only when exact), the global batch unchanged",
            template_vars=("grad_accum", "nodes"),
            drains=True,
        ),
        RungDef(
            "grow_world",
            GROW,
            "when the nodes are back and the job has saved a checkpoint: cancel it, resubmit on "
            "the lineage's original node count from that checkpoint with gradient accumulation "
            "lowered by old/new nodes (only when exact), the global batch unchanged",
            template_vars=("grad_accum", "nodes"),
            needs_node=False,
        ),
        RungDef(
            "exclude_suspect",
            NODE,
            "resubmit from the last valid checkpoint with --exclude=<suspect node> and the "
            "playbook's debug settings (flight recorder, NCCL_DEBUG=INFO)",
            debug_env=True,
        ),
        RungDef(
            "resubmit_debug",
            NODE,
            "resubmit from the last valid checkpoint with the playbook's debug settings "
            "(flight recorder, NCCL_DEBUG=INFO)",
            debug_env=True,
            needs_node=False,
        ),
    )
}


def get(rung_id: str) -> RungDef | None:
    return REGISTRY.get(rung_id)


def resizes_world(rung_id: str | None) -> bool:
    """Whether a rung changes the job's node count (the patcher scales accumulation and the
    launcher's counts, the resubmission gives --nodes and --ntasks, the read-back expects them)."""
    r = REGISTRY.get(rung_id or "")
    return r is not None and r.kind in RESIZE


def allocator_setting(rung_id: str | None) -> str | None:
    """The allocator setting a rung adds (None for every other rung)."""
    r = REGISTRY.get(rung_id or "")
    return r.allocator if r else None


def candidates(verdict: str, ladder: dict) -> list:
    """The playbook rungs for a verdict in order; a continuing rung (fragmentation's
    true_oom_ladder) is replaced by the rungs of the ladder it continues with."""
    out = []
    for rung in ladder.get(verdict, ()):
        r = REGISTRY.get(rung.id)
        if r is not None and r.continues_with:
            out.extend(ladder.get(r.continues_with, ()))
        else:
            out.append(rung)
    return out


# A cause's plan (runbook.cause) that takes an evaluation's rung, and which.
EVAL_RUNGS = {"eval_batch": "halve_eval_batch", "eval_predictions": "eval_accumulation"}


def next_step_for_cause(cause, verdict: str, ladder: dict, *, with_allocator: bool = False):
    """next_step() as the cause changes it (docs/design.md §3.1): a person for a cause no batch rung can
    help, the evaluation's own batch for an evaluation OOM, the verdict's ladder without the
    activation rungs for an optimizer's state."""
    plan = getattr(cause, "plan", "ladder")
    if plan == "human" and verdict in ladder:
        return {
            "rung": "escalate",
            "setting": f"{cause.name}: " + "; ".join(cause.reasons),
            "for_a_person": True,
            "then": [],
        }
    if plan in EVAL_RUNGS and verdict in ladder:
        # An evaluation that runs out again after its rung goes to a person (planning.ladder):
        # the training's rungs would not change it.
        return {
            "rung": EVAL_RUNGS[plan],
            "setting": REGISTRY[EVAL_RUNGS[plan]].setting,
            "for_a_person": False,
            "then": ["escalate"],
        }
    step = next_step(verdict, ladder, with_allocator=with_allocator)
    if plan == "no_activation_rungs" and step is not None:
        rest = [
            c.id
            for c in candidates(verdict, ladder)
            if not (REGISTRY.get(c.id) and REGISTRY[c.id].shrinks_activations)
        ]
        if rest:
            r = REGISTRY.get(rest[0])
            step = {
                "rung": rest[0],
                "setting": r.setting if r else rest[0],
                "for_a_person": bool(r and r.kind == HUMAN),
                "then": rest[1:],
            }
    return step


def next_step(verdict: str, ladder: dict, *, with_allocator: bool = False) -> dict | None:
    """The first rung for a verdict, with the exact setting or flag, as `runbook diagnose`
    recommends it (offline: the lineage is unknown, so this is the ladder's first rung; `runbook
    oom` skips the rungs a job's lineage already tried)."""
    cands = candidates(verdict, ladder)
    if not cands:
        return None
    first = cands[0]
    r = REGISTRY.get(first.id)
    setting = r.setting if r else first.what
    if with_allocator and r is not None and r.kind == SCRIPT:
        setting += "; and " + _alloc(EXPANDABLE) + " (the unallocated pool is thin)"
    return {
        "rung": first.id,
        "setting": setting,
        "for_a_person": bool(first.human_only or (r is not None and r.kind == HUMAN)),
        "then": [c.id for c in cands[1:]],
    }
