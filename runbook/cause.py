"""The cause of an OOM (docs/design.md §3.1): named rules over the verdict, the phase, the memory trend
and the source check, run in order; the first that holds names the cause and what it changes in
the plan. Each rule is data in, a Cause or None out.

A cause does not replace the verdict (how full the card was); it says why it got full, and so
whether a batch rung can help: halving the training micro-batch does not touch an evaluation's
batch, an optimizer's state, a `torch.load` onto one GPU, or a leak.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from runbook import rungs
from runbook.lazyre import lazy
from runbook.record import record

CAUSES = (
    "leak",
    "eval_no_grad",
    "eval_batch",
    "eval_predictions",
    "longest_batch",
    "optimizer_state",
    "checkpoint_map_location",
    "checkpoint_save",
    "static_sizing",
    "fragmentation",
    "co_tenant",
    "gpu_fault",
    "host_oom",
    "unknown",
)
# What each cause does to its verdict's ladder is the playbook's (playbooks/oom.yaml `causes`):
# a cause is named here, and its rule says why it holds.
OWN_VERDICT = ("co_tenant", "gpu_fault", "host_oom")
OOM_VERDICTS = ("true_oom", "fragmentation", "unknown", "co_tenant")
EARLY_STEPS = 2  # an optimizer's state appears at its first step(s)


@record
class Cause:
    name: str = "unknown"
    reasons: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


@record
class Facts:
    """What the rules read."""

    verdict: str
    phase: Any = None  # evidence.phase.Phase
    trend: Any = None  # evidence.trend.Trend
    source: Any = None  # jobfiles.source_check.SourceReport
    tried: tuple[str, ...] = ()  # rungs the lineage already took
    parent_failed_step: int | None = None  # the step this job's parent failed at
    # The co_tenant verdict rests on the message's "Process N has X" alone (no node probe).
    co_tenant_from_message: bool = False


def _where(f: Facts) -> str:
    return getattr(f.phase, "where", "unknown")


def _when(f: Facts) -> str:
    return getattr(f.phase, "when", "unknown")


def _findings(f: Facts, kind: str) -> list:
    """The source check's findings of `kind` in the code the failing traceback ran through."""
    if f.source is None:
        return []
    return f.source.of(kind, getattr(f.phase, "frames", None) or None)


def _lines(findings: list) -> list[str]:
    return [f"{x.where()}: {x.text}" for x in findings[:5]]


def own_verdict(f: Facts) -> Cause | None:
    if f.verdict in OWN_VERDICT and not (f.verdict == "co_tenant" and map_location_load(f)):
        return Cause(f.verdict, [f"the verdict is {f.verdict}: its own ladder (§3)"])
    return None


def map_location_load(f: Facts) -> bool:
    p = f.phase
    return (
        p is not None
        and p.where == "checkpoint_load"
        and (
            p.when == "after_resume"
            or p.restored_to_saved_device
            or bool(_findings(f, "load_no_map_location"))
        )
        and (f.verdict != "co_tenant" or f.co_tenant_from_message)
    )


def checkpoint_map_location(f: Facts) -> Cause | None:
    if not map_location_load(f):
        return None
    p = f.phase
    why = [
        "the OOM happened inside loading a checkpoint"
        + (" while resuming" if p.when == "after_resume" else "")
    ]
    if p.restored_to_saved_device:
        why.append(
            "the traceback shows torch.load restoring tensors onto the device they were saved "
            "from (default_restore_location): no map_location to the CPU or this rank's GPU"
        )
    found = _findings(f, "load_no_map_location")
    if f.verdict == "co_tenant":
        why.append(
            "the 'other processes' on that GPU are the job's own ranks loading onto it, not a "
            "co-tenant: excluding the node would not help"
        )
    why.append("the same resume fails the same way: add map_location to the load")
    return Cause("checkpoint_map_location", why, [*p.evidence[:2], *_lines(found)])


def leak(f: Facts) -> Cause | None:
    t = f.trend
    if t is not None and t.kind == "leak":
        return Cause(
            "leak",
            [f"the memory at step boundaries keeps rising ({t.series}: {t.why})"],
            [*t.evidence, *_lines(_findings(f, "keeps_graph"))],
        )
    step, before = getattr(f.phase, "step", None), f.parent_failed_step
    if (
        f.tried[:1]
        and rungs.changes_micro_batch(f.tried[0])
        and _when(f) == "mid_run"
        and f.verdict in OOM_VERDICTS
        and step is not None
        and before is not None
        and step > before
    ):
        return Cause(
            "leak",
            [
                f"the lineage halved the micro-batch after an OOM at step {before}, and the rerun "
                f"ran out again later, after step {step}: the working set grows with the steps; "
                "another batch rung would only move the OOM later"
            ],
            _lines(_findings(f, "keeps_graph")),
        )
    return None


def checkpoint_save(f: Facts) -> Cause | None:
    """The OOM inside saving a checkpoint: the save builds a state dict on the GPU (a copy of the
    weights converted or gathered for it, an optimizer state consolidated on one rank). The
    training steps before it ran; a smaller batch does not change what the save gathers."""
    if _where(f) != "checkpoint_save" or f.verdict not in OOM_VERDICTS:
        return None
    return Cause(
        "checkpoint_save",
        [
            "the OOM is inside saving a checkpoint, after the training steps ran: the save "
            "builds its state dict on the GPU; the same save fails again after any batch rung: "
            "gather it on the CPU (FSDP: FullStateDictConfig(offload_to_cpu=True, "
            "rank0_only=True); DeepSpeed: its sharded checkpoint), or free the GPU's cache "
            "before saving"
        ],
        f.phase.evidence[:3],
    )


def eval_cause(f: Facts) -> Cause | None:
    if _where(f) != "eval" or f.verdict not in OOM_VERDICTS:
        return None
    no_grad = _findings(f, "eval_no_grad")
    if no_grad:
        return Cause(
            "eval_no_grad",
            [
                "the OOM is in evaluation, and the evaluation calls the model outside no_grad: "
                "it builds a graph it never uses; a smaller batch only hides it"
            ],
            [*f.phase.evidence[:2], *_lines(no_grad)],
        )
    kept = getattr(f.phase, "kept_predictions", None) or []
    if kept:
        return Cause(
            "eval_predictions",
            [
                "the OOM is in evaluation, which keeps every batch's predictions on the GPU until "
                "it ends (the traceback runs out in that accumulation): they grow with the "
                "evaluation set, so a smaller evaluation batch keeps as much in all; they must "
                "leave the GPU each batch (HF Trainer: eval_accumulation_steps=1; a loop of "
                "one's own: move each batch's outputs to the CPU)"
            ],
            [*f.phase.evidence[:1], *kept],
        )
    return Cause(
        "eval_batch",
        [
            "the OOM is in evaluation, which runs with its own batch: halving the training "
            "micro-batch would not change it"
        ],
        f.phase.evidence[:3],
    )


def optimizer_state(f: Facts) -> Cause | None:
    p = f.phase
    if _where(f) != "optimizer_step" or f.verdict not in OOM_VERDICTS:
        return None
    early = p.when in ("first_step", "unknown", "after_resume") or (
        p.step is not None and p.step <= EARLY_STEPS
    )
    if not early:
        return None
    return Cause(
        "optimizer_state",
        [
            "the OOM is in the optimizer's step at the start of training: its state (Adam: two "
            "fp32 moments, 8 B per parameter) is allocated there; activations are already freed, "
            "so a smaller micro-batch cannot help: shard the optimizer state or use a lighter one"
        ],
        p.evidence[:3],
    )


def longest_batch(f: Facts) -> Cause | None:
    t = f.trend
    if t is not None and t.kind == "spike" and _when(f) in ("mid_run", "unknown"):
        return Cause(
            "longest_batch",
            [
                f"memory was flat, then peaked at the failing step ({t.why}): a long input; a "
                "smaller micro-batch lowers that peak, capping lengths is a person's call"
            ],
            t.evidence,
        )
    return None


_COLLECTIVE = lazy(r"torch[/\\]distributed[/\\]")


def static_sizing(f: Facts) -> Cause | None:
    # An unknown where may be the step's own work (no traceback, or the script's own tensor);
    # one inside torch.distributed's collectives is not the batch's (nnU-Net#593: a DDP
    # set-up's barrier ran out on a card its ranks share).
    frames = getattr(f.phase, "frames", None) or []
    sized = _where(f) in ("forward", "backward", "model_init") or (
        _where(f) == "unknown" and not any(_COLLECTIVE.search(x.file) for x in frames)
    )
    step = getattr(f.phase, "step", None)
    if _when(f) == "first_step":
        why = "the OOM came before any training step completed: the job does not fit as sized"
    elif _when(f) == "mid_run" and step is not None and 0 < step <= EARLY_STEPS:
        # A real H100 run: step 1 peaked at 93% of the card, step 2 ran out in backward: the
        # optimizer's state, made at the first step, is part of every later step's peak.
        why = (
            f"the OOM came after step {step} completed, within the first steps, where the "
            "optimizer's state (made at its first step) first joins a step's peak: the job does "
            "not fit as sized"
        )
    else:
        return None
    if sized and (f.trend is None or f.trend.kind in ("flat", "warmup", "unknown")):
        return Cause("static_sizing", [why], getattr(f.phase, "evidence", [])[:2])
    return None


def fragmentation(f: Facts) -> Cause | None:
    if f.verdict == "fragmentation":
        return Cause("fragmentation", ["the numbers say fragmentation (§3)"])
    return None


RULES: list[Callable[[Facts], Cause | None]] = [
    checkpoint_map_location,
    own_verdict,
    leak,
    checkpoint_save,
    eval_cause,
    optimizer_state,
    longest_batch,
    static_sizing,
    fragmentation,
]


def cause_of(f: Facts) -> Cause:
    """The first rule that holds, else unknown (the verdict's ladder as it is)."""
    if f.verdict in ("not_oom",) or (f.phase is None and f.verdict not in OWN_VERDICT):
        return Cause("unknown", [])
    for rule in RULES:
        if (c := rule(f)) is not None:
            return c
    return Cause("unknown", [])
