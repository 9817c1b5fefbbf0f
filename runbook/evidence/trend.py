"""The memory trend before an OOM, from the memory series a training already prints (docs/design.md §3.1).

A pure function of log lines. Series read: runbook.instrument's per-step line, Megatron-LM's
`memory (MB) | allocated: ... | max allocated: ... | reserved: ...`, DeepSpeed's
`see_memory_usage` (`MA 1.2 GB  Max_MA 2.3 GB  CA 3.4 GB  Max_CA 3 GB`), torchtitan's
`step: N ... memory: 23.86GiB(25.12%)`. Kinds:
- leak: the value at step boundaries keeps rising after warm-up, to the last points;
- warmup: it rises, then stays flat (the allocator's caches and the optimizer's state filling
  up): never a leak;
- spike: flat, then one point far above (a data-dependent peak: the longest batch);
- flat; unknown (too few points, or a shape none of these).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from dataclasses import field

from runbook import words
from runbook.evidence.oom_message import strip_line
from runbook.evidence.units import small_int
from runbook.lazyre import lazy
from runbook.record import record

MIN_POINTS = 4
FLAT = 0.03  # spread within 3 % of the median is flat (allocator rounding, a step's jitter)
LEAK_RISE = 0.05  # a leak grows the value by at least 5 % after warm-up...
LATE_RISE = 0.01  # ...and is still growing over the last third of the points
SPIKE = 1.25  # one point 25 % above the median of the others
MAX_POINTS = 4096
MAX_EVIDENCE = 4

_INSTRUMENT = lazy(
    r"RUNBOOK_INSTRUMENT mem rank=(\S+) step=(\d{1,12}) allocated=(\d{1,20})"
    r"(?: peak=(\d{1,20}))?(?: reserved=(\d{1,20}))?(?: retries=(\d{1,12}))?"
    r"(?: inactive=\d{1,20})?(?: total=(\d{1,20}))?",
    needs="RUNBOOK_INSTRUMENT mem",
)
_MEGATRON = lazy(
    r"(?:\[Rank (\d+)\]\s*)?\(after (\d+) iterations\) memory \(MB\) \| allocated: ([\d.]+) \| "
    r"max allocated: ([\d.]+) \| reserved: ([\d.]+)",
    needs="memory (MB)",
)
_DEEPSPEED = lazy(r"\bMA ([\d.]+) GB\s+Max_MA ([\d.]+) GB\s+CA ([\d.]+) GB", needs="Max_MA")
_TITAN = lazy(r"\bstep:\s*(\d{1,12})\b.*?\bmemory:\s*([\d.]+)\s*GiB\s*\(", needs="GiB(")
_RETRIES = lazy(r"(\d{1,9}) CUDA memory allocation retries", needs="allocation retries")


@record
class Trend:
    kind: str = "unknown"  # leak | warmup | spike | flat | unknown
    points: int = 0
    series: str | None = None  # instrument | megatron | deepspeed | torchtitan
    rank: int | None = None
    values_mib: list[float] = field(default_factory=list)
    steps: list[int | None] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    retries: int | None = None  # allocation retries the series reported (fragmentation pressure)
    why: str = ""
    # The allocator's retries at each point (runbook.instrument), and torchtitan's "N CUDA memory
    # allocation retries" warnings in order: rising, the allocator thrashes before an OOM.
    retries_series: list[int | None] = field(default_factory=list)
    retry_warnings: list[int] = field(default_factory=list)
    # The last point's peak since the point before, and the card (runbook.instrument's total).
    peak_mib: float | None = None
    total_mib: float | None = None
    # The largest peak any kept point reported (instrument's peak, Megatron's max allocated,
    # DeviceStatsMonitor's), and how many points reported one: what the steps before the OOM
    # needed at most, against which at_oom weighs what the failing step asked for.
    max_peak_mib: float | None = None
    peak_points: int = 0

    def contract(self) -> dict:
        # The values ride along (at most PICTURE_POINTS, evenly kept) for the report's picture.
        keep = _even(len(self.values_mib), PICTURE_POINTS)
        return {
            "kind": self.kind,
            "points": self.points,
            "series": self.series,
            "evidence": self.evidence,
            "why": self.why,
            "values_mib": [round(self.values_mib[i], 1) for i in keep],
            "steps": [self.steps[i] for i in keep],
        }


PICTURE_POINTS = 200


def _even(n: int, most: int) -> list[int]:
    """Indices of at most `most` of n points, evenly spread, the first and last kept."""
    if n <= most:
        return list(range(n))
    return sorted({round(k * (n - 1) / (most - 1)) for k in range(most)})


_Point = tuple[str, int | None, int | None, float, int | None, float | None, float | None]


def _point(text: str) -> _Point | None:
    """(series, rank, step, allocated MiB, retries, peak MiB, card MiB) of one line, or None."""
    if m := _INSTRUMENT.search(text):
        rank = int(m.group(1)) if m.group(1).isdigit() else None
        retries = int(m.group(6)) if m.group(6) else None
        peak = int(m.group(4)) / 2**20 if m.group(4) else None
        total = int(m.group(7)) / 2**20 if m.group(7) else None
        return "instrument", rank, int(m.group(2)), int(m.group(3)) / 2**20, retries, peak, total
    if m := _MEGATRON.search(text):
        mb = float(m.group(3))
        step = small_int(m.group(2))
        return "megatron", small_int(m.group(1)), step, mb, None, float(m.group(4)), None
    if m := _DEEPSPEED.search(text):
        return "deepspeed", None, None, float(m.group(1)) * 1024, None, None, None
    if m := _TITAN.search(text):
        return "torchtitan", None, int(m.group(1)), float(m.group(2)) * 1024, None, None, None
    return None


def _series_of(lines: list[str], end: int | None, most: int):
    """Every memory series in lines[:end] by (series, rank), the last `most` points each (with
    each point's line's index), and torchtitan's retry warnings (the last `most`, with theirs)."""
    series: dict[tuple[str, int | None], deque[tuple]] = {}
    warnings: deque[tuple[int, int]] = deque(maxlen=most)
    for i, raw in enumerate(lines[:end]):
        if not any(w in raw for w in ("memory", "MA ", "RUNBOOK", "retries")):
            continue
        text, prefix_rank = strip_line(raw)
        if m := _RETRIES.search(text):
            warnings.append((i, int(m.group(1))))
            continue
        got = _point(text)
        if got is None:
            continue
        name, r, step, mib, retr, peak, total = got
        r = r if r is not None else prefix_rank
        # The last `most` of each series: the points nearest the OOM tell its trend.
        kept = series.setdefault((name, r), deque(maxlen=most))
        kept.append((i, (step, mib, text.strip()[:200], retr, peak, total)))
    return series, warnings


def _gather(lines: list[str], end: int | None, most: int = MAX_POINTS):
    """Every memory series in lines[:end] by (series, rank), the last `most` points each, with
    the largest retry count the kept points and warnings show, and the warnings in order."""
    return _gathered(*_series_of(lines, end, most))


def _gathered(found: dict, kept_warnings) -> tuple[dict, int | None, list[int]]:
    series = {k: [p for _, p in pts] for k, pts in found.items()}
    warnings = [n for _, n in kept_warnings]
    counts = [p[3] for pts in series.values() for p in pts if p[3] is not None] + warnings
    return series, (max(counts) if counts else None), warnings


# The points per rank the watch of running jobs reads (every_rank's for a part without an OOM):
# what the sweep holds between periods, so a period that reads only new lines sees what a read of
# the whole log would (issue 65).
WATCH_POINTS = 256


def held_and_trends(lines: list[str], most: int = WATCH_POINTS) -> tuple[list[str], list[Trend]]:
    """(the lines every_rank(lines, most=most) reads, in order and no others; every_rank(lines,
    most=most)), from one reading of the lines. The first is what to hold so that every_rank of
    the held and later lines equals every_rank of all lines: a watched job's period reads its
    held and new lines once (issue 65)."""
    found, warnings = _series_of(lines, None, most)
    keep = sorted({i for pts in found.values() for i, _ in pts} | {i for i, _ in warnings})
    return [lines[i] for i in keep], _ranks(*_gathered(found, warnings))


def _trend(key: tuple[str, int | None], pts: list, retries, warnings: list[int]) -> Trend:
    t = Trend(
        series=key[0],
        rank=key[1],
        points=len(pts),
        values_mib=[p[1] for p in pts],
        steps=[p[0] for p in pts],
        retries=retries,
        retries_series=[p[3] for p in pts],
        retry_warnings=warnings,
        peak_mib=pts[-1][4],
        total_mib=next((p[5] for p in reversed(pts) if p[5] is not None), None),
    )
    _peaks(t, [p[4] for p in pts])
    t.kind, t.why = classify(t.values_mib)
    t.evidence = [pts[0][2], *([pts[-1][2]] if len(pts) > 1 else [])][:MAX_EVIDENCE]
    return t


def trend_of(lines: list[str], rank: int | None = None, end: int | None = None) -> Trend | None:
    """The memory trend of `rank` (else of the rank with the most points) in lines[:end];
    None when no memory series is in the lines."""
    series, retries, warnings = _gather(lines, end)
    if not series:
        return None
    key = next((k for k in series if rank is not None and k[1] == rank), None)
    if key is None:
        key = max(series, key=lambda k: len(series[k]))
    return _trend(key, list(series[key]), retries, warnings)


MAX_RANKS = 64  # a running job's series read per log part (the sweep's watch of every rank)


def every_rank(lines: list[str], end: int | None = None, most: int = MAX_POINTS) -> list[Trend]:
    """One trend per (series, rank) in lines[:end], by rank, at most MAX_RANKS, of the last
    `most` points each: a running job's every rank, where the one heading for an OOM need not be
    rank 0 (issue 56)."""
    return _ranks(*_gather(lines, end, most))


def _ranks(series: dict, retries: int | None, warnings: list[int]) -> list[Trend]:
    keys = sorted(series, key=lambda k: (k[1] is None, k[1] or 0, k[0]))[:MAX_RANKS]
    return [_trend(k, list(series[k]), retries, warnings) for k in keys]


def _peaks(t: Trend, peaks: list) -> None:
    known = [p for p in peaks if p is not None and p > 0]
    t.max_peak_mib = max(known) if known else None
    t.peak_points = len(known)


def at_oom(t: Trend | None, demand_mib: float | None) -> Trend | None:
    """The trend with the OOM itself as its last point. `demand_mib` is what the failing step
    held and asked for when it ran out (PyTorch's allocated memory in the message plus the
    request): at least what it needed. Where that is SPIKE times the largest peak of the steps
    before (at least MIN_POINTS of them reported one) and their step starts did not rise (flat,
    or a warm-up), the step that ran out needed far more than any before it: a spike, whatever
    the step-start values say (they are read before each step's work, so an OOM inside a step
    never shows in them). A real H100 run (tests/data/gpu/trend_varlen.log): 40 steps of
    128..1024 tokens peaked at most at 8.9 GiB; the batch of 65536 tokens ran out holding 74.8
    GiB and asking for 4 GiB more."""
    if (
        t is None
        or demand_mib is None
        or t.max_peak_mib is None
        or t.peak_points < MIN_POINTS
        or t.kind not in ("flat", "warmup")
        or demand_mib < SPIKE * t.max_peak_mib
    ):
        return t
    return dataclasses.replace(
        t,
        kind="spike",
        why=(
            f"{t.kind} at step starts over {t.points} points, whose steps peaked at "
            f"{t.max_peak_mib:.0f} MiB at most; the step that ran out held and asked for "
            f"{demand_mib:.0f} MiB ({demand_mib / t.max_peak_mib:.1f}x): a peak of its own"
        ),
    )


THRASH_LINES = 3  # consecutive points (or warnings) whose retries rise: the allocator thrashes


def thrashing(t: Trend | None) -> str | None:
    """Why the allocator is thrashing before any OOM, in words, or None: its retries (cudaMalloc
    failed, the cache was flushed, the call retried) rose over the last THRASH_LINES points of
    runbook.instrument's series, or torchtitan warned of allocation retries that many times with
    the count rising. The step after often runs out."""
    if t is None:
        return None
    r = [x for x in t.retries_series if x is not None][-THRASH_LINES:]
    if len(r) == THRASH_LINES and all(a < b for a, b in zip(r, r[1:], strict=False)):
        who = f" of rank {t.rank}" if t.rank is not None else ""
        return (
            f"the allocator's retries rose over the last {THRASH_LINES} memory lines{who} "
            f"({' -> '.join(map(str, r))})"
        )
    w = t.retry_warnings[-THRASH_LINES:]
    if len(w) == THRASH_LINES and w[-1] > w[0]:
        return (
            f"torchtitan warned of CUDA memory allocation retries {len(t.retry_warnings)} "
            f"times, the count rising ({w[0]} -> {w[-1]})"
        )
    return None


@record
class Watch:
    """A running job's worst rank, before any OOM (issue 56): `thrashing` (the allocator's
    retries rising), `near_capacity` (the step's peak within the margin of the card and not
    falling), or `leak` (memory at step starts rising towards the card), with the numbers."""

    kind: str
    rank: int | None
    why: str
    trend: Trend
    projected_step: int | None = None  # a leak: the step it reaches the card (None: unknown)


def watch(trends: list[Trend], margin: float) -> Watch | None:
    """The worst rank of a running job from its ranks' series, or None where nothing is seen
    (which says nothing of health: a job whose telemetry is silent is no healthy job)."""
    found: list[tuple[int, float, Watch]] = []
    for t in trends:
        if why := thrashing(t):
            rise = [x for x in t.retries_series if x is not None]
            found.append((0, -(rise[-1] - rise[0]), Watch("thrashing", t.rank, why, t)))
            continue
        card, peak = t.total_mib, t.peak_mib
        if card and peak and peak >= (1 - margin) * card and peak >= 0.99 * (t.max_peak_mib or 0):
            who = f"rank {t.rank}'s" if t.rank is not None else "the"
            why = (
                f"{who} step peaks at {peak / 1024:.1f} of {card / 1024:.1f} GiB "
                f"({peak / card:.0%}), within the {margin:.0%} margin, and not falling"
            )
            found.append((1, -peak / card, Watch("near_capacity", t.rank, why, t)))
            continue
        if t.kind == "leak":
            at = _reaches(t)
            who = f" of rank {t.rank}" if t.rank is not None else ""
            when = (
                f"it reaches the card ({card / 1024:.1f} GiB) at about step {at}"
                if at is not None and card
                else "when it reaches the card is unknown (the series names no card size)"
            )
            found.append(
                (
                    2,
                    at if at is not None else 1e18,
                    Watch("leak", t.rank, f"{t.why}{who}: {when}", t, at),
                )
            )
    if not found:
        return None
    return min(found, key=lambda x: (x[0], x[1]))[2]


def _reaches(t: Trend) -> int | None:
    """The step at which a rising series reaches the card, on the line through its first and
    last points (its slope per step); None without a card size or steps."""
    steps = [s for s in t.steps if s is not None]
    if not t.total_mib or len(steps) < 2 or len(steps) != len(t.values_mib):
        return None
    rate = (t.values_mib[-1] - t.values_mib[0]) / max(1, steps[-1] - steps[0])
    if rate <= 0:
        return None
    return steps[-1] + max(0, int((t.total_mib - t.values_mib[-1]) / rate + 0.999))


def _median(values: list[float]) -> float:
    """The median (the statistics module costs `runbook diagnose` 3.5 ms to import)."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def classify(values: list[float]) -> tuple[str, str]:
    """The kind of a series of values at step boundaries, and why, in words."""
    n = len(values)
    if n < MIN_POINTS:
        return (
            "unknown",
            f"{words.count(n, 'point')}: too few to tell a trend (at least {MIN_POINTS})",
        )
    med = _median(values)
    if med <= 0:
        return "unknown", "the series is empty of memory"
    spread = (max(values) - min(values)) / med
    if spread <= FLAT:
        return "flat", f"within {spread:.1%} of its median over {n} points"
    body, last = values[:-1], values[-1]
    body_med = _median(body)
    if body_med > 0 and last >= SPIKE * body_med and (max(body) - min(body)) / body_med <= FLAT * 2:
        return "spike", (
            f"flat at ~{body_med:.0f} MiB, then {last:.0f} MiB at the last point "
            f"({last / body_med:.2f}x): a data-dependent peak"
        )
    warm = max(1, n // 4)
    post = values[warm:]
    third = post[-max(2, len(post) // 3) :]
    rise = (post[-1] - post[0]) / max(post[0], 1e-9)
    late = (third[-1] - third[0]) / max(third[0], 1e-9)
    ups = sum(1 for a, b in zip(post, post[1:], strict=False) if b > a * (1 + 0.002))
    if rise >= LEAK_RISE and late >= LATE_RISE and ups >= 0.6 * (len(post) - 1):
        return "leak", (
            f"after the first {words.count(warm, 'point')} it rose {rise:.0%} ({post[0]:.0f} -> {post[-1]:.0f} "
            f"MiB), rising in {ups} of {len(post) - 1} steps and still {late:.1%} over the last "
            f"{len(third)}"
        )
    tail = values[n // 2 :]
    tail_spread = (max(tail) - min(tail)) / max(_median(tail), 1e-9)
    if tail_spread <= FLAT and values[0] < min(tail) * (1 - FLAT):
        return "warmup", (
            f"rose from {values[0]:.0f} to ~{_median(tail):.0f} MiB, then flat "
            f"(within {tail_spread:.1%}) over the last {len(tail)} points: warm-up, not a leak"
        )
    return "unknown", f"{n} points with no clear shape (spread {spread:.0%})"


# -- a series from a file the job wrote: Lightning's DeviceStatsMonitor through its logger -----
# DeviceStatsMonitor logs torch.cuda.memory_stats() at each logged batch's start and end, as
# metrics "DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current" (a logger
# prefix may come first); the CSVLogger writes them to <save_dir>/<name>/version_N/metrics.csv,
# and on a crash Lightning still writes the rows it holds (a real H100:
# tests/data/gpu/lightning_metrics.csv); the TensorBoardLogger to an event file beside it.
# Lightning logs from rank 0 only.
_LIGHTNING_AT = "on_train_batch_start/allocated_bytes.all.current"
_LIGHTNING_PEAK = "on_train_batch_end/allocated_bytes.all.peak"
_LIGHTNING_RETRIES = "on_train_batch_end/num_alloc_retries"
_LIGHTNING_KEYS = frozenset((_LIGHTNING_AT, _LIGHTNING_PEAK, _LIGHTNING_RETRIES))


def from_lightning_csv(text: str, name: str = "metrics.csv") -> Trend | None:
    """The trend of the allocated memory at each logged batch's start, from a CSVLogger's
    metrics.csv (its header line, then rows; a cut file's partial last row is skipped); None
    when the file holds no DeviceStatsMonitor memory columns."""
    import csv

    rows = csv.reader(text.splitlines())
    header = next(rows, None) or []
    col = {_lightning_key(h): i for i, h in enumerate(header)}
    if _LIGHTNING_AT not in col:
        return None
    step_col = col.get("step")
    wanted = [(k, col[k]) for k in _LIGHTNING_KEYS if k in col]
    logged = (
        (
            small_int(row[step_col]) if step_col is not None else None,
            {k: v for k, i in wanted if (v := _number(row[i])) is not None},
        )
        for row in rows
        if len(row) == len(header)
    )
    return _lightning_trend(logged, name)


def _lightning_key(metric: str) -> str:
    """A logged metric's name without the logger's prefix and the callback's name."""
    return metric.rsplit("DeviceStatsMonitor.", 1)[-1]


def lightning_tag(tag: str) -> bool:
    """Whether a logged metric's name is one of DeviceStatsMonitor's the trend reads."""
    return _lightning_key(tag) in _LIGHTNING_KEYS


def from_lightning_scalars(scalars: list, name: str = "events.out.tfevents") -> Trend | None:
    """The same trend from a TensorBoard event file's scalars ((step, tag, value), in file
    order: runbook.evidence.tfevents), where Lightning's TensorBoardLogger put them."""
    by_step: dict[int, dict[str, float]] = {}
    for step, tag, value in scalars:
        key = _lightning_key(tag)
        if key in _LIGHTNING_KEYS and isinstance(value, float) and _plausible(value):
            by_step.setdefault(step, {})[key] = value
    return _lightning_trend(by_step.items(), name)


def _lightning_trend(logged, name: str) -> Trend | None:
    """The trend from DeviceStatsMonitor's logged values: (step, {column: value}) in order."""
    steps: list[int | None] = []
    values: list[float] = []
    peaks: dict[int | None, float] = {}
    retries: dict[int | None, int] = {}
    for step, row in logged:
        if (v := row.get(_LIGHTNING_PEAK)) is not None:
            peaks[step] = v / 2**20
        if (v := row.get(_LIGHTNING_RETRIES)) is not None:
            retries[step] = int(v)
        if (v := row.get(_LIGHTNING_AT)) is not None:
            steps.append(step)
            values.append(v / 2**20)
    if not values:
        return None
    steps, values = steps[-MAX_POINTS:], values[-MAX_POINTS:]  # the points nearest the OOM
    t = Trend(
        series="lightning",
        rank=0,
        points=len(values),
        values_mib=values,
        steps=steps,
        retries_series=[retries.get(s) for s in steps],
        retries=max(retries.values()) if retries else None,
        peak_mib=peaks.get(steps[-1]),
    )
    _peaks(t, list(peaks.values()))
    t.kind, t.why = classify(values)
    ends = sorted({0, len(values) - 1})  # the first point and the last
    t.evidence = [
        f"{name}: step {steps[i]} allocated {values[i]:.1f} MiB (DeviceStatsMonitor, rank 0)"
        for i in ends
    ]
    return t


def _number(text: str) -> float | None:
    try:
        v = float(text) if text and len(text) < 32 else None
    except ValueError:
        return None
    return v if v is not None and _plausible(v) else None


def _plausible(v: float) -> bool:
    """A byte count or a counter: not negative, not NaN or infinite, under 2^60."""
    return 0 <= v < 2**60
