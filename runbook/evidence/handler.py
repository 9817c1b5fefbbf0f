"""Whether a running job asked to be asked: runbook.instrument's `checkpoint-signal` lines (the
job handles a signal as a request to checkpoint now), and the `checkpoint` line that answers a
request. A pure reading of the instrument's lines of the job's log (launcher_log.InstrumentLine).

The signal goes to every process of the job's steps, so a rank that declared no handler would
end of it (Python's default for SIGUSR1 and SIGUSR2): only a signal every rank seen in the log
declared is one runbook may send. The lines are the job's own words: they say what the job's
code installed, for the job's owner's own job, never anything about another job.
"""

from __future__ import annotations

from dataclasses import field

from runbook import words
from runbook.record import record
from runbook.slurm.client import CHECKPOINT_SIGNALS as SIGNALS


@record
class Handler:
    """What the job's ranks declared. `signal` is None unless every rank seen declared the same
    one; `why` then says what is missing, in words."""

    signal: str | None = None
    ranks: list[int] = field(default_factory=list)  # the ranks that declared it
    missing: list[int] = field(default_factory=list)  # ranks seen that declared none
    opted_in: bool = False  # every declaring rank said prevent=yes (RUNBOOK_PREVENT=1)
    hold_s: float | None = None  # how long rank 0 holds its loop after a requested checkpoint
    why: str = ""


def seen_ranks(launch) -> set[int]:
    """Every rank a job's log shows running: its instrument start lines and memory series
    (launcher_log.LaunchReport)."""
    ranks = {m.rank for m in launch.instrument if m.kind == "start" and m.rank is not None}
    return ranks | {t.rank for t in launch.trends if t.rank is not None}


def _hold(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def read(lines, seen_ranks) -> Handler:
    """`lines`: the instrument's lines of the job's log, in order; `seen_ranks`: every rank the
    log shows running (its start and memory lines)."""
    declared: dict[int, dict] = {}
    refused = []
    for m in lines:
        if m.kind != "checkpoint-signal" or m.rank is None:
            continue
        if "signal" in m.fields:
            declared[m.rank] = m.fields
        else:
            refused.append(m.rank)
    seen = sorted(set(seen_ranks) | set(declared))
    h = Handler(ranks=sorted(declared), missing=[r for r in seen if r not in declared])
    if not declared:
        h.why = (
            "no rank declared a checkpoint handler (runbook.instrument's checkpoint_on, or "
            "RUNBOOK_CHECKPOINT_SIGNAL in the job's environment)"
            + (f"; {words.ranks(sorted(set(refused)))} could not install one" if refused else "")
        )
        return h
    signals = {f.get("signal", "") for f in declared.values()}
    if h.missing:
        h.why = (
            f"rank {', '.join(map(str, h.missing))} declared no checkpoint handler: a signal "
            "would end it"
        )
        return h
    if len(signals) != 1 or (sig := signals.pop()) not in SIGNALS:
        h.why = (
            f"the ranks declared the signals {', '.join(sorted(signals)) or 'none'}: runbook sends "
            f"one of {', '.join(SIGNALS)}, the same to every rank"
        )
        return h
    h.signal = sig
    h.opted_in = all(f.get("prevent") == "yes" for f in declared.values())
    first = declared[min(declared)]
    h.hold_s = _hold(first.get("hold"))
    return h


def written(lines, at_least: int | None) -> tuple[int, str] | None:
    """The newest checkpoint the job says it wrote on request at step `at_least` or later
    (runbook.instrument's checkpoint line): (step, path), else None. The path is the job's
    word: it is read back as a checkpoint of the lineage before anything relies on it."""
    found = None
    for m in lines:
        if m.kind != "checkpoint":
            continue
        step = m.fields.get("step", "")
        path = m.line.split(" path=", 1)[1].strip() if " path=" in m.line else ""
        if not step.isdigit() or not path:
            continue
        if at_least is None or int(step) >= at_least:
            found = (int(step), path)
    return found
