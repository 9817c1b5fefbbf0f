"""Launcher and job logs: every rank's terminal event, and the first failure (the cause).

Pure functions of text. What is read:
- torchrun / elastic `ChildFailedError` reports (Root Cause and Failures entries, `stderr: `
  prefixed, several agents' reports in one file) and the older one-line `failed (exitcode: N)`;
- OOM messages of every format (oom_message.py), with their `[rankN]:` prefix;
- `[rankN]:` tracebacks ending in an exception line;
- NCCL watchdog timeouts (1.x `[E ProcessGroupNCCL.cpp:N] [Rank N]`, 2.x and 2.4+ `[rankN]:[E...]`)
  and `timed out in blocking wait`; SIGABRT watchdog aborts (exitcode -6 / Signal 6);
- DeepSpeed's launcher (`exits with return code = -9`, `Killing subprocess`);
- srun (`error: node: task N: ...`, `tasks a-b,c: ...`), slurmstepd oom-kill (host RAM, old and new
  wording) and `CANCELLED AT ... DUE TO TIME LIMIT`;
- Ray's memory monitor killing workers (host RAM; the node by its IP).
- Lightning's subprocess launcher (`[rank: N] Child process with PID P terminated with code C`);
- Composer's launcher (`Rank N crashed with exit code C.`, `Global rank N (PID P) exited with
  code C`, its teardown kills, and each crashed rank's captured STDERR block, whose lines are that
  rank's).

The first failure is the cause, not the loudest line: NCCL timeouts, watchdog aborts, launcher kills
and srun's `Terminated` on the survivors are consequences. Among causes, an accelerator OOM wins,
then a host-RAM OOM, then any other failure; within a kind, the earliest timestamp (across agents'
reports, not the first block), else the first in the log. When only consequences are there, the
rank that never reported (missing from the timeout list, or from srun's Terminated ranges) is the
suspect.
"""

from __future__ import annotations

import functools
import re
from dataclasses import field
from datetime import datetime
from typing import Any

from runbook.evidence import oom_message, phase, trend
from runbook.evidence.framing import unwrap
from runbook.evidence.oom_message import log_lines, strip_line
from runbook.evidence.units import MAX_DIGITS, human_mib, small_int, to_mib
from runbook.lazyre import lazy
from runbook.record import record
from runbook.slurm.hostlist import expand

# Kinds of DESIGN §4.1 `first_failure.kind`.
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


@record
class FirstFailure:
    """The rank or ranks that failed first, and the one sentence that says why them."""

    ranks: list[int]
    node: str | None
    time: str | None
    kind: str
    why: str  # one sentence: which evidence made this the cause
    signal: str | None = None
    request_mib: float | None = None  # the one host allocation a rank was refused (c10)

    def contract(self) -> dict:
        return {"ranks": self.ranks, "node": self.node, "time": self.time, "kind": self.kind}


@record
class InstrumentLine:
    """A line printed by runbook.instrument inside the job."""

    kind: str  # start | oom-dump | peak
    rank: int | None
    fields: dict[str, str]
    line: str


_INSTRUMENT = lazy(
    r"RUNBOOK_INSTRUMENT (start|oom-dump|peak) rank=(\S+)(.*)$", needs="RUNBOOK_INSTRUMENT"
)


def _marker_rank(lines: list[str]) -> int | None:
    """The rank of a log whose lines carry none, from runbook.instrument's own lines in it: every
    rank prints its start line, so a log holding one rank's markers only is that rank's (a
    per-rank file named without %t, or a launcher that lets one rank's output through). A log with
    several ranks' markers says nothing: its unlabelled lines could be anyone's."""
    ranks = {m.rank for m in instrument_lines(ln for ln in lines if "RUNBOOK_INSTRUMENT" in ln)}
    return ranks.pop() if len(ranks) == 1 else None


# How far above its traceback's message runbook.instrument's oom-dump marker may stand (a deep
# traceback, other ranks' lines interleaved).
DUMP_MARKER_REACH = 200


def _dump_rank(raw: list[str], at: int) -> int | None:
    """The rank of an unlabelled OOM message at line `at`, from runbook.instrument's
    `oom-dump rank=N` marker: the failing process prints it just before its exception
    propagates. One rank's dump markers in the whole log: that rank; several: the nearest marker
    above the message, within DUMP_MARKER_REACH lines; none: unknown."""
    dumps = [
        (i, m.rank)
        for i, line in enumerate(raw)
        if "oom-dump" in line
        for m in instrument_lines([line])
        if m.kind == "oom-dump" and m.rank is not None
    ]
    if len({r for _, r in dumps}) == 1:
        return dumps[0][1]
    above = [r for i, r in dumps if at - DUMP_MARKER_REACH <= i <= at]
    return above[-1] if above else None


def instrument_lines(lines) -> list[InstrumentLine]:
    out = []
    for line in lines:
        if m := _INSTRUMENT.search(line):
            rank = small_int(m.group(2))
            fields = dict(re.findall(r"(\w+)=(\S*)", m.group(3)))
            out.append(InstrumentLine(m.group(1), rank, fields, line.strip()))
    return out


@record
class LaunchReport:
    """Everything one scan of the launcher logs found, in log order."""

    events: list[RankEvent] = field(default_factory=list)
    instrument: list[InstrumentLine] = field(default_factory=list)
    tails: list[str] = field(default_factory=list)  # the logs' last lines, when pulled
    ooms: list[oom_message.OomMessage] = field(default_factory=list)
    first_failure: FirstFailure | None = None
    failing_ranks: list[int] = field(default_factory=list)
    timed_out_ranks: list[int] = field(default_factory=list)
    suspect_ranks: list[int] = field(default_factory=list)
    # What the scan set aside, in words: ranks beyond the job's size, lists cut at the cap.
    notes: list[str] = field(default_factory=list)
    # Why what was read may not be all there is (no log found, an excerpt cut at the cap): with
    # any of these, finding no OOM proves nothing, and the verdict is unknown, not not_oom.
    incomplete: list[str] = field(default_factory=list)
    # GPU hardware-error text in the job's own output (a CUDA ECC error, kernel Xid lines an
    # epilog copied in): flagged for a person and for the node check, never proof of a fault.
    hardware_lines: list[str] = field(default_factory=list)
    # When and where each OOM happened (evidence.phase), by its index in `ooms` (the first
    # PHASES_PER_PART of each log), and the memory series of each log (evidence.trend).
    phases: dict[int, Any] = field(default_factory=dict)
    trends: list[Any] = field(default_factory=list)

    def phase_of(self, msg: oom_message.OomMessage | None):
        """The phase of one of this scan's OOM messages (None: not worked out)."""
        for i, m in enumerate(self.ooms):
            if m is msg:
                return self.phases.get(i)
        return None

    def trend_for(self, rank: int | None):
        """The memory trend of `rank`'s log (else the longest series read), or None."""
        if not self.trends:
            return None
        own = [t for t in self.trends if rank is not None and t.rank == rank]
        return max(own or self.trends, key=lambda t: t.points)

    @property
    def first_oom(self) -> oom_message.OomMessage | None:
        """The OOM message of the first failure when it is an OOM, else the first one in the log."""
        if not self.ooms:
            return None
        ff = self.first_failure
        if ff and ff.kind == OOM:
            for m in self.ooms:
                if m.rank is not None and m.rank in ff.ranks:
                    return m
        return self.ooms[0]

    def terminal_events(self) -> list[RankEvent]:
        """One event per rank: its cause-most event (an OOM over the watchdog that followed it)."""
        best: dict[int, RankEvent] = {}
        for e in self.events:
            if e.rank is None:
                continue
            cur = best.get(e.rank)
            if cur is None or _priority(e) < _priority(cur):
                best[e.rank] = e
        return [best[r] for r in sorted(best)]


# -- timestamps ---------------------------------------------------------------------------------
_TIME_PATTERNS = [
    # [2023-04-14 13:11:27,879]  2024-11-20 14:37:16  2021-08-17T15:09:00
    (lazy(r"(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?)"), None),
    # glog, as NCCL / c10 print it: [E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]; c10
    # leaves the month unpadded: [E321 02:07:08.408271257 ...] is March 21
    (lazy(r"\[([EWIF]\d{3,4} \d\d:\d\d:\d\d)(?:\.\d{1,9})?\s"), None),
]


def line_time(line: str) -> str | None:
    for pattern, _ in _TIME_PATTERNS:
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


# -- line patterns ------------------------------------------------------------------------------
_ELASTIC_ENTRY = lazy(r"^\s*\[(\d{1,18}(?!\d))\]:\s*$", needs="]:")
_ELASTIC_NAMES = r"(time|host|rank|exitcode|error_file|traceback)"
_ELASTIC_FIELD = lazy(r"^\s*" + _ELASTIC_NAMES + r"\s*:\s*(.*?)\s*$")
_ELASTIC_RANK = lazy(r"(\d{1,18}(?!\d))\s*\(local[_ ]rank:\s*(\d{1,18}(?!\d))\)", needs="rank:")
# A summary copied from a rendered page loses its layout: field names alone on their lines, their
# values on the lines after them, in order ("time" / "host" / "2023-09-14 01:45:50" / "node-1").
_ELASTIC_BARE_FIELD = lazy(r"^\s*" + _ELASTIC_NAMES + r"\s*:?\s*$")
_ELASTIC_EXIT = lazy(r"(-?\d{1,18}(?!\d))\s*\(pid:\s*(\d{1,18}(?!\d))\)", needs="(pid:")
_ELASTIC_SIGNAL = lazy(r"Signal\s+(\d{1,18}(?!\d))\s+\((SIG\w+)\)", needs="Signal")
_ELASTIC_ROOT = lazy(r"Root Cause \(first observed failure\)", needs="Root Cause")
_ELASTIC_RULE = lazy(r"^\s*(?:={10,}|-{10,})\s*$")
_ELASTIC_ONE_LINE = lazy(
    r"failed \(exitcode: (-?\d{1,18}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)(?: of binary)?",
    needs="failed (exitcode: ",
)
_WATCHDOG = lazy(
    r"\bRank (\d{1,18}(?!\d))\]\s*(?:Watchdog caught collective operation timeout|Work WorkNCCL.*timed out)"
    r".*?(?:SeqNum=(\d{1,18}(?!\d)))?(?:.*?OpType=(\w+))?",
    needs="Rank ",
)
_EXCEPTION_LINE = lazy(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::|$)")
_CONSEQUENCE_TEXT = lazy(
    r"NCCL communicator was aborted|Watchdog|watchdog|timed out|Connection reset|"
    r"Socket Timeout|Broken pipe|ChildFailedError|ProcessGroupNCCL is aborted|"
    r"Connection closed by peer|recvValue failed|The server socket has failed",
)
_DS_RETURN = lazy(
    r"sigkill_handler\].*exits with return code = (-?\d{1,18}(?!\d))", needs="sigkill_handler]"
)
_DS_LOCAL_RANK = lazy(r"--local_rank=(\d{1,18}(?!\d))", needs="--local_rank=")
_KILLING = lazy(r"Killing subprocess (\d{1,18}(?!\d))", needs="Killing subprocess")
# srun's per-node verdict. The shape "error: NODE: task(s) LIST: WHAT" is srun's own, so a line
# whose "srun" tag was cut in the paste ("run: error: nid00018: tasks 0-23: Killed") still reads.
_SRUN = lazy(
    r"(?:^|\s|\bs?run: )error: (?P<node>[^\s:]+): tasks? (?P<tasks>\d[\d,\- ]*): (?P<what>.*)$",
    needs="error: ",
)
# slurmstepd logging through syslog names its node in its tag ("slurmstepd-midway2-0320: ").
_STEPD_NODE = lazy(r"\bslurmstepd-([A-Za-z0-9][\w.-]*?):\s", needs="slurmstepd-")
# MPICH's Hydra (mpiexec) prints a block per process that ended badly: "=   RANK 6 PID 2447372
# RUNNING AT node0009" (RANK is absent in some versions), then "=   KILLED BY SIGNAL: 9 (Killed)"
# or "=   EXIT CODE: 9".
_HYDRA_AT = lazy(
    r"^[=\s]*(?:RANK (\d{1,18}(?!\d)) )?PID (\d{1,18}(?!\d)) RUNNING AT (\S+)", needs="RUNNING AT"
)
_HYDRA_END = lazy(
    r"^[=\s]*(?:KILLED BY SIGNAL: (\d{1,3})(?: \(([^)]*)\))?|EXIT CODE: (-?\d{1,18}(?!\d)))",
)  # no gate: it only runs on the two lines after a RUNNING AT line
# Open MPI's summary of the first process to exit non-zero: "Process name: [[6341,1],0]" (4.x:
# [[job,step],rank]; 5.x: [prterun-host-123@1,0]) and "Exit code:    1" on the next line.
_OMPI_PROCESS = lazy(
    r"Process name:\s*\[(?:\[[^\]]*\]|[^\[\],\s]+),(\d{1,18}(?!\d))\]", needs="Process name:"
)
_OMPI_EXIT = lazy(r"Exit code:\s*(-?\d{1,18}(?!\d))", needs="Exit code:")
# How a launcher log's lines start, for telling a terminal's cut from a new line: a line that
# starts like this is never a cut line's tail. Sure starts: a stamp, a bracketed prefix, an
# indented traceback line, a launcher's or a logger's tag, an upper-case tag ("WARNING:").
_LINE_SURE = lazy(
    r"^(?:\x1b\[[0-9;]*m|[ \t]*>[ \t]?)*(?:\s|\[|<\d|\d{4}-\d\d-\d\d|\d\d?:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d |[EWIF]\d{3,4} "
    r"|(?:srun|slurmstepd[\w-]*|sbatch|mpirun|mpiexec|prterun|torchrun|Traceback|NCCL"
    r"|RUNBOOK_INSTRUMENT)\b"
    r"|[A-Z][A-Z_]+:|[\w.-]+:\s*\[)"
)
# Open MPI's text for a process that ended without MPI_Finalize, its node often on the next line:
# "mpirun has exited due to process rank 1 with PID 4017 on\nnode clsockeyev1 exiting improperly."
_OMPI_IMPROPER = lazy(
    r"\b(?:mpirun|mpiexec|orterun|prterun) has exited due to process rank (\d{1,18}(?!\d)) with "
    r"PID (\d{1,18}(?!\d)) on(?:\s+node (\S+))?",
    needs="has exited due to process rank",
)
_OMPI_IMPROPER_NODE = lazy(r"^\s*node (\S+) exiting improperly", needs="exiting improperly")
# torch.multiprocessing.spawn (mp.spawn) names the process by its spawn index, which is the rank
# within the node (the global rank on one node): "-- Process 0 terminated with the following
# error:" heads that process's own traceback; "process 0 terminated with exit code 1" / "...
# with signal SIGKILL" is ProcessExitedException's message.
_SPAWN_RAISED = lazy(
    r"^\s*-- Process (\d{1,18}(?!\d)) terminated with the following error", needs="terminated with"
)
_SPAWN_EXITED = lazy(
    r"\bprocess (\d{1,18}(?!\d)) terminated with (?:exit code (-?\d{1,18}(?!\d))|signal (SIG[A-Z]+))",
    needs="terminated with",
)
# Composer's launcher (`composer train.py`, logger composer.cli.launcher) polls its ranks and logs
# the first it finds exited non-zero: "Rank 2 crashed with exit code -7." (a negative code is the
# signal). Tearing down, it logs "Killing global rank 1 (PID 123) with SIGTERM" for the others,
# then prints "Global rank 2 (PID 456) exited with code -7" for each rank that was not killed by
# it (not -9 or -15), each followed by that rank's captured output between "----------Begin global
# rank 2 STDERR----------" and "----------End global rank 2 STDERR----------"; its last line
# repeats "Global rank N (PID P) exited with code C" for the lowest rank that exited non-zero.
_COMPOSER_CRASHED = lazy(
    r"\bRank (\d{1,18}(?!\d)) crashed with exit code (-?\d{1,18}(?!\d))",
    needs="crashed with exit code",
)
_COMPOSER_EXITED = lazy(
    r"\bGlobal rank (\d{1,18}(?!\d)) \(PID (\d{1,18}(?!\d))\) exited with code (-?\d{1,18}(?!\d))",
    needs="exited with code",
)
_COMPOSER_KILLING = lazy(
    r"\bKilling global rank (\d{1,18}(?!\d)) \(PID (\d{1,18}(?!\d))\) with (SIG[A-Z]+)",
    needs="Killing global rank",
)
_COMPOSER_BLOCK = lazy(
    r"^\s*-{5,}(Begin|End) global rank (\d{1,18}(?!\d)) (?:STDOUT|STDERR)-{5,}\s*$",
    needs="global rank",
)
# Lightning's subprocess launcher (Trainer/Fabric with strategy ddp) watches the processes it
# started and, on the first it finds exited non-zero, logs "[rank: 1] Child process with PID 2977
# terminated with code 4. Forcefully terminating all other processes to avoid zombies" and kills
# the rest, itself included (the shell's "Killed" after it is that teardown). The rank is the
# child's index + 1: its local rank on the node (rank 0 is the launching process itself).
_LIGHTNING_CHILD = lazy(
    r"\[rank: (\d{1,9})\] Child process with PID (\d{1,18}(?!\d)) terminated with code "
    r"(-?\d{1,18}(?!\d))",
    needs="Child process with PID",
)
# Open MPI (mpirun/mpiexec; prterun in 5.x) names the first process it saw die by a signal:
# "mpirun noticed that process rank 18596 with PID 1035144 on node b3168 exited on signal 9
# (Killed)." The rank is the MPI rank, the node the host it ran on.
_OMPI_NOTICED = lazy(
    r"\b(?:mpirun|mpiexec|orterun|prterun) noticed that process rank (\d{1,18}(?!\d)) with PID "
    r"(\d{1,18}(?!\d)) on node (\S+?) exited on signal (\d{1,3})(?: \(([^)]*)\))?",
    needs="noticed that process rank",
)
# New wording (Slurm >= 21.08): "Detected 2 oom_kill events in StepId=123.13."
# Old: "Detected 1 oom-kill event(s) in step 802100.batch cgroup."
_STEPD_OOM = lazy(
    r"Detected (\d{1,18}(?!\d)) oom[-_]kill events?(?:\(s\))? in (?:StepId=|step )(\S+?)\.?(?:\s|$)",
    needs=("Detected", "kill event"),
)
# Ray's memory monitor kills a worker when the node's host memory passes its threshold: the
# task's error or an actor's exit detail ("Task was killed due to the node running low on
# memory."), the detail line ("Memory on the node (IP: ip, ID: ...) where the task ... was running
# was A / B"), the raylet's summary ("N Workers (tasks / actors) killed due to memory pressure
# (OOM) ... at node (ID: ..., IP: ip)"), and Ray 2.0's "System memory low at node with IP ip".
# Host RAM, not the GPU. The node is named by IP, often on the next line of a wrapped terminal.
_RAY_HOST_OOM = lazy(
    r"node running low on memory|Memory on the node \(IP|killed due to memory pressure \(OOM\)"
    r"|System memory low at node",
    needs="emory",
)
# c10's CPU allocator refusing host memory: "DefaultCPUAllocator: can't allocate memory: you tried
# to allocate N bytes. Error code 12 (Cannot allocate memory)" (posix_memalign's ENOMEM), and the
# Windows wording "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes". Host RAM,
# raised as an exception by the rank that asked, so the rank is the traceback's.
_CPU_ALLOC = lazy(
    r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate "
    r"(\d{1,18}(?!\d)) bytes",
    needs="DefaultCPUAllocator",
)
_RAY_IP = lazy(r"(?:\bIP:? |\bip=)([0-9A-Fa-f][0-9A-Fa-f.:]*[0-9A-Fa-f])")
_CANCELLED = lazy(
    r"\*\*\* (?:JOB|STEP) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))?\s*\*\*\*",
    needs=" CANCELLED AT ",
)
_HOST_PREFIX = lazy(r"^([A-Za-z][\w.-]*):\s")

_SIGNALS = {
    1: "SIGHUP",
    2: "SIGINT",
    6: "SIGABRT",
    7: "SIGBUS",
    9: "SIGKILL",
    11: "SIGSEGV",
    15: "SIGTERM",
}


def _signal_name(signum: int) -> str:
    return _SIGNALS.get(signum, f"signal {signum}")


def _coded_exit(
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
    sig = _signal_name(-code) if code < 0 else None
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


def _block_ranks(raw: list[str]) -> list[int | None]:
    """For each line, the rank whose captured output Composer's launcher is printing there (its
    Begin/End global rank N STDERR block), else None."""
    out: list[int | None] = [None] * len(raw)
    cur = None
    for i, line in enumerate(raw):
        if m := _COMPOSER_BLOCK.match(line):
            cur = int(m.group(2)) if m.group(1) == "Begin" else None
        else:
            out[i] = cur
    return out


_TOO_LONG = lazy(rf"\d{{{MAX_DIGITS + 1}}}")

# No job has more ranks than this (the largest runs are ~100k GPUs): ranks from a log beyond the
# job's own size, or beyond this when the size is unknown, are not ranks of this job.
MAX_RANKS = 1 << 17


def _ranks(spec: str, limit: int = MAX_RANKS) -> list[int]:
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


def _priority(e: RankEvent) -> int:
    order = {OOM: 0, HOST_OOM: 1, EXIT: 2, SIGNAL: 3, TIME_LIMIT: 4, NCCL_TIMEOUT: 5, UNKNOWN: 6}
    return order.get(e.kind, 6) + (10 if e.consequence else 0)


# -- the scan -----------------------------------------------------------------------------------
def _elastic_entries(stripped: list[str], raw: list[str]) -> list[RankEvent]:
    events: list[RankEvent] = []
    cur: dict | None = None
    root_next = False

    def close():
        nonlocal cur
        if cur and cur.get("exitcode") is not None:
            events.append(_elastic_event(cur))
        cur = None

    for i, text in enumerate(stripped):
        if _ELASTIC_ROOT.search(text):
            close()
            root_next = True
            continue
        if _ELASTIC_ENTRY.match(text):
            close()
            cur = {"line": i, "root": root_next}
            root_next = False
            continue
        m = _ELASTIC_FIELD.match(text)
        if m:
            if cur is None:  # an excerpt that starts inside an entry
                cur = {"line": i, "root": False}
            cur[m.group(1)] = m.group(2)
            continue
        if _ELASTIC_RULE.match(text) or text.strip().startswith("Failures:"):
            close()
            continue
        if cur is not None:
            _loose_field(cur, text)
    close()
    return events


def _loose_field(entry: dict, text: str) -> None:
    """A line of an entry that is not `name : value`: a field name alone (its value comes on a
    later line), a value for the oldest name still waiting, or fields glued on one line
    ("rank2 (local rank: 2)exitcode: -9 (pid: 36071)"), each taken only where still unset."""
    if m := _ELASTIC_BARE_FIELD.match(text):
        entry.setdefault("waiting", []).append(m.group(1))
        return
    glued = False
    if _ELASTIC_RANK.search(text):
        entry.setdefault("rank", text)
        glued = True
    if "exitcode" in text and _ELASTIC_EXIT.search(text):
        entry.setdefault("exitcode", text)
        glued = True
    waiting = entry.get("waiting")
    if not glued and waiting and text.strip():
        entry.setdefault(waiting.pop(0), text.strip())


def _elastic_event(entry: dict) -> RankEvent:
    rank = local = None
    if m := _ELASTIC_RANK.search(entry.get("rank", "")):
        rank, local = int(m.group(1)), int(m.group(2))
    code = None
    if m := _ELASTIC_EXIT.search(entry.get("exitcode", "")):
        code = int(m.group(1))
    sig = None
    if m := _ELASTIC_SIGNAL.search(entry.get("traceback", "")):
        sig = m.group(2)
    elif code is not None and code < 0:
        sig = _SIGNALS.get(-code, f"signal {-code}")
    # A rank killed by SIGABRT is the NCCL watchdog tearing it down (a consequence) unless nothing
    # else failed; SIGKILL is usually the kernel's OOM killer or the launcher.
    kind = SIGNAL if sig else EXIT
    host = entry.get("host")
    return RankEvent(
        kind=kind,
        line=entry["line"],
        rank=rank,
        local_rank=local,
        node=host if host and host != "<N/A>" else None,
        time=entry.get("time"),
        detail=("root cause " if entry.get("root") else "")
        + f"exitcode {code}"
        + (f" ({sig})" if sig else ""),
        consequence=sig == "SIGABRT",
        signal=sig,
        exit_code=code,
    )


def scan(
    text: str,
    *,
    nodes: list[str] | str | None = None,
    tasks_per_node: list[int] | int | None = None,
    world_size: int | None = None,
) -> LaunchReport:
    """Scan a launcher/job log. `nodes` (list or Slurm hostlist), `tasks_per_node` and
    `world_size` come from Slurm when known; they map ranks to nodes when the log does not say and
    name the ranks that never reported."""
    return scan_parts(
        [(text, None)], nodes=nodes, tasks_per_node=tasks_per_node, world_size=world_size
    )


# Lines a launcher prints whole, each with text that shows where one starts: a line that starts
# one but does not read whole was cut by a terminal or re-flowed by an editor (a single cut, which
# unwrap cannot tell from a long line): it is read again with the next line joined, as printed or
# with the space an editor dropped, and kept joined only if it then reads whole.
_REJOIN = [
    (lazy(r"\*\*\* (?:JOB|STEP) \S+ ON", needs="***"), _CANCELLED),
    (lazy(r"\bs?run: error: ", needs="run: error: "), _SRUN),
    (lazy(r"noticed that process", needs="noticed that process"), _OMPI_NOTICED),
    (lazy(r"\bprocess \d{1,18} terminated\b", needs=" terminated"), _SPAWN_EXITED),
    (lazy(r"\bDetected \d{1,18} oom", needs="Detected"), _STEPD_OOM),
    (lazy(r"\bRank \d{1,18}\]", needs="Rank "), _WATCHDOG),
    (lazy(r"failed \(exitcode: ", needs="failed (exitcode: "), _ELASTIC_ONE_LINE),
    (lazy(r"sigkill_handler\]", needs="sigkill_handler]"), _DS_RETURN),
    (lazy(r"Workers \(tasks / actors\) killed", needs="Workers (tasks"), _RAY_HOST_OOM),
]
REJOIN_LINES = 3  # an editor re-flows a 200-column line onto three or four


def _rejoin(lines: list[str]) -> list[str]:
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        ln, i = lines[i], i + 1
        hit = next(((a, p) for a, p in _REJOIN if a.search(ln) and not p.search(ln)), None)
        if hit is not None:
            ln, used = _read_whole(ln, lines[i : i + REJOIN_LINES], *hit)
            i += used
        out.append(ln)
    return out


def _read_whole(ln: str, after: list[str], start, whole) -> tuple[str, int]:
    """`ln` joined with the fewest of the lines `after` it that make it read whole by `whole`
    (as a terminal cut it, or as an editor re-flowed it), and how many it took: `ln` and 0 where
    none do. A tail may look like a line of its own (an editor breaks before a timestamp); a
    line of the same kind (`start`) is not a tail."""
    for k, nxt in enumerate(after, 1):
        if not nxt.strip() or start.search(nxt):
            break
        tails = after[:k]
        cut = ln.rstrip("\r") + "".join(t.rstrip("\r") for t in tails)
        flowed = " ".join([ln.rstrip(), *(t.strip() for t in tails)])
        for joined in (cut, flowed):
            if whole.search(joined):
                return joined, k
    return ln, 0


def scan_parts(
    parts: list[tuple[str, int | None]],
    *,
    nodes: list[str] | str | None = None,
    tasks_per_node: list[int] | int | None = None,
    world_size: int | None = None,
) -> LaunchReport:
    """Scan several logs of one job as one: per-rank files (`--output=%j_%t.out`) carry no rank
    prefix, so each part comes with the rank its file name gives (or None)."""
    if isinstance(nodes, str):
        nodes = expand(nodes)
    report = LaunchReport()
    offset = 0
    for text, rank in parts:
        # A terminal's cut lines are joined again (an srun or watchdog line cut at 80 columns
        # loses its task list or its time otherwise). An editor's re-flow is undone only for a
        # launcher's own lines (_rejoin): a traceback's or a table's lines cannot be told from
        # a re-flowed tail.
        raw = _rejoin(unwrap(log_lines(text or ""), _LINE_SURE.search, reach=0))
        if rank is None:
            rank = _marker_rank(raw)
        _collect(report, raw, set(nodes or []), rank, offset)
        offset += len(raw)
    if any(_TOO_LONG.search(text or "") for text, _ in parts):
        report.notes.append(
            f"number too long: digit runs over {MAX_DIGITS} digits were not read "
            "as ranks, tasks, exit codes or sizes"
        )
    _out_of_range(report, world_size)
    _srun_notices(report.events)
    _srun_holes(report.events)
    owner = _map_nodes(report.events, nodes, tasks_per_node)
    _conclude(report, world_size)
    _suspect_node(report, owner)
    return report


def _suspect_node(report: LaunchReport, owner: list[str]) -> None:
    """Where the suspects are (the ranks that never reported), not where the first consequence
    was printed: srun reports each node's tasks on one line, so a rank missing inside one node's
    range ("tasks 0-57,59-63: Terminated") ran there; else Slurm's layout says; else unknown."""
    ff = report.first_failure
    if ff is None or not ff.ranks:
        return
    # srun names the node of each task it reports ("gpu-02: task 1: Exited ..."): the failing
    # rank ran where srun says it did.
    ran_on: dict[int, set[str]] = {}
    for e in report.events:
        if e.source == "srun" and e.node and e.rank is not None:
            ran_on.setdefault(e.rank, set()).add(e.node)
    placed = {n for r in ff.ranks for n in ran_on.get(r, ())}
    if ff.node is None and all(r in ran_on for r in ff.ranks) and len(placed) == 1:
        ff.node = placed.pop()
        return
    if ff.ranks != report.suspect_ranks:
        return
    spans: dict[str, list[int]] = {}
    for e in report.events:
        if e.source == "srun" and e.node and e.rank is not None:
            lo_hi = spans.setdefault(e.node, [e.rank, e.rank])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], e.rank), max(lo_hi[1], e.rank)
    nodes: list[str | None] = []
    for r in ff.ranks:
        inside = [n for n, (lo, hi) in spans.items() if lo < r < hi]
        if len(inside) == 1:
            nodes.append(inside[0])
        elif r < len(owner):
            nodes.append(owner[r])
        else:
            nodes.append(None)
    ff.node = nodes[0] if nodes and len(set(nodes)) == 1 else None


def _out_of_range(report: LaunchReport, world_size: int | None) -> None:
    """A rank the job cannot have (at or beyond its size from Slurm, else beyond MAX_RANKS) is
    kept as an event without a rank, and said in the notes: text in a log is data, not proof."""
    limit = world_size or MAX_RANKS
    bad = sorted({e.rank for e in report.events if e.rank is not None and e.rank >= limit})
    for e in report.events:
        if e.rank is not None and e.rank >= limit:
            e.rank = None
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        report.notes.append(
            f"rank(s) {shown} in the log are beyond the job's "
            f"{'size of ' + str(world_size) if world_size else 'rank cap of ' + str(MAX_RANKS)};"
            " read as no rank"
        )


def _srun_holes(events: list[RankEvent]) -> None:
    """srun's teardown line names the tasks it terminated ("tasks 0-57,59-63: Terminated"); a
    task missing from the middle of those lists had already exited, and when nothing else in the
    log names a failing rank that is the task that failed first. Only holes inside the listed
    range count, and only a few of them (cyclic distribution over nodes whose lines were cut
    would leave every other task out)."""
    if any(e.rank is not None and not e.consequence for e in events):
        return
    torn = [e for e in events if e.source == "srun" and e.signal == "SIGTERM" and e.consequence]
    listed = {e.rank for e in torn if e.rank is not None}
    if len(listed) < 2:
        return
    holes = sorted(set(range(min(listed), max(listed) + 1)) - listed)
    if not holes or len(holes) > max(1, len(listed) // 8):
        return
    near = {e.rank: e for e in torn}
    for r in holes:
        ref = near.get(r - 1) or near.get(r + 1) or torn[0]
        events.append(
            RankEvent(
                kind=EXIT,
                line=ref.line,
                rank=r,
                node=ref.node,
                time=ref.time,
                detail="left out of the tasks srun terminated: it had already exited",
                source="srun",
            )
        )


def _srun_notices(events: list[RankEvent]) -> None:
    """srun's "task N: Exited with exit code 1" only says that the task ended: it is a cause or
    a consequence as the rank's own traceback is. A task srun reports "Killed" that printed no
    traceback was SIGKILLed from outside (the kernel's OOM killer, as a rule): a cause; after a
    traceback it is the teardown of a task that already failed."""
    own: dict[int, list[RankEvent]] = {}
    for e in events:
        if e.rank is not None and e.source != "srun" and e.kind != NCCL_TIMEOUT:
            own.setdefault(e.rank, []).append(e)
    for e in events:
        if e.source != "srun" or e.rank not in own or e.kind == HOST_OOM:
            continue
        if all(o.consequence for o in own[e.rank]) or e.signal == "SIGKILL":
            e.consequence = True


# CUDA's cudaErrorECCUncorrectable text, the kernel's Xid/SXid lines and a GPU lost from the bus.
_HARDWARE_TEXT = lazy(
    r"uncorrectable ECC error|\bECC error|NVRM: Xid \(|\bSXid \(|fallen off the bus|"
    r"GPU is lost|unrecoverable (?:GPU|NVLink) error",
    re.IGNORECASE,
)
MAX_HARDWARE_LINES = 20


def _next_lines(lines: list[str], i: int, pattern, reach: int = 2) -> re.Match | None:
    """The first match of `pattern` on the `reach` lines after line `i`: a launcher block's
    second line (Hydra's "KILLED BY SIGNAL", Open MPI's "Exit code")."""
    for k in range(i + 1, min(i + 1 + reach, len(lines))):
        if hit := pattern.search(lines[k]):
            return hit
    return None


PHASES_PER_PART = 8  # the first OOMs of each log: the first failure is among them


def _collect(report: LaunchReport, raw: list[str], known_nodes: set[str], file_rank, offset):
    report.instrument.extend(instrument_lines(raw))
    for line in raw:
        if len(report.hardware_lines) >= MAX_HARDWARE_LINES:
            break
        if _HARDWARE_TEXT.search(line):
            report.hardware_lines.append(line.strip()[:300])
    stripped_pairs = [strip_line(line) for line in raw]
    stripped = [s for s, _ in stripped_pairs]
    first_event = len(report.events)
    events = report.events

    def host_prefix(i: int) -> str | None:
        m = _HOST_PREFIX.match(raw[i])
        return m.group(1) if m and m.group(1) in known_nodes else None

    # OOM messages, whatever their format.
    ooms = oom_message.parse_all("\n".join(raw))
    spawned = [(i, int(m.group(1))) for i, s in enumerate(raw) if (m := _SPAWN_RAISED.search(s))]
    block = _block_ranks(raw)
    for msg in ooms:
        if msg.rank is None:
            msg.rank = file_rank if file_rank is not None else block[msg.line]
        if msg.rank is None:
            msg.rank = _dump_rank(raw, msg.line)
        if msg.rank is None and (heads := [r for i, r in spawned if i < msg.line]):
            msg.rank = heads[-1]  # the traceback under mp.spawn's "-- Process N terminated"
    first = len(report.ooms)
    report.ooms.extend(ooms)
    for k, msg in enumerate(ooms[:PHASES_PER_PART]):
        report.phases[first + k] = phase.phase_of(raw, msg.line, msg.rank)
    if (series := trend.trend_of(raw, file_rank)) is not None:
        report.trends.append(series)
    for msg in ooms:
        events.append(
            RankEvent(
                kind=OOM,
                line=msg.line + offset,
                rank=msg.rank,
                node=host_prefix(msg.line),
                time=line_time(raw[msg.line]),
                detail=f"{msg.device} OOM ({msg.format})",
            )
        )
    oom_lines = {m.line for m in ooms}

    events.extend(_elastic_entries(stripped, raw))

    for i, (line, rank) in enumerate(stripped_pairs):
        if rank is None and (rr := re.search(r"\[(?:rank|default)(\d{1,18}(?!\d))\]:", raw[i])):
            rank = int(rr.group(1))
        if rank is None:
            rank = block[i]
        when = line_time(raw[i])
        if m := _WATCHDOG.search(line):
            events.append(
                RankEvent(
                    kind=NCCL_TIMEOUT,
                    line=i,
                    rank=int(m.group(1)),
                    time=when,
                    node=host_prefix(i),
                    detail=line.strip()[:200],
                    consequence=True,
                )
            )
            continue
        if m := _ELASTIC_ONE_LINE.search(line):
            code = int(m.group(1))
            events.append(
                RankEvent(
                    kind=SIGNAL if code < 0 else EXIT,
                    line=i,
                    local_rank=int(m.group(2)),
                    time=when,
                    exit_code=code,
                    detail=f"exitcode {code} (pid {m.group(3)})",
                    signal=_SIGNALS.get(-code) if code < 0 else None,
                )
            )
            continue
        if m := _DS_RETURN.search(line):
            code = int(m.group(1))
            lr = _DS_LOCAL_RANK.search(line)
            events.append(
                RankEvent(
                    kind=SIGNAL if code < 0 else EXIT,
                    line=i,
                    time=when,
                    local_rank=int(lr.group(1)) if lr else None,
                    exit_code=code,
                    signal=_SIGNALS.get(-code) if code < 0 else None,
                    detail=f"deepspeed launcher: return code {code}",
                )
            )
            continue
        if m := _KILLING.search(line):
            events.append(
                RankEvent(
                    kind=SIGNAL,
                    line=i,
                    time=when,
                    consequence=True,
                    detail=f"launcher killed pid {m.group(1)}",
                )
            )
            continue
        if m := _SRUN.search(line):
            what = m.group("what").strip()
            kind, consequence = EXIT, False
            srun_code: int | None = None
            sig: str | None = None
            if re.search(r"Out Of Memory", what, re.I):
                kind = HOST_OOM
            elif re.search(r"Terminated|Aborted", what):
                kind, consequence, sig = SIGNAL, True, "SIGTERM"  # srun tearing the step down
            elif re.search(r"Killed", what):
                kind, sig = SIGNAL, "SIGKILL"  # decided in _srun_notices: OOM killer or teardown
            if c := re.search(r"exit code (\d{1,18}(?!\d))", what):
                srun_code = int(c.group(1))
            for r in _ranks(m.group("tasks")):
                events.append(
                    RankEvent(
                        kind=kind,
                        line=i,
                        rank=r,
                        node=m.group("node"),
                        time=when,
                        detail=what,
                        consequence=consequence,
                        exit_code=srun_code,
                        signal=sig,
                        source="srun",
                    )
                )
            continue
        if m := _STEPD_OOM.search(line):
            tag = _STEPD_NODE.search(raw[i])  # the tag is a prefix strip_line drops
            events.append(
                RankEvent(
                    kind=HOST_OOM,
                    line=i,
                    time=when,
                    node=tag.group(1) if tag else None,
                    detail=f"{m.group(1)} oom-kill event(s) in step {m.group(2)}",
                )
            )
            continue
        if m := _HYDRA_AT.search(line):
            end = _next_lines(stripped, i, _HYDRA_END)
            signum = int(end.group(1)) if end and end.group(1) else None
            status = int(end.group(3)) if end and end.group(3) else None
            events.append(
                RankEvent(
                    kind=SIGNAL if signum is not None else EXIT,
                    line=i,
                    rank=int(m.group(1)) if m.group(1) else None,
                    node=m.group(3),
                    time=when,
                    signal=_signal_name(signum) if signum is not None else None,
                    exit_code=status,
                    detail=f"MPICH Hydra: pid {m.group(2)} on {m.group(3)} ended badly"
                    + (f" (signal {signum})" if signum is not None else "")
                    + (f" (exit code {status})" if status is not None else ""),
                    source="mpiexec",
                )
            )
            continue
        if m := _OMPI_PROCESS.search(line):
            ex = _next_lines(stripped, i, _OMPI_EXIT)
            status = int(ex.group(1)) if ex else None
            events.append(
                RankEvent(
                    kind=EXIT,
                    line=i,
                    rank=int(m.group(1)),
                    time=when,
                    exit_code=status,
                    detail="Open MPI: the first process to exit non-zero"
                    + (f" (exit code {status})" if status is not None else ""),
                    source="mpirun",
                )
            )
            continue
        raised = _SPAWN_RAISED.search(line)
        if m := (raised or _SPAWN_EXITED.search(line)):
            status = int(m.group(2)) if not raised and m.group(2) else None
            sig = None if raised else m.group(3)
            how = "raised" if raised else f"terminated with {sig}" if sig else f"exit code {status}"
            events.append(
                RankEvent(
                    kind=SIGNAL if sig else EXIT,
                    line=i,
                    rank=int(m.group(1)),
                    local_rank=int(m.group(1)),
                    time=when,
                    exit_code=status,
                    signal=sig,
                    detail=f"torch.multiprocessing.spawn: process {m.group(1)} (spawn index) {how}",
                    source="spawn",
                )
            )
            continue
        crashed = _COMPOSER_CRASHED.search(line)
        if m := (crashed or _COMPOSER_EXITED.search(line)):
            code = int(m.group(2) if crashed else m.group(3))
            how = "crashed" if crashed else f"(pid {m.group(2)}) exited"
            events.append(
                _coded_exit(
                    i,
                    int(m.group(1)),
                    code,
                    when,
                    "composer",
                    f"Composer launcher: rank {m.group(1)} {how} with exit code {code}",
                    # The closing summary can name a rank the launcher itself killed.
                    reactions=() if crashed else ("SIGTERM", "SIGKILL"),
                )
            )
            continue
        if m := _LIGHTNING_CHILD.search(raw[i]):  # the rank is in the prefix strip_line drops
            code = int(m.group(3))
            events.append(
                _coded_exit(
                    i,
                    int(m.group(1)),
                    code,
                    when,
                    "lightning",
                    f"Lightning launcher: local rank {m.group(1)} (pid {m.group(2)}) "
                    f"terminated with code {code}",
                    local=True,
                    reactions=("SIGABRT",),  # the NCCL watchdog's abort, as elsewhere
                )
            )
            continue
        if m := _COMPOSER_KILLING.search(line):
            events.append(
                RankEvent(
                    kind=SIGNAL,
                    line=i,
                    rank=int(m.group(1)),
                    time=when,
                    signal=m.group(3),
                    detail=f"Composer launcher killed rank {m.group(1)} (pid {m.group(2)})",
                    consequence=True,
                    source="composer",
                )
            )
            continue
        if m := _OMPI_IMPROPER.search(line):
            nx = None if m.group(3) else _next_lines(stripped, i, _OMPI_IMPROPER_NODE, reach=1)
            node = m.group(3) or (nx.group(1) if nx else None)
            events.append(
                RankEvent(
                    kind=EXIT,
                    line=i,
                    rank=int(m.group(1)),
                    node=node,
                    time=when,
                    detail=f"Open MPI: rank {m.group(1)} (pid {m.group(2)}) exited improperly",
                    source="mpirun",
                )
            )
            continue
        if m := _OMPI_NOTICED.search(line):
            signum = int(m.group(4))
            events.append(
                RankEvent(
                    kind=SIGNAL,
                    line=i,
                    rank=int(m.group(1)),
                    node=m.group(3),
                    time=when,
                    signal=_signal_name(signum),
                    detail=f"Open MPI: rank {m.group(1)} (pid {m.group(2)}) exited on signal "
                    f"{signum}" + (f" ({m.group(5)})" if m.group(5) else ""),
                    source="mpirun",
                )
            )
            continue
        if _RAY_HOST_OOM.search(line):
            ip = _RAY_IP.search(line) or (i + 1 < len(raw) and _RAY_IP.search(raw[i + 1]))
            events.append(
                RankEvent(
                    kind=HOST_OOM,
                    line=i,
                    time=when,
                    node=ip.group(1) if ip else None,
                    detail="Ray's memory monitor killed a worker (node host memory)",
                    source="ray",
                )
            )
            continue
        if m := _CANCELLED.search(line):
            reason = (m.group(4) or "").strip()
            events.append(
                RankEvent(
                    kind=TIME_LIMIT if reason == "TIME LIMIT" else SIGNAL,
                    line=i,
                    node=m.group(2),
                    time=m.group(3),
                    detail=f"job {m.group(1)} cancelled"
                    + (f" due to {reason.lower()}" if reason else ""),
                    consequence=not reason,
                )
            )
            continue
        if i not in oom_lines and (m := _EXCEPTION_LINE.match(line.strip())):
            # The last line of a traceback. Without a rank prefix it is still the failure of a
            # single-process job (or of a rank the log does not name).
            host = _CPU_ALLOC.search(line)
            refused = to_mib(host.group(1), "bytes") if host else None
            events.append(
                RankEvent(
                    kind=HOST_OOM if host else EXIT,
                    line=i,
                    rank=rank,
                    time=when,
                    node=host_prefix(i),
                    detail=(
                        f"the CPU allocator could not get {human_mib(refused)} of host memory "
                        f"({m.group(1)})"
                        if host
                        else line.strip()[:200]
                    ),
                    consequence=not host and bool(_CONSEQUENCE_TEXT.search(line)),
                    source="c10" if host else "log",
                    request_mib=refused,
                )
            )

    for msg in ooms:
        msg.line += offset
    for e in events[first_event:]:
        e.line += offset if e.kind != OOM else 0
        if e.rank is None and file_rank is not None and e.local_rank is None:
            e.rank = file_rank


def _map_nodes(events, nodes, tasks_per_node) -> list[str]:
    """Fill in nodes the log did not name, from Slurm's node list and task layout (block
    distribution, Slurm's default); the node of each rank, as far as the layout says."""
    if not nodes:
        return []
    if isinstance(tasks_per_node, int):
        per = [tasks_per_node] * len(nodes)
    elif tasks_per_node:
        per = list(tasks_per_node)
    else:
        return []
    owner: list[str] = []
    for node, n in zip(nodes, per, strict=False):
        owner.extend([node] * n)
    for e in events:
        if e.node is None and e.rank is not None and e.rank < len(owner):
            e.node = owner[e.rank]
    return owner


def _time_key(events: list[RankEvent]):
    """Sort key for timestamps. glog stamps (NCCL's `E1206 18:44:12`) carry no year: give them
    the year of the log's dated stamps, so they compare with a wrapper's `2024-12-06 18:34:00`."""
    years = [t.year for e in events if (t := e.sort_time) and t.year != 1900]
    year = min(years) if years else 1900

    def key(e: RankEvent) -> datetime | None:
        t = e.sort_time
        return t.replace(year=year) if t and t.year == 1900 else t

    return key


def _earliest(events: list[RankEvent], key) -> list[RankEvent]:
    """The earliest events: by timestamp when every one has one, else by position in the log."""
    if all(key(e) for e in events):
        first = min(key(e) for e in events)
        return [e for e in events if key(e) == first]
    return [min(events, key=lambda e: e.line)]


def _failed(e: RankEvent) -> bool:
    """A rank that failed, as opposed to one that timed out waiting or was terminated by srun
    because another failed. Watchdog aborts (SIGABRT) did fail, even if as a consequence."""
    return e.kind != NCCL_TIMEOUT and (not e.consequence or e.signal == "SIGABRT")


def _conclude(report: LaunchReport, world_size: int | None) -> None:
    events = report.events
    key = _time_key(events)
    report.failing_ranks = list(
        dict.fromkeys(e.rank for e in events if e.rank is not None and _failed(e))
    )
    report.timed_out_ranks = list(
        dict.fromkeys(
            e.rank
            for e in sorted(events, key=lambda e: e.line)
            if e.kind == NCCL_TIMEOUT and e.rank is not None
        )
    )
    # Ranks that never reported: missing from the timeout list, or from srun's Terminated ranges.
    reported = set(report.timed_out_ranks) | {
        e.rank for e in events if e.consequence and e.rank is not None and e.signal != "SIGABRT"
    }
    if reported:
        # Bounded: _out_of_range removed ranks beyond the job's size (or MAX_RANKS).
        top = (world_size - 1) if world_size else max(reported)
        report.suspect_ranks = [r for r in range(min(top, MAX_RANKS - 1) + 1) if r not in reported]

    # The first observation of the failure: the earliest stamp of any event (a launcher's kill
    # line or a timeout is printed after the failure, so it bounds it when the cause has none).
    timed = [e for e in events if key(e)]
    first_seen = min(timed, key=key).time if timed else None

    def pick(candidates: list[RankEvent], why: str) -> FirstFailure:
        first = _earliest(candidates, key)
        ranks = list(dict.fromkeys(e.rank for e in first if e.rank is not None))
        if not ranks:  # e.g. slurmstepd's oom-kill line, then srun naming the task
            ranks = list(dict.fromkeys(e.rank for e in candidates if e.rank is not None))[:1]
        node = next((e.node for e in first if e.node), None) or next(
            (e.node for e in candidates if e.node and (not ranks or e.rank in ranks)), None
        )
        return FirstFailure(
            ranks=ranks,
            node=node,
            time=first_seen,
            kind=first[0].kind,
            why=why,
            signal=first[0].signal,
            request_mib=next((e.request_mib for e in first if e.request_mib), None),
        )

    causes = [e for e in events if not e.consequence and e.kind != NCCL_TIMEOUT]
    for kind, why in [
        (OOM, "the earliest accelerator OOM; later failures on other ranks are consequences"),
        (HOST_OOM, "host memory ran out (cgroup oom-kill)"),
        (EXIT, "the earliest rank to fail with an error"),
        (SIGNAL, "the earliest rank killed by a signal"),
        (TIME_LIMIT, "Slurm cancelled the job at its time limit"),
    ]:
        chosen = [e for e in causes if e.kind == kind]
        if chosen:
            if kind == HOST_OOM and all(e.source == "ray" for e in chosen):
                why = "host memory ran out on the node (Ray's memory monitor killed a worker)"
            elif kind == HOST_OOM and all(e.source == "c10" for e in chosen):
                why = (
                    f"{chosen[0].detail}: one request of the rank's own; if it is more than the "
                    f"node's RAM (`scontrol show node` RealMemory), no --mem can meet it"
                )
            ff = pick(chosen, why)
            if kind == HOST_OOM and not ff.ranks and not ff.node:
                # slurmstepd's oom-kill line names neither task nor node; the OOM killer's kill
                # is a SIGKILL, and the launcher that saw it (srun's "Killed", mpirun's "signal
                # 9") names the task and its node.
                killed = [e for e in causes if e.signal == "SIGKILL" and e.rank is not None]
                if killed:
                    seen = pick(killed, why)
                    ff.ranks, ff.node = seen.ranks, seen.node
            report.first_failure = ff
            return
    aborts = [e for e in events if e.signal == "SIGABRT" and e.rank is not None]
    timeouts = [e for e in events if e.kind == NCCL_TIMEOUT]
    if aborts and not timeouts:
        ff = pick(
            aborts,
            "only NCCL watchdog aborts (SIGABRT) were logged: every listed rank was "
            "torn down; the culprit is not in this log",
        )
        report.first_failure = ff
    elif timeouts or any(e.consequence for e in events):
        ff = pick(timeouts or [e for e in events if e.consequence], "")
        ff.ranks = report.suspect_ranks
        ff.why = (
            "only consequences were logged (NCCL timeouts, kills); the ranks that never reported "
            "are the suspects"
            if ff.ranks
            else "only consequences were logged; the culprit is not in this log"
        )
        report.first_failure = ff
