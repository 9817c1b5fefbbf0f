"""What a launcher log says happened to a rank: the event record every launcher recognizer
(evidence/launchers/) returns, its kinds, and the small readers they share (stamps, signals,
srun-style task lists). Pure functions of text."""

from __future__ import annotations

import functools
import re
from datetime import datetime

from runbook.evidence.units import small_int
from runbook.lazyre import lazy
from runbook.record import record

# Kinds of docs/design.md §4.1 `first_failure.kind`.
OOM, EXIT, SIGNAL, NCCL_TIMEOUT, HOST_OOM, TIME_LIMIT, UNKNOWN = (
    "oom",
    "exit",
    "signal",
    "nccl_timeout",
    "host_oom",
    "time_limit",
    "unknown",
)


@record
class RankEvent:
    """One failure-related line of a launcher log: whose (rank, node), what, and when."""

    kind: str
    line: int  # 0-based line index in the scanned text
    rank: int | None = None  # global rank (srun task id = rank under srun)
    local_rank: int | None = None
    node: str | None = None
    time: str | None = None  # as printed
    detail: str = ""
    consequence: bool = False  # a survivor's reaction to someone else's failure
    signal: str | None = None
    exit_code: int | None = None
    source: str = "log"  # srun: the launcher's exit notice for a task
    request_mib: float | None = None  # c10: the host allocation the rank was refused

    @property
    def sort_time(self) -> datetime | None:
        return parse_time(self.time)

    def contract(self) -> dict:
        return {"rank": self.rank, "node": self.node, "kind": self.kind, "time": self.time}


# -- timestamps ---------------------------------------------------------------------------------
_TIME_PATTERNS = [
    # [2023-04-14 13:11:27,879]  2024-11-20 14:37:16  2021-08-17T15:09:00
    lazy(r"(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)"),
    # glog, as NCCL / c10 print it: [E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]; c10
    # leaves the month unpadded: [E321 02:07:08.408271257 ...] is March 21
    lazy(r"\[([EWIF]\d{3,4} \d\d:\d\d:\d\d)(?:\.\d{1,9})?\s"),
]


def line_time(line: str) -> str | None:
    for pattern in _TIME_PATTERNS:
        m = pattern.search(line)
        if m:
            return m.group(1)
    return None


_ISO_TIME = lazy(r"(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_GLOG_TIME = lazy(r"[EWIF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)")


@functools.lru_cache(maxsize=4096)  # a pure function of the text; a log repeats its stamps
def parse_time(text: str | None) -> datetime | None:
    """The stamps line_time finds, as datetimes (glog has no year: 1900; order within one log is
    what matters). Parsed by regex: strptime costs tens of microseconds a call."""
    if not text:
        return None
    m = _ISO_TIME.fullmatch(text)
    if m:
        y, mo, d, h, mi, s, frac = m.groups()
        micro = int((frac or "0")[:6].ljust(6, "0"))
        try:
            return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro)
        except ValueError:
            return None
    m = _GLOG_TIME.fullmatch(text)
    if m:
        mo, d, h, mi, s = (int(x) for x in m.groups())
        try:
            return datetime(1900, mo, d, h, mi, s)
        except ValueError:
            return None
    return None


# -- signals and exit codes ---------------------------------------------------------------------
SIGNALS = {
    1: "SIGHUP",
    2: "SIGINT",
    6: "SIGABRT",
    7: "SIGBUS",
    9: "SIGKILL",
    11: "SIGSEGV",
    15: "SIGTERM",
}


def signal_name(signum: int) -> str:
    return SIGNALS.get(signum, f"signal {signum}")


def coded_exit(
    line: int,
    rank: int,
    code: int,
    when: str | None,
    source: str,
    detail: str,
    *,
    local: bool = False,
    reactions: tuple[str, ...] = (),
) -> RankEvent:
    """A launcher's word that `rank` exited with `code`; a negative code is the signal that
    killed it. Killed by one of `reactions`, the rank was torn down after another's failure."""
    sig = signal_name(-code) if code < 0 else None
    return RankEvent(
        kind=SIGNAL if sig else EXIT,
        line=line,
        rank=rank,
        local_rank=rank if local else None,
        time=when,
        exit_code=code,
        signal=sig,
        detail=detail,
        consequence=sig in reactions,
        source=source,
    )


# No job has more ranks than this (the largest runs are ~100k GPUs): ranks from a log beyond the
# job's own size, or beyond this when the size is unknown, are not ranks of this job.
MAX_RANKS = 1 << 17


def task_ranks(spec: str, limit: int = MAX_RANKS) -> list[int]:
    """srun's task list ("0-3,5,7-9") as ranks, each once, at most `limit` of them: a list a log
    line can make as long as it likes must not become millions of integers."""
    out: dict[int, None] = {}
    for part in spec.replace(" ", "").split(",")[:limit]:
        a, _, b = part.partition("-")
        lo, hi = small_int(a), small_int(b) if b else small_int(a)
        if lo is None or hi is None or hi < lo or lo >= limit:
            continue
        for r in range(lo, min(hi, limit - 1) + 1):
            out[r] = None
            if len(out) >= limit:
                return list(out)
    return list(out)


def next_lines(lines: list[str], i: int, pattern, reach: int = 2) -> re.Match | None:
    """The first match of `pattern` on the `reach` lines after line `i`: a launcher block's
    second line (Hydra's "KILLED BY SIGNAL", Open MPI's "Exit code")."""
    for k in range(i + 1, min(i + 1 + reach, len(lines))):
        if hit := pattern.search(lines[k]):
            return hit
    return None
