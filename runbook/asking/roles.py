"""Which parsed values are the micro-batch, the accumulation and the global batch, by the
program's own words (its option and field names, its config keys): pure. The site's catalogue
(the knob names of [knobs]) breaks a tie; it is a hint, not the gate: a name no catalogue lists
(`--accum-steps`, `grad_accum`, `accumulative_counts`) is still read by what it says."""

from __future__ import annotations

import re
from typing import Any

from runbook.record import record

# Names that say a micro-batch (the batch one rank steps on), best first; a plain batch size
# comes after them: where a program has both, the named micro-batch is the one it steps on.
_MICRO = (
    {"per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size",
     "micro_batch", "micro_bs", "mbs", "per_gpu_train_batch_size", "local_batch_size",
     "batch_size_per_gpu", "batch_size_per_device", "device_batch_size", "samples_per_gpu",
     "train_batch_size_per_device", "per_device_batch_size"},
    {"batch_size", "train_batch_size", "bs", "batch", "train_bs", "batchsize"},
)  # fmt: skip
_ANY_BATCH: set[str] = set()
_TIERS = (*_MICRO, _ANY_BATCH)
_GLOBAL = {"global_batch_size", "total_batch_size", "effective_batch_size", "gbs", "global_bs",
           "total_train_batch_size", "global_train_batch_size"}  # fmt: skip
# A key whose path says it is not training's: an evaluation's or a prediction's batch.
_NOT_TRAINING = re.compile(
    r"(?:^|[._])(eval|val|valid|validation|test|predict|inference|infer)(?:$|[._])"
)
_ACCUM = re.compile(r"accum|accumulat|^update_freq$")


@record
class Roles:
    micro: str | None
    accum: str | None
    global_: str | None
    why: str = ""  # why no micro-batch could be named (ambiguous, none, not a whole number)


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1].lower().replace("-", "_")


def _whole(v: Any) -> bool:
    return type(v) is int and v >= 1


def _training(key: str) -> bool:
    return not _NOT_TRAINING.search(key.lower().replace("-", "_"))


def _one(keys: list[str], values: dict, what: str, hint: set[str]) -> tuple[str | None, str]:
    if not keys:
        return None, ""
    if len(keys) > 1:
        hinted = [k for k in keys if _leaf(k) in hint]  # the site's names break a tie
        if len(hinted) == 1:
            return hinted[0], ""
        shown = ", ".join(f"{k}={values[k]!r}" for k in keys)
        return None, f"more than one value could be the {what} ({shown}): runbook will not choose"
    return keys[0], ""


def _in(names: set[str], tier) -> bool:
    if tier is _ANY_BATCH:  # last: any other name that says a batch size (`data_batch_size`)
        return any(re.search(r"batch_?size$", n) and n not in _GLOBAL for n in names)
    return bool(names & tier)


def _norm(name: str) -> str:
    return name.lstrip("-").lower().replace("-", "_")


def roles(
    values: dict[str, Any],
    hint: set[str] | None = None,
    spelled: dict[str, list[str]] | None = None,
) -> Roles:
    """The keys of a parsed configuration that hold each role. `hint`: the site's knob names;
    `spelled`: each key's option strings, where the parser says (`--model-batch-size` sets
    `model_batch`): a key is named by its own name and by its options' names."""
    hint = {_norm(h) for h in hint or set()}
    names = {k: {_leaf(k)} | {_norm(o) for o in (spelled or {}).get(k, [])} for k in values}
    train = [k for k in values if _training(k) and all(_training(n) for n in names[k])]
    micro, why = None, ""
    for tier in _TIERS:
        keys = [k for k in train if _in(names[k], tier) and values[k] is not None]
        if keys:
            micro, why = _one(keys, values, "micro-batch", hint)
            break
    if micro is not None and not _whole(values[micro]):
        why = f"{micro} is {values[micro]!r}, not a whole number of samples"
        micro = None
    accum_keys = [k for k in train if any(_ACCUM.search(n) for n in names[k]) and _whole(values[k])]
    accum, why_a = _one(accum_keys, values, "accumulation", hint)
    glob_keys = [k for k in train if names[k] & _GLOBAL and _whole(values[k])]
    glob, _ = _one(glob_keys, values, "global batch", hint)
    if micro is None and not why:
        why = "no parsed value is named as a training micro-batch"
    return Roles(micro, accum, glob, why or why_a)


def eval_batch(
    values: dict[str, Any], spelled: dict[str, list[str]] | None = None
) -> tuple[str | None, str]:
    """(the key of the evaluation's own batch, or None; why none): a key whose path or option
    says evaluation (eval, val, validation, test) and whose name says a batch size, a whole
    number. A program whose evaluation has no batch of its own is said so, never given the
    training batch's key (issue 64, item 3)."""
    names = {k: {_leaf(k)} | {_norm(o) for o in (spelled or {}).get(k, [])} for k in values}

    def evaluation(k: str) -> bool:  # its path or an option says evaluation, not prediction
        said = [k.lower(), *names[k]]
        return any(not _training(n) for n in said) and not any(
            re.search(r"predict|infer|test", n) for n in said
        )

    keys = [k for k in values if evaluation(k) and _whole(values[k])
            and any(re.search(r"batch_?size$|(^|_)bs$", n) for n in names[k])]  # fmt: skip
    if len(keys) > 1:
        shown = ", ".join(f"{k}={values[k]!r}" for k in keys)
        return (
            None,
            f"more than one value could be the evaluation's batch ({shown}): runbook will not choose",
        )
    if not keys:
        return None, ("no parsed value is named as the evaluation's own batch: its evaluation "
                      "runs at a batch runbook cannot tell apart from training's, which it does "
                      "not halve for an evaluation's OOM")  # fmt: skip
    return keys[0], ""
