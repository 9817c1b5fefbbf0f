"""One resubmission that fits (docs/design.md §3.2): the micro-batch solved from the failure's
own numbers instead of found by failing.

peak(m) ~ fixed + m x per_sample, for micro-batch m. At the failure, PyTorch held `allocated`
and asked for `request` more, and the card held memory outside PyTorch's pool (this process's
CUDA context and NCCL buffers, a display, another process: `outside_of`): the step needed at
least P = allocated + request + outside at the failing micro-batch m. The fixed part (weights,
gradients, optimizer state, CUDA context) does not shrink with m; what is left is
m x per_sample.

The fixed part is known when the job says how many parameters it trains (runbook.instrument's
dump: ~18 B/param for mixed-precision Adam), plus the non-PyTorch memory. Otherwise it lies
anywhere from the non-PyTorch memory (all of PyTorch's share scales with m: the optimistic end)
to all that PyTorch had allocated (only the failed request scales: the pessimistic end), and the
fit is a range. A candidate is kept only if it keeps the global batch exact (m' divides
micro-batch x accumulation, so the accumulation becomes a whole number) and its predicted peak
stays under the card less the site's margin. P is a lower bound of the true peak at m (a later
allocation of the same step may be larger), so a fitted m' can still under-predict: `verify`
records predicted against measured, and `runbook stats` the under-prediction rate.

Pure functions of numbers: the caller brings the OOM message's, the dump's and the script's.
"""

from __future__ import annotations

from dataclasses import field

from runbook.record import record

FIT_MARGIN = 0.10  # of the card, kept free under the predicted peak ([ladder] fit_margin)

# An OOM in the forward pass is not at the step's peak: it ran out where the card filled, part
# way through the forward, so the memory per sample it shows is only a lower bound, and the line
# through it says about the failing micro-batch itself fits. On a real H200
# (tests/data/gpu/families: GPT-2 medium, a 1.1 B Llama, ResNet-50, ViT-B/16), runs at 1.3x and
# at 2x the largest micro-batch that ran all ran out in the forward; taken as the step's need,
# the line said 1.3x and 2x that largest fit. The pessimistic end counts the per-sample memory
# twice, and the choice goes no lower than the halving (the largest that ran was m/1.3 and m/2:
# the halving ran in both). Out of memory in the loss (the forward's last op: every activation
# is held) the step's peak was 1.15x what it showed (a real H100, tests/data/gpu/fit-m128.log):
# 1.25x there, and the fit is followed.
FORWARD_FACTOR = 2.0
LOSS_FACTOR = 1.25
_LOSS_FUNCS = frozenset(
    {
        "cross_entropy",
        "nll_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "fixed_cross_entropy",
        "ForCausalLMLoss",
        "ForMaskedLMLoss",
    }
)


@record
class Candidate:
    micro_batch: int
    grad_accum: int | None  # the accumulation that keeps the global batch, when one is stated
    peak_mib: tuple[float, float]  # predicted (optimistic, pessimistic)
    fits: bool  # at the pessimistic end

    def contract(self) -> dict:
        return {
            "micro_batch": self.micro_batch,
            "grad_accum": self.grad_accum,
            "predicted_peak_mib": round(self.peak_mib[1], 1),
            "predicted_peak_low_mib": round(self.peak_mib[0], 1),
            "fits": self.fits,
        }


@record
class Fit:
    from_micro_batch: int
    card_mib: float
    limit_mib: float  # the card less the margin
    needed_mib: float  # P: allocated + request + non-PyTorch, at the failing micro-batch
    fixed_mib: tuple[float, float]  # (low, high); equal when known
    source: str  # oom_message | oom_message+params | oom_message+telemetry | lineage
    micro_batch: int | None = None  # the largest candidate that fits (pessimistic end)
    candidates: list[Candidate] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    halved: bool = False  # a range that could not predict: the halving, as without a fit
    outside_mib: float = 0.0  # held outside what scales with m: the card's, and a kept pool
    pool_mib: float = 0.0  # of which PyTorch's unallocated pool, counted as kept
    factor: float = 1.0  # the per-sample memory counted this many times (`step_factor`)

    @property
    def known(self) -> bool:
        """The fixed cost is known: the prediction is a point, and the plan may follow it."""
        return self.fixed_mib[0] == self.fixed_mib[1]

    def contract(self) -> dict:
        chosen = next((c for c in self.candidates if c.micro_batch == self.micro_batch), None)
        return {
            "micro_batch": self.micro_batch,
            "from_micro_batch": self.from_micro_batch,
            "predicted_peak_mib": round(chosen.peak_mib[1], 1) if chosen else None,
            "card_mib": round(self.card_mib, 1),
            "limit_mib": round(self.limit_mib, 1),
            "needed_mib": round(self.needed_mib, 1),
            # What the prediction counts beyond PyTorch's allocations, for verify to compare a
            # rerun's measured allocation peak with it like for like.
            "outside_mib": round(self.outside_mib, 1),
            "pool_mib": round(self.pool_mib, 1),
            "fixed_mib": [round(x, 1) for x in self.fixed_mib],
            "source": self.source,
            "range": not self.known,
            "step_factor": self.factor,
            "halved": self.halved,
            "candidates": [c.contract() for c in self.candidates],
            "reasons": self.reasons,
        }


_FIXED_FROM = {
    "params": "weights, gradients and optimizer state from the parameter count",
    "telemetry": "what PyTorch held at the last step boundary before the failure, measured",
}
# Memory series whose value is what PyTorch held at a step boundary (the persistent part):
# runbook.instrument's per-step line and Megatron's "allocated" figure. DeepSpeed's MA and
# torchtitan's line are peaks or reserved: not the fixed part.
BOUNDARY_SERIES = ("instrument", "megatron")


def fixed_from_trend(trend, rank: int | None) -> float | None:
    """The fixed part PyTorch held, measured: the failing rank's last step-boundary value of a
    series that reports one (None: no such series for that rank). In the trust order of
    docs/design.md §3.2 it comes before the parameter count's estimate, after two attempts of the lineage."""
    if trend is None or trend.series not in BOUNDARY_SERIES or not trend.values_mib:
        return None
    if rank is not None and trend.rank is not None and trend.rank != rank:
        return None
    return float(trend.values_mib[-1])


def fittable(trend) -> bool:
    """Whether a running job's memory series can be fitted before any OOM: it reports the step
    boundary, the peak since and the card (runbook.instrument's line with total=)."""
    return bool(
        trend is not None
        and trend.series in BOUNDARY_SERIES
        and trend.peak_mib
        and trend.total_mib
        and trend.values_mib
    )


def from_series(trend, *, micro_batch: int | None, grad_accum: int | None, margin: float):
    """The fit of a running job from its own series: the fixed part at the last step boundary,
    the step's peak since as what it needs, the card the series names. None where the series
    is not `fittable` or the micro-batch is not known."""
    if not micro_batch or not fittable(trend):
        return None
    return fit(
        micro_batch=micro_batch,
        allocated_mib=trend.peak_mib,
        request_mib=0.0,
        card_mib=trend.total_mib,
        fixed_training_mib=trend.values_mib[-1],
        grad_accum=grad_accum,
        margin=margin,
        outside_mib=0.0,
        fixed_from="telemetry",
    )


def outside_of(
    process_mib: float | None,
    reserved_mib: float | None,
    *,
    total_mib: float | None = None,
    free_mib: float | None = None,
) -> float:
    """What the card held outside this PyTorch's pool at the failure, none of which a smaller
    micro-batch frees: the process's own non-PyTorch memory (CUDA context, NCCL buffers), and
    where the message gives the card's free memory, all the card held beyond that pool and the
    free (other processes too). Messages before PyTorch 2.0 name no process figure: only the
    card's numbers tell (a 1.96 GiB laptop card with 0.43 GiB held by the display; a fit that
    left it out said 4 fits where the thread saw 4 run out: tests/data/fit_threads)."""
    own = max((process_mib or 0.0) - (reserved_mib or 0.0), 0.0) if process_mib else 0.0
    if total_mib is not None and process_mib and process_mib > total_mib:
        # A process figure past the card is the driver's unsigned value gone negative (2^34 GiB
        # on a 6 GiB card under Windows' WDDM: tests/data/corpus own-oom-183): no figure.
        own = 0.0
    if total_mib is None or free_mib is None or reserved_mib is None:
        return own
    return min(max(own, total_mib - free_mib - reserved_mib), total_mib)


def outside_of_oom(oom) -> float:
    """`outside_of` an OOM message's numbers (evidence.oom_message.OomMessage)."""
    return outside_of(
        oom.this_process_mib, oom.reserved_mib, total_mib=oom.total_mib, free_mib=oom.free_mib
    )


def step_factor(where: str | None, frames=()) -> float:
    """How much more per sample the step may need than an OOM at `where` showed: 1 outside the
    forward pass (the backward and the optimizer's step hold the step's peak), LOSS_FACTOR when
    the deepest frames are a loss function's, else FORWARD_FACTOR. `frames`: the failing
    rank's traceback (evidence.phase.Frame), outermost first."""
    if where != "forward":
        return 1.0
    deepest = {f.func.split(".")[-1] for f in list(frames)[-2:]}
    return LOSS_FACTOR if deepest & _LOSS_FUNCS else FORWARD_FACTOR


def _mib(x: float) -> str:
    return f"{x / 1024:.2f} GiB" if x >= 1024 else f"{x:.0f} MiB"


def fit(
    *,
    micro_batch: int,
    allocated_mib: float | None,
    request_mib: float | None,
    card_mib: float | None,
    reserved_mib: float | None = None,
    process_mib: float | None = None,
    fixed_training_mib: float | None = None,
    grad_accum: int | None = None,
    margin: float = FIT_MARGIN,
    outside_mib: float | None = None,
    fixed_from: str = "params",
    factor: float = 1.0,
) -> Fit | None:
    """The fitted micro-batch for a failure at `micro_batch`, or None when the message lacks
    the numbers (allocated, request, card) any fit needs. `outside_mib` (what the process held
    outside PyTorch) where it is known already, else from `process_mib` - `reserved_mib`.
    `factor` (`step_factor`): the pessimistic end counts the per-sample memory that many times."""
    if not micro_batch or micro_batch < 1 or None in (allocated_mib, request_mib, card_mib):
        return None
    assert allocated_mib is not None and request_mib is not None and card_mib is not None
    outside = outside_mib if outside_mib is not None else outside_of(process_mib, reserved_mib)
    needed = allocated_mib + request_mib + outside
    if fixed_training_mib is not None:
        fixed = min(fixed_training_mib + outside, needed)
        lo = hi = fixed
        source = f"oom_message+{fixed_from}"
    else:
        lo, hi = outside, allocated_mib + outside
        source = "oom_message"
    limit = card_mib * (1.0 - margin)
    out = Fit(
        micro_batch, card_mib, limit, needed, (lo, hi), source, outside_mib=outside, factor=factor
    )
    total = micro_batch * (grad_accum or 1)
    for m in range(micro_batch - 1, 0, -1):
        if total % m:
            # The global batch would not stay exact (with no accumulation to absorb it, total is
            # the micro-batch itself: only its divisors).
            continue
        # per-sample = (needed - fixed) / micro_batch; the larger fixed, the less a smaller m frees
        peaks = (
            lo + m * (needed - lo) / micro_batch,
            hi + m * factor * (needed - hi) / micro_batch,
        )
        accum = total // m if grad_accum else None
        out.candidates.append(Candidate(m, accum, (peaks[0], peaks[1]), peaks[1] <= limit))
    chosen = _choose(out)
    what = (
        f"fixed {_mib(lo)} ({_FIXED_FROM.get(fixed_from, fixed_from)}, plus {_mib(outside)} "
        "outside PyTorch)"
        if out.known
        else f"fixed between {_mib(lo)} and {_mib(hi)} (the parameter count is not known)"
    )
    out.reasons.append(
        f"at micro-batch {micro_batch} the step needed at least {_mib(needed)} (allocated "
        f"{_mib(allocated_mib)} + request {_mib(request_mib)} + {_mib(outside)} held "
        f"outside PyTorch's pool); {what}; the card is {_mib(card_mib)}, {margin:.0%} kept free: "
        f"{_mib(limit)}"
    )
    out.reasons.append(_said(out, chosen))
    return out


def _choose(out: Fit) -> Candidate | None:
    """The largest candidate that fits at the pessimistic end; for a range, or a forward pass's
    lower bound (FORWARD_FACTOR), never below the halving."""
    micro_batch = out.from_micro_batch
    chosen = next((c for c in out.candidates if c.fits), None)
    halving = next((c for c in out.candidates if 2 * c.micro_batch <= micro_batch), None)
    bound = not out.known or out.factor == FORWARD_FACTOR
    if bound and halving and (chosen is None or chosen.micro_batch < halving.micro_batch):
        # A range's pessimistic end (all of PyTorch's share fixed, only the request scaling) is
        # the degenerate bound: on a real H100 it picked 16 of 128 where 80 ran, and nothing of
        # 112 where 56 ran. Without the fixed part, go no lower than halving (docs/design.md §3.2).
        out.halved = True
        chosen = halving
    out.micro_batch = chosen.micro_batch if chosen else None
    return chosen


def _said(out: Fit, chosen: Candidate | None) -> str:
    """The fit's choice in words."""
    limit = out.limit_mib
    if chosen and out.halved and out.known:
        return (
            f"micro-batch {chosen.micro_batch}, the halving: it ran out in the forward pass, whose "
            f"numbers bound the step's need from below, so {chosen.micro_batch} is predicted "
            f"between {_mib(chosen.peak_mib[0])} and {_mib(chosen.peak_mib[1])}; a second OOM "
            "gives the line itself (two attempts of the lineage)"
        )
    elif chosen and out.halved:
        return (
            f"micro-batch {chosen.micro_batch}, the halving: the fixed part is not known, so "
            f"{chosen.micro_batch} is predicted between {_mib(chosen.peak_mib[0])} and "
            f"{_mib(chosen.peak_mib[1])}; the parameter count (--params, or runbook.instrument's "
            "line in the job's log) makes the fit a point"
        )
    elif chosen:
        return (
            f"micro-batch {chosen.micro_batch} is predicted at {_mib(chosen.peak_mib[1])}"
            + ("" if out.known else f" (at most; {_mib(chosen.peak_mib[0])} at the least)")
            + f", under {_mib(limit)}"
        )
    else:
        smallest = out.candidates[-1] if out.candidates else None
        return (
            "no smaller micro-batch is predicted to fit"
            + (
                f": even {smallest.micro_batch} is predicted at {_mib(smallest.peak_mib[1])}"
                if smallest
                else ""
            )
            + (
                ", the fixed part alone nearly fills the card: the next rung, not a smaller batch"
                if out.known
                else "; the fixed part is not known, so this is the pessimistic end"
            )
        )


def from_oom(
    oom,
    *,
    micro_batch: int,
    fixed_training_mib: float | None,
    grad_accum: int | None,
    margin: float = FIT_MARGIN,
    trend=None,
    where: str | None = None,
    frames=(),
    pool_kept: bool = False,
) -> Fit | None:
    """The fit from an OOM message's numbers (evidence.oom_message.OomMessage), with the fixed
    part measured by the failing rank's memory series (`trend`) where there is one, else
    estimated from the parameter count (`fixed_training_mib`). `where`: the phase it ran out
    in (evidence.phase). `pool_kept`: the rerun runs without an allocator setting that wins
    PyTorch's reserved-but-unallocated pool back, so it holds about as much again: fixed."""
    measured = fixed_from_trend(trend, oom.rank)
    pool = max(oom.unallocated_mib or 0.0, 0.0) if pool_kept else 0.0
    outside = outside_of_oom(oom)
    card = oom.total_mib
    capped = oom.limit_mib is not None and card is not None and oom.limit_mib < card
    if capped:
        # A memory fraction (set_per_process_memory_fraction: "X allowed") caps what PyTorch
        # may reserve; what the process holds outside PyTorch is not under the cap. The other
        # processes on the card are not this process's concern: only its own outside counts.
        outside = outside_of(oom.this_process_mib, oom.reserved_mib)
        card = min(card, oom.limit_mib + outside)
    out = fit(
        micro_batch=micro_batch,
        allocated_mib=oom.allocated_by_pytorch_mib,
        request_mib=oom.tried_mib,
        card_mib=card,
        outside_mib=outside + pool,
        fixed_training_mib=measured if measured is not None else fixed_training_mib,
        grad_accum=grad_accum,
        margin=margin,
        fixed_from="telemetry" if measured is not None else "params",
        factor=step_factor(where, frames),
    )
    if out is not None:
        out.pool_mib = pool
    if out is not None and capped:
        out.reasons.insert(
            1,
            f"a memory fraction caps this process at {_mib(oom.limit_mib)} of the "
            f"{_mib(oom.total_mib)} card: the fit sizes for that, plus {_mib(outside)} it holds "
            "outside PyTorch",
        )
    if out is not None and pool > 0:
        out.reasons.append(
            f"PyTorch's {_mib(pool)} reserved but unallocated is counted as fixed: the rerun gets "
            "no allocator setting that wins it back (only a fragmentation verdict, or a thin "
            "pool the plan sets expandable segments for, does)"
        )
    if out is not None and out.factor != 1.0:
        out.reasons.append(
            "it ran out in the forward pass, before the step's peak (the backward pass holds the "
            "activations and their gradients): the memory per sample it showed is a lower bound, "
            f"counted {out.factor:g}x at the pessimistic end ("
            + (
                "in the loss, the forward's last op: 1.15x on a real H100"
                if out.factor == LOSS_FACTOR
                else "and never below the halving: on a real H200, four model families that "
                "ran out in the forward at 1.3x and 2x the largest micro-batch that ran"
            )
            + "; tests/data/gpu)"
        )
    return out


def of_diagnosis(
    diagnosis, *, micro_batch: int, grad_accum: int | None, fixed_training_mib, margin: float
) -> Fit | None:
    """`from_oom` for a diagnosis (runbook.diagnosis.Diagnosis): its OOM message, the failing
    rank's memory series, the phase, and whether the rerun wins the allocator's pool back (a
    fragmentation verdict's allocator rung, or the expandable segments a thin pool adds)."""
    if diagnosis.oom is None:
        return None
    return from_oom(
        diagnosis.oom,
        micro_batch=micro_batch,
        fixed_training_mib=fixed_training_mib,
        grad_accum=grad_accum,
        margin=margin,
        trend=diagnosis.trend,
        where=diagnosis.phase.where if diagnosis.phase else None,
        frames=diagnosis.phase.frames if diagnosis.phase else (),
        pool_kept=not (diagnosis.verdict == "fragmentation" or diagnosis.with_allocator),
    )


def refit(
    current: Fit,
    parent: tuple[int, float] | None,
    *,
    outside_mib: float,
    grad_accum: int | None,
    margin: float = FIT_MARGIN,
) -> Fit:
    """The fit from two attempts of the lineage: the parent failed at micro-batch m1 needing at
    least P1, this rerun at m2 needing at least P2 (`current`). The line through them gives the
    per-sample cost (P1 - P2) / (m1 - m2) and the fixed part, kept within what this message
    allows (between the memory outside PyTorch and all it held): a point, trusted over the
    message alone. Where the rerun needed as much with fewer samples, the memory does not scale
    with the micro-batch: no smaller one is predicted to fit. `current` as it was without a
    usable parent (same micro-batch, or none)."""
    if parent is None or parent[0] == current.from_micro_batch:
        return current
    m1, p1 = parent
    m2, p2 = current.from_micro_batch, current.needed_mib
    slope = (p1 - p2) / (m1 - m2)
    lo, hi = current.fixed_mib if not current.known else (outside_mib, current.needed_mib)
    if slope <= 0:
        out = Fit(
            m2,
            current.card_mib,
            current.limit_mib,
            p2,
            (p2, p2),
            "lineage",
            outside_mib=outside_mib,
            pool_mib=current.pool_mib,
        )
        out.reasons.append(
            f"the parent needed at least {_mib(p1)} at micro-batch {m1}, this rerun "
            f"{_mib(p2)} at {m2}: no less with fewer samples, so the memory does not scale with "
            "the micro-batch and no smaller one is predicted to fit"
        )
        return out
    fixed = min(max(p2 - m2 * slope, lo), hi)
    refitted = fit(
        micro_batch=m2,
        allocated_mib=p2 - outside_mib,  # with a zero request: needed stays P2
        request_mib=0.0,
        card_mib=current.card_mib,
        fixed_training_mib=fixed - outside_mib,
        grad_accum=grad_accum,
        margin=margin,
        outside_mib=outside_mib,
    )
    assert refitted is not None
    refitted.source = "lineage"
    refitted.pool_mib = current.pool_mib
    refitted.reasons[0] = (
        f"two attempts of the lineage: micro-batch {m1} needed at least {_mib(p1)}, {m2} at "
        f"least {_mib(p2)}: {_mib(slope)} a sample, fixed {_mib(fixed)}"
        + (" (held within what this message allows)" if fixed != p2 - m2 * slope else "")
        + f"; the card is {_mib(current.card_mib)}, {margin:.0%} kept free: "
        f"{_mib(refitted.limit_mib)}"
    )
    return refitted
