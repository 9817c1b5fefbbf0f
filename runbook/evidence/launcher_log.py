"""Launcher and job logs: every rank's terminal event, and the first failure (the cause).

Pure functions of text. The lines each launcher prints are read by its recognizer in
evidence/launchers/ (torchrun/elastic, srun, slurmstepd, NCCL's watchdog, DeepSpeed, Open MPI,
MPICH Hydra, mp.spawn, Composer, Lightning, Ray, and the traceback catch-all); OOM messages of
every format by oom_message.py, with their `[rankN]:` prefix; runbook.instrument's own lines
here. This module frames the lines (a terminal's cuts joined again), hands each line to the
recognizers whose gate it holds, and orders what they found.

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

from runbook import words
from runbook.evidence import launchers, oom_message, phase, trend
from runbook.evidence.events import (  # noqa: F401  (re-exported: the kinds are the contract's)
    EXIT,
    HOST_OOM,
    MAX_RANKS,
    NCCL_TIMEOUT,
    OOM,
    SIGNAL,
    TIME_LIMIT,
    UNKNOWN,
    RankEvent,
    line_time,
    parse_time,
)
from runbook.evidence.framing import unwrap
from runbook.evidence.oom_message import log_lines, strip_line
from runbook.evidence.units import MAX_DIGITS, small_int
from runbook.lazyre import lazy
from runbook.record import record


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

    # start | oom-dump | peak | checkpoint-request (the rank checkpoints when runbook asks) |
    # checkpoint-seen, checkpoint-missed, checkpoint-resumed (its answers to a request) |
    # checkpoint (the checkpoint a request asked for is written)
    kind: str
    rank: int | None
    fields: dict[str, str]
    line: str


_INSTRUMENT = lazy(
    r"RUNBOOK_INSTRUMENT (start|oom-dump|peak|checkpoint-(?:request|seen|missed|resumed)|checkpoint)"
    r" rank=(\S+)(.*)$",
    needs="RUNBOOK_INSTRUMENT",
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
    """runbook.instrument's lines, each read on its own even where two ranks' writes ran
    together on one line (ranks of a node share one stderr pipe under torchrun: an older
    instrument wrote the text and its newline apart, and other programs still do)."""
    out = []
    for line in lines:
        for part in _marker_parts(line):
            if m := _INSTRUMENT.search(part):
                rank = small_int(m.group(2))
                fields = dict(re.findall(r"(\w+)=(\S*)", m.group(3)))
                out.append(InstrumentLine(m.group(1), rank, fields, part.strip()))
    return out


def _marker_parts(line: str) -> list[str]:
    """`line` cut before every marker after its first (one part when it holds one); what
    stands before the first (a `srun -l` label) stays with it."""
    head, *rest = re.split(r"(?=RUNBOOK_INSTRUMENT )", line)
    return [head + rest[0], *rest[1:]] if len(rest) > 1 else [line]


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

    def params_of(self, rank: int | None) -> int | None:
        """The parameter count runbook.instrument's start line gave (`install(model=...)`), of
        `rank` where its line says so, else of any rank (data parallel: the same model)."""
        counts = [
            (i.rank, int(i.fields["params"]))
            for i in self.instrument
            if i.kind == "start" and i.fields.get("params", "").isdigit()
        ]
        own = [n for r, n in counts if rank is not None and r == rank]
        found = own or [n for _, n in counts]
        return found[0] if found else None

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


# starts like this is never a cut line's tail. Sure starts: a stamp, a bracketed prefix, an
# indented traceback line, a launcher's or a logger's tag, an upper-case tag ("WARNING:").
# A line sure to start a record. srun -l's label ("0: ", "12: ") before runbook.instrument's
# marker or a bracket starts one too: four ranks' lines of one message are of one length
# (one-digit ranks), which reads as a terminal's cut. A label alone is not sure: a cut can
# leave a tail that starts "3064: 12 Workers".
_LINE_SURE = lazy(
    r"^(?:\x1b\[[0-9;]*m|[ \t]*>[ \t]?)*(?:\s|\[|<\d|\d{1,6}: (?:RUNBOOK_INSTRUMENT\b|\[)|\d{4}-\d\d-\d\d|\d\d?:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d |[EWIF]\d{3,4} "
    r"|(?:srun|slurmstepd[\w-]*|sbatch|mpirun|mpiexec|prterun|torchrun|Traceback|NCCL"
    r"|RUNBOOK_INSTRUMENT)\b"
    r"|[A-Z][A-Z_]+:|[\w.-]+:\s*\[)"
)
# Open MPI's text for a process that ended without MPI_Finalize, its node often on the next line:
# "mpirun has exited due to process rank 1 with PID 4017 on\nnode clsockeyev1 exiting improperly."


_TOO_LONG = lazy(rf"\d{{{MAX_DIGITS + 1}}}")


def _priority(e: RankEvent) -> int:
    order = {OOM: 0, HOST_OOM: 1, EXIT: 2, SIGNAL: 3, TIME_LIMIT: 4, NCCL_TIMEOUT: 5, UNKNOWN: 6}
    return order.get(e.kind, 6) + (10 if e.consequence else 0)


# -- the scan -----------------------------------------------------------------------------------
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

# Lines a launcher prints whole, each with text that shows where one starts: a line that starts
# one but does not read whole was cut by a terminal or re-flowed by an editor (a single cut, which
# unwrap cannot tell from a long line): it is read again with the next line joined, as printed or
# with the space an editor dropped, and kept joined only if it then reads whole. Each recognizer
# names its own (start, whole) pairs.
REJOIN_LINES = 3  # an editor re-flows a 200-column line onto three or four


@functools.cache
def _rejoin_rules() -> tuple:
    return tuple(pair for r in launchers.recognizers() for pair in r.rejoin)


def _rejoin(lines: list[str]) -> list[str]:
    out: list[str] = []
    rules = _rejoin_rules()
    i, n = 0, len(lines)
    while i < n:
        ln, i = lines[i], i + 1
        hit = next(((a, p) for a, p in rules if a.search(ln) and not p.search(ln)), None)
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
    every_rank: bool = True,
) -> LaunchReport:
    """Scan several logs of one job as one: per-rank files (`--output=%j_%t.out`) carry no rank
    prefix, so each part comes with the rank its file name gives (or None). `every_rank` False:
    a part without an OOM gets no series of its own (the watch makes a watched job's from the
    lines it holds and the new ones, collect._Gathered)."""
    if isinstance(nodes, str):
        from runbook.slurm.hostlist import expand  # only a hostlist string needs it

        nodes = expand(nodes)
    report = LaunchReport()
    offset = 0
    for text, rank in parts:
        # A terminal's cut lines are joined again (an srun or watchdog line cut at 80 columns
        # loses its task list or its time otherwise). An editor's re-flow is undone only for a
        # launcher's own lines (_rejoin): a traceback's or a table's lines cannot be told from
        # a re-flowed tail.
        raw = _frame(text)
        if rank is None:
            rank = _marker_rank(raw)
        _collect(report, raw, set(nodes or []), rank, offset, every_rank)
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


def _frame(text: str | None) -> list[str]:
    # runbook.instrument writes each of its lines in one write: never a terminal's cut, so the
    # line after one (of another rank, as often as not) is never its tail, however alike the
    # ranks' lines are in length.
    return _rejoin(
        unwrap(log_lines(text or ""), _LINE_SURE.search, reach=0, whole=_instrument_whole)
    )


def _instrument_whole(line: str) -> bool:
    return "RUNBOOK_INSTRUMENT " in line


def read_with(recognizer: launchers.Recognizer, text: str) -> list[RankEvent]:
    """What one recognizer alone reads in `text`, framed as a scan frames it: the test of its
    sample lines (tests/data/launchers/)."""
    raw = _frame(text)
    pairs = [strip_line(line) for line in raw]
    stripped = [s for s, _ in pairs]
    events = list(recognizer.entries(stripped, raw)) if recognizer.entries else []
    oom_lines = {m.line for m in oom_message.parse_all("\n".join(raw))}
    ln = launchers.Line(raw, stripped, set(), oom_lines)
    _read_lines(events, ln, pairs, _owners(raw, [recognizer]), [recognizer])
    return events


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
        report.notes.append(
            f"{words.ranks(bad, shown=5)} in the log are beyond the job's "
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


PHASES_PER_PART = 8  # the first OOMs of each log: the first failure is among them
TRENDS_PER_PART = 4  # the failing ranks of a log whose memory series are read (each a pass)


_PREFIX_RANK = lazy(r"\[(?:rank|default)(\d{1,18}(?!\d))\]:", needs="]:")


def _collect(
    report: LaunchReport, raw: list[str], known_nodes: set[str], file_rank, offset, every_rank=True
):
    """Read one log part into `report`: its OOM messages, then each recognizer's events."""
    report.instrument.extend(instrument_lines(raw))
    _hardware(report, raw)
    stripped_pairs = [strip_line(line) for line in raw]
    stripped = [s for s, _ in stripped_pairs]
    first_event = len(report.events)
    recs = launchers.recognizers()
    owners = _owners(raw, recs)
    ooms = _ooms(report, raw, file_rank, owners, recs, every_rank)
    ln = launchers.Line(raw, stripped, known_nodes, {m.line for m in ooms})
    for msg in ooms:
        report.events.append(
            RankEvent(
                kind=OOM,
                line=msg.line + offset,
                rank=msg.rank,
                node=ln.host(msg.line),
                time=line_time(raw[msg.line]),
                detail=f"{msg.device} OOM ({msg.format})",
            )
        )
    for r in recs:
        if r.entries is not None:
            report.events.extend(r.entries(stripped, raw))
    _read_lines(report.events, ln, stripped_pairs, owners, recs)
    for msg in ooms:
        msg.line += offset
    for e in report.events[first_event:]:
        e.line += offset if e.kind != OOM else 0
        if e.rank is None and file_rank is not None and e.local_rank is None:
            e.rank = file_rank


def _read_lines(events, ln: launchers.Line, stripped_pairs, owners, recs) -> None:
    """Each line to the recognizers whose gate it holds, in their order: the first reader that
    answers has it."""
    for i, (text, rank) in enumerate(stripped_pairs):
        printed = ln.raw[i]
        gated = [r for r in recs if r.gated(printed)]
        if not gated:
            continue
        if rank is None and (rr := _PREFIX_RANK.search(printed)):
            rank = int(rr.group(1))
        ln.i, ln.text, ln.when = i, text, line_time(printed)
        ln.rank = owners[i] if rank is None else rank
        found = next(
            (got for r in gated for read in r.readers if (got := read(ln)) is not None), None
        )
        if found:
            events.extend(found)


def _hardware(report: LaunchReport, raw: list[str]) -> None:
    for line in raw:
        if len(report.hardware_lines) >= MAX_HARDWARE_LINES:
            break
        if _HARDWARE_TEXT.search(line):
            report.hardware_lines.append(line.strip()[:300])


def _owners(raw: list[str], recs) -> list[int | None]:
    """Whose captured output each line is, as a launcher that prints its ranks' output in
    blocks says (Composer's Begin/End global rank N STDERR)."""
    out: list[int | None] = [None] * len(raw)
    for r in recs:
        if r.owners is not None:
            out = [a if a is not None else b for a, b in zip(out, r.owners(raw), strict=True)]
    return out


def _ooms(report: LaunchReport, raw: list[str], file_rank, owners, recs, every_rank=True):
    """The part's OOM messages, each with its rank: its prefix's, else the file's (per-rank
    logs), else the captured block's, else runbook.instrument's dump marker above it, else the
    process whose traceback a launcher headed above it (mp.spawn's "-- Process N terminated")."""
    ooms = oom_message.parse_all("\n".join(raw))
    heads = sorted(h for r in recs if r.heads is not None for h in r.heads(raw))
    for msg in ooms:
        if msg.rank is None:
            msg.rank = file_rank if file_rank is not None else owners[msg.line]
        if msg.rank is None:
            msg.rank = _dump_rank(raw, msg.line)
        if msg.rank is None and (above := [r for i, r in heads if i < msg.line]):
            msg.rank = above[-1]
    first = len(report.ooms)
    report.ooms.extend(ooms)
    for k, msg in enumerate(ooms[:PHASES_PER_PART]):
        report.phases[first + k] = phase.phase_of(raw, msg.line, msg.rank)
    # The failing ranks' own series: a log every rank writes to holds each rank's memory lines,
    # and the one that ran out is the one whose trend says why (a rank drawing longer inputs
    # than the rest: the cluster's modelled job, rank 3 of 4).
    ranks = [file_rank] if file_rank is not None else [m.rank for m in ooms[:PHASES_PER_PART]]
    seen = {(t.series, t.rank) for t in report.trends}
    # No OOM (a running job the sweep watches): every rank's series, since the rank heading for
    # one need not be rank 0 nor the one with the most lines.
    found = (
        [trend.trend_of(raw, r) for r in list(dict.fromkeys(ranks))[:TRENDS_PER_PART]]
        if ranks
        else trend.every_rank(raw, most=trend.WATCH_POINTS)
        if every_rank
        else []
    )
    for series in found:
        if series is not None and (series.series, series.rank) not in seen:
            seen.add((series.series, series.rank))
            report.trends.append(series)
    return ooms


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
    """Which ranks failed, which timed out, which never reported, and the first failure."""
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
    report.first_failure = _first_cause(events, key, first_seen) or _first_consequence(
        report, key, first_seen
    )


def _pick(candidates: list[RankEvent], why: str, key, first_seen) -> FirstFailure:
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


_CAUSE_ORDER = [
    (OOM, "the earliest accelerator OOM; later failures on other ranks are consequences"),
    (HOST_OOM, "host memory ran out (cgroup oom-kill)"),
    (EXIT, "the earliest rank to fail with an error"),
    (SIGNAL, "the earliest rank killed by a signal"),
    (TIME_LIMIT, "Slurm cancelled the job at its time limit"),
]


def _first_cause(events: list[RankEvent], key, first_seen) -> FirstFailure | None:
    """The earliest cause of the first kind in _CAUSE_ORDER that the log has."""
    causes = [e for e in events if not e.consequence and e.kind != NCCL_TIMEOUT]
    for kind, why in _CAUSE_ORDER:
        chosen = [e for e in causes if e.kind == kind]
        if not chosen:
            continue
        if kind == HOST_OOM and all(e.source == "ray" for e in chosen):
            why = "host memory ran out on the node (Ray's memory monitor killed a worker)"
        elif kind == HOST_OOM and all(e.source == "c10" for e in chosen):
            why = (
                f"{chosen[0].detail}: one request of the rank's own; if it is more than the "
                f"node's RAM (`scontrol show node` RealMemory), no --mem can meet it"
            )
        ff = _pick(chosen, why, key, first_seen)
        if kind == HOST_OOM and not ff.ranks and not ff.node:
            # slurmstepd's oom-kill line names neither task nor node; the OOM killer's kill
            # is a SIGKILL, and the launcher that saw it (srun's "Killed", mpirun's "signal
            # 9") names the task and its node.
            killed = [e for e in causes if e.signal == "SIGKILL" and e.rank is not None]
            if killed:
                seen = _pick(killed, why, key, first_seen)
                ff.ranks, ff.node = seen.ranks, seen.node
        return ff
    return None


def _first_consequence(report: LaunchReport, key, first_seen) -> FirstFailure | None:
    """Only consequences: every rank torn down by watchdog aborts, or timeouts and kills whose
    culprit is the rank that never reported."""
    events = report.events
    aborts = [e for e in events if e.signal == "SIGABRT" and e.rank is not None]
    timeouts = [e for e in events if e.kind == NCCL_TIMEOUT]
    if aborts and not timeouts:
        return _pick(
            aborts,
            "only NCCL watchdog aborts (SIGABRT) were logged: every listed rank was "
            "torn down; the culprit is not in this log",
            key,
            first_seen,
        )
    if not (timeouts or any(e.consequence for e in events)):
        return None
    ff = _pick(timeouts or [e for e in events if e.consequence], "", key, first_seen)
    ff.ranks = report.suspect_ranks
    ff.why = (
        "only consequences were logged (NCCL timeouts, kills); the ranks that never reported "
        "are the suspects"
        if ff.ranks
        else "only consequences were logged; the culprit is not in this log"
    )
    return ff
