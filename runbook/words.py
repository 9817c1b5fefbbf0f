"""Facts as a person reads them: the one place where a value becomes words, for `diagnose`, the
report's Markdown and HTML, and `plan`. Pure functions of values; no Python repr ever reaches a
reader ("[3]", "{'micro_batch': 8}", "False"), and nothing is printed that says nothing."""

from __future__ import annotations

from collections.abc import Iterable

WHERE_WORDS = {
    "forward": "in the forward pass",
    "backward": "in the backward pass",
    "optimizer_step": "in the optimizer step",
    "eval": "in evaluation",
    "data": "while loading data",
    "checkpoint_load": "while loading a checkpoint",
    "checkpoint_save": "while saving a checkpoint",
    "model_init": "while building the model",
}
WHEN_WORDS = {
    "first_step": "at the first training step",
    "mid_run": "mid-run, after training steps had completed",
    "eval_start": "as evaluation started",
    "after_resume": "just after resuming from a checkpoint",
}


def unread(evidence: str) -> bool:
    """An evidence line that says why where or when is unknown (runbook.evidence.phase), not a
    line of the log."""
    return evidence.startswith(("where unknown: ", "when unknown: "))


def when_where(where: str | None, when: str | None, step: int | None = None) -> str | None:
    """ "in the backward pass, mid-run (after step 1200)", or None where neither is known."""
    parts = [w for w in (WHERE_WORDS.get(where or ""), WHEN_WORDS.get(when or "")) if w]
    if not parts:
        return None
    if step is not None and when == "mid_run":
        parts[-1] = f"mid-run, after step {step} had completed"
    elif step is not None:
        parts.append(f"after step {step}")
    return ", ".join(parts)


VERDICT_WORDS = {
    "true_oom": "a true OOM",
    "fragmentation": "allocator fragmentation",
    "co_tenant": "another process on the GPU",
    "gpu_fault": "a GPU fault",
    "host_oom": "a host-RAM OOM",
    "not_oom": "no OOM",
}


def verdict_words(verdict: str) -> str:
    """A verdict's id as words, for a sentence ("Also possible: a true OOM")."""
    return VERDICT_WORDS.get(verdict, verdict.replace("_", " "))


def count(n: int | None, noun: str, plural: str | None = None) -> str:
    """ "1 node", "3 nodes", "? nodes" (unknown): never "node(s)"."""
    many = plural or f"{noun}s"
    if n is None:
        return f"? {many}"
    # Slurm's figures often come as text ("1"): one is one either way.
    return f"{n} {noun if str(n).strip() == '1' else many}"


def ranks(values: Iterable[object], shown: int = 12) -> str:
    """ "rank 3", "ranks 0, 1, 2", "ranks 0, 1, ... and 500 more", "rank ?" (unknown): never
    "rank(s)"."""
    v = [str(x) for x in values]
    if not v:
        return "rank ?"
    more = f" and {len(v) - shown} more" if len(v) > shown else ""
    return ("rank " if len(v) == 1 else "ranks ") + ", ".join(v[:shown]) + more


def yes_no(value: bool | None) -> str:
    return "unknown (not shown)" if value is None else ("yes" if value else "no")


def numbers(values: Iterable[object]) -> str:
    """3, 5, 7: a list of ranks or ids as words."""
    return ", ".join(str(v) for v in values)


def settings(values: dict | None) -> str:
    """micro_batch 8, grad_accum 4: a mapping of knobs to their values."""
    if not values:
        return "none"
    return ", ".join(f"{k} {v}" for k, v in values.items())


def fits_words(low_mib: float, high_mib: float, limit_mib: float) -> str:
    """What a predicted range says of a batch against the card: fits only where its high end
    does, does not fit only where its low end already exceeds the card, else not known."""
    if high_mib <= limit_mib:
        return "fits"
    if low_mib > limit_mib:
        return "does not fit"
    return "may fit"


FINDING_WORDS = {
    "keeps_graph": "a loss kept with its autograd graph across steps",
    "no_zero_grad": "gradients never zeroed between steps",
    "eval_no_grad": "an evaluation forward pass without torch.no_grad()",
    "load_no_map_location": "torch.load without map_location (tensors go back to the GPU they "
    "were saved from)",
}


def finding(kind: str) -> str:
    return FINDING_WORDS.get(kind, kind.replace("_", " "))


def seconds(value: float | None, unknown: str = "unknown") -> str:
    """A duration as a person reads it: 42 s, 12 min 5 s, 30 min, 3 h 2 min, 3 h (no "0 s")."""
    if value is None:
        return unknown
    s = round(value)
    if s < 120:
        return f"{value:.1f} s" if value < 10 else f"{s} s"
    if s < 7200:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")


def fit_source(source: str | None) -> str:
    """Where a fit's fixed part came from (planning.fit.Fit.source), in words."""
    text = source or ""
    if "telemetry" in text:
        return "from the job's own memory series: what PyTorch held at a step boundary"
    if "lineage" in text:
        return "from the lineage's two attempts"
    if "params" in text:
        return "from the parameter count"
    return f"from {text or 'numbers not recorded'}"


def _prevented_words(pre: dict, lost, on: str) -> list[str]:
    """A prevented OOM's cost: the steps lost, the GPUs' idle time, where the OOM was headed."""
    n, at = pre.get("steps_lost"), pre.get("checkpoint_step")
    steps = (
        f"steps lost: {n}" if n is not None else "steps lost: unknown (the job's log was not read)"
    )
    if at is not None:
        steps += f" (the rerun resumes from the checkpoint the job wrote when asked, at step {at})"
    parts = [
        steps,
        f"GPU-hours from that checkpoint to the cancel: {lost if lost is not None else 'unknown'}{on}",
    ]
    to = pre.get("projected_step")
    parts.append(
        f"the trend projected the OOM at about step {to}"
        if to is not None
        else "no step was projected for the OOM (the allocator thrashing or a step near the "
        "card: the next longer input may run out)"
    )
    return parts


def cost_sentence(cost: dict) -> str:
    """The cost in one sentence, every figure with its unit; what is unknown said so."""
    lost = cost.get("lost_gpu_hours")
    gpus = cost.get("gpus")
    on = f" on {gpus} GPUs" if gpus is not None else " (GPU count unknown)"
    if (pre := cost.get("prevented")) is not None:
        parts = _prevented_words(pre, lost, on)
    else:
        parts = [f"GPU-hours lost: {lost if lost is not None else 'unknown'}{on}"]
        parts.append(f"detected {seconds(cost.get('detection_s'))} after the failure")
    if cost.get("diagnosis_s") is not None:
        parts.append(f"diagnosed {seconds(cost['diagnosis_s'])} into the incident")
    if cost.get("resubmission_s") is not None:
        parts.append(f"resubmitted {seconds(cost['resubmission_s'])} into the incident")
    if cost.get("rerun_queue_s") is not None:
        parts.append(f"the rerun waited {seconds(cost['rerun_queue_s'])} in the queue")
    if cost.get("recovered_s") is not None:
        parts.append(f"past the failed step {seconds(cost['recovered_s'])} after the failure")
    return "; ".join(parts) + "."
