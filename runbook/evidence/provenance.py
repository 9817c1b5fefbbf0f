"""Which lines of a log belong to this run of the job.

A log opened for appending (`--open-mode=append`: a fixed `--output` several submissions write,
or a requeued job's, whose every run then adds to the same file) holds earlier runs' lines: an
earlier job's OOM is no evidence for this one. A line is this run's only when the log shows it:
after a time stamp at or past this run's start, or after Slurm's own "DUE TO JOB REQUEUE" notice
for this job (the run that follows the last requeue is the current one). Lines before that are
set aside, said in the report; an OOM among them is no verdict. A pure function of the lines.
"""

from __future__ import annotations

import re
from dataclasses import field
from datetime import datetime, timedelta

from runbook.evidence.launcher_log import parse_time
from runbook.record import record

# The node's and the controller's clocks, and a run's first line printed a little before
# slurmctld records it started: a stamp this far before the start is still this run's. (A
# logger stamping in another time zone than slurmctld's reads as hours off: in a shared log its
# lines are then set aside, an unknown, never taken as this run's.)
SKEW = timedelta(seconds=120)

# A stamp that opens the line (after an srun label, a rank or host prefix, a bracket): a date
# further into a line is the line's content (a data snapshot's name), not when it was written.
_LEADING = re.compile(
    r"^(?:\s*(?:\d{1,6}:|\[[^\]]{0,40}\]:?|[\w.-]{1,64}:)\s*){0,2}\[?"
    r"(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?|[EWIF]\d{3,4} \d\d:\d\d:\d\d)"
)
_SLURM_END = re.compile(
    r"\*{3}\s*(?:JOB|STEP)\s+(\d{1,18})(?:\.\w+)?\s+ON\s+\S+\s+CANCELLED\s+AT\s+"
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\s+DUE TO JOB REQUEUE)?"
)


@record
class Attributed:
    kept: list[tuple[int, str]] = field(default_factory=list)
    earlier: int = 0  # lines shown to be an earlier run's
    unproven: int = 0  # lines the log does not show to be this run's


def _stamp(text: str, start: datetime) -> datetime | None:
    m = _LEADING.match(text)
    t = parse_time(m.group(1)) if m else None
    if t is not None and t.year == 1900:  # glog has no year: the one nearest the start
        t = t.replace(year=start.year)
        if t > start + timedelta(days=1):
            t = t.replace(year=start.year - 1)
    return t


def this_run(
    lines: list[tuple[int, str]], start: datetime | None, raw_id: str, *, shared: bool
) -> Attributed:
    """The lines of one log that are this run's. A log not known to be shared is all this run's:
    a stamp before the start does not make it shared, since a job may print old text (a replayed
    log) and its logger may stamp in another time zone than slurmctld's (UTC on a UTC+8 site)."""
    out = Attributed()
    if not shared:
        out.kept = list(lines)
        return out
    # Each line's mark: "old" (stamped before the start, or Slurm ended an earlier run
    # there), "requeue" (Slurm requeued this job there: the next run follows), "new" (stamped
    # at or past the start).
    marks: list[str | None] = []
    for _, text in lines:
        mark = None
        end = _SLURM_END.search(text)
        if end and end.group(1) != raw_id:  # Slurm ended another job there: its lines above
            mark = "old"
        elif end and end.group(3):  # this job's requeue: an earlier run of it ended there
            mark = "requeue"
        elif start is not None and (t := _stamp(text, start)) is not None:
            mark = "old" if t < start - SKEW else "new"
        marks.append(mark)
    last_old = max((i for i, m in enumerate(marks) if m in ("old", "requeue")), default=-1)
    mine = last_old >= 0 and marks[last_old] == "requeue"  # the run after the last requeue
    for i, (n, text) in enumerate(lines):
        if i <= last_old:
            out.earlier += 1
            continue
        mine = mine or marks[i] == "new"
        if mine:
            out.kept.append((n, text))
        else:
            out.unproven += 1
    return out
