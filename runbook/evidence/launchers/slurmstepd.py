"""slurmstepd's own lines in a job's output: the cgroup OOM killer's count (`Detected 2 oom_kill
events in StepId=123.13.`, Slurm >= 21.08; `Detected 1 oom-kill event(s) in step 802100.batch
cgroup.` before), host RAM; and `*** JOB 12 ON gpu-01 CANCELLED AT <time> [DUE TO TIME LIMIT]
***` (a cancel without a reason is someone's scancel: a consequence)."""

from __future__ import annotations

from runbook import words
from runbook.evidence.events import HOST_OOM, SIGNAL, TIME_LIMIT, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

STEPD_OOM = lazy(
    r"Detected (\d{1,18}(?!\d)) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )(\S+?)\.?(?:\s|$)",
    needs=("Detected", "kill event"),
)
# slurmstepd logging through syslog names its node in its tag ("slurmstepd-midway2-0320: ").
_STEPD_NODE = lazy(r"\bslurmstepd-([A-Za-z0-9][\w.-]*?):\s", needs="slurmstepd-")
CANCELLED = lazy(
    r"\*\*\* (?:JOB|STEP) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))?\s*\*\*\*",
    needs=" CANCELLED AT ",
)


def _oom_kill(ln: Line) -> list[RankEvent] | None:
    if not (m := STEPD_OOM.search(ln.text)):
        return None
    tag = _STEPD_NODE.search(ln.printed)  # the tag is a prefix strip_line drops
    return [
        RankEvent(
            kind=HOST_OOM,
            line=ln.i,
            time=ln.when,
            node=tag.group(1) if tag else None,
            detail=f"{words.count(int(m.group(1)), 'oom-kill event')} in step {m.group(2)}",
        )
    ]


def _cancelled(ln: Line) -> list[RankEvent] | None:
    if not (m := CANCELLED.search(ln.text)):
        return None
    reason = (m.group(4) or "").strip()
    return [
        RankEvent(
            kind=TIME_LIMIT if reason == "TIME LIMIT" else SIGNAL,
            line=ln.i,
            node=m.group(2),
            time=m.group(3),
            detail=f"job {m.group(1)} cancelled" + (f" due to {reason.lower()}" if reason else ""),
            consequence=not reason,
        )
    ]


RECOGNIZER = Recognizer(
    name="slurmstepd",
    gates=("Detected", "CANCELLED"),
    readers=(_oom_kill, _cancelled),
    order=50,
    rejoin=(
        (lazy(r"\*\*\* (?:JOB|STEP) \S+ ON", needs="***"), CANCELLED),
        (lazy(r"\bDetected \d{1,18} oom", needs="Detected"), STEPD_OOM),
    ),
)
