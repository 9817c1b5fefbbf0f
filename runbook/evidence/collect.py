"""Evidence from the cluster for one job or many: the job's logs filtered where they are, the
instrument dump of the failing rank, and the job as Slurm text. Used by `runbook oom` (through
the pipeline), `runbook sweep` and `runbook verify`, so each reads logs the same way.

Every log location of every job on a host is read in one exec (log_filter.remote_grep_many_argv):
one SSH round trip per host, however many jobs, patterns and per-task files. What was read comes
back as values; writing raw files is the caller's business.
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from runbook.checkpoints import Checkpoint
from runbook.errors import RunbookError
from runbook.evidence.launcher_log import LaunchReport, scan_parts
from runbook.evidence.provenance import this_run

if TYPE_CHECKING:  # node health (Xid, nvidia-smi parsers) loads only where a probe runs
    from runbook.evidence.gpu_health import NodeHealth
from runbook import words
from runbook.evidence import trend
from runbook.evidence.log_filter import (
    REMOTE_CAP_BYTES,
    TAIL_LINES,
    TAIL_WINDOW,
    TRACEBACK_BODY,
    WATCH_SERIES_BYTES,
    host_now,
    parse_grep_output,
    refusals,
    remote_grep_many_argv,
    split_locations,
    watch_known,
)
from runbook.evidence.progress import training_steps
from runbook.record import record
from runbook.slurm.client import JobInfo
from runbook.slurm.paths import locate, srun_log_patterns, task_of
from runbook.slurm.text import SlurmJobText
from runbook.transport.local import LocalTransport


@record
class JobLogs:
    """One job's logs as read: the scan, the step it failed at, what reading left out, and the
    raw output of the read (for the incident folder)."""

    launch: LaunchReport
    failed_step: int | None = None
    notes: list[str] = field(default_factory=list)
    raw: str = ""
    # Seconds since any of the job's log files was last written, on their host's clock (None
    # when the host did not say): the stall check of a job that prints no step.
    quiet_s: float | None = None
    # A watched read (the sweep's watch of running jobs, issue 65): each file's identity, where
    # this read stopped and the lines before that ({path: (ident, end, lines or None)}), the
    # memory-series lines to hold for the next period ({path: [lines]}), and the bytes read.
    watched: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)
    bytes_read: int = 0
    # The matching lines the watch holds of each file from its start (Held.excerpt's), and the
    # whole log's JobLogs made of them and this read's, without reading it again (None where
    # what is held does not reach back to every file's start: evidence.collect.Held).
    excerpts: dict = field(default_factory=dict)
    whole: Any = None


def slurm_text(job) -> SlurmJobText:
    """The job as the diagnosis reads Slurm's view of it."""
    return SlurmJobText(
        format=job.source,
        job_id=job.job_id,
        state=job.state,
        exit_code=job.exit_code,
        nodes=job.nodes or None,
    )


def log_patterns(job, script: str) -> list[str]:
    """StdOut/StdErr as slurmctld resolved them, else the script's #SBATCH lines, else Slurm's
    default (slurm-%j.out, in the working directory); and the per-task files of `srun --output`
    in the script, which hold the ranks' own tracebacks (the batch log may hold only srun's
    notices)."""
    found = [p for p in (job.stdout, job.stderr) if p and p != "/dev/null"]
    if not found:
        for m in re.finditer(
            r"(?m)^#SBATCH[ \t]+(?:--output|--error|-o|-e)(?:=|[ \t]+)(.+)$", script or ""
        ):
            try:  # sbatch reads quotes in directives, mid-word too
                words = shlex.split(m.group(1), comments=True)
            except ValueError:  # unbalanced quotes: take the first word as written
                words = m.group(1).split()[:1]
            if words:
                found.append(words[0])
    return list(dict.fromkeys([*found, *srun_log_patterns(script)])) or [""]


_APPEND = re.compile(r"(?m)^#SBATCH[ \t]+--open-mode(?:=|[ \t]+)[\"']?append\b")


def log_appends(job, script: str) -> str | None:
    """Why the job's log may hold lines of other runs, else None: it is opened for appending
    (`--open-mode=append` in the script or on the sbatch line), so every submission writing that
    file, and every run of a requeued job, adds to it. Without it Slurm truncates the log when
    the job (or its requeued run) starts (measured on 22.05), and the file is this run's."""
    line = getattr(job, "submit_line", "") or ""
    if not (_APPEND.search(script or "") or re.search(r"--open-mode(?:=|\s+)append\b", line)):
        return None
    restarts = getattr(job, "restarts", 0)
    return "the job appends to its log (--open-mode=append)" + (
        f" and was requeued {words.count(restarts, 'time')} (Slurm's Restarts)" if restarts else ""
    )


def attribute(job, script: str, e) -> tuple[list[str], list[str]]:
    """Keep only this run's lines of one excerpt (evidence.provenance): (notes, reasons the
    evidence is incomplete)."""
    why = log_appends(job, script)
    if why is None:
        return [], []
    got = this_run(e.lines, job.start, job.raw, shared=True)
    e.lines = got.kept
    notes: list[str] = []
    if got.earlier:
        notes.append(
            f"{e.path}: {words.count(got.earlier, 'line')} set aside, written by an earlier run (before this "
            f"run started at {job.start}; {why})"
        )
    if got.unproven:
        notes.append(
            f"{e.path}: {words.count(got.unproven, 'line')} set aside that the log does not show to be this "
            f"run's ({why}; no time stamp or requeue notice marks where this run begins)"
        )
        return notes, [notes[-1] + "; an OOM among them is no verdict for this job"]
    if got.earlier and not got.kept:
        return notes, [
            f"{e.path}: no line of this run in the matched lines ({why}): an earlier run's "
            "failure is no verdict for this job"
        ]
    return notes, []


def log_host(job) -> str:
    """Where the job's logs are written: its batch host (its first node)."""
    return job.batch_host or (job.nodes[0] if job.nodes else "")


def _transport(site, host: str, hosts):
    return LocalTransport() if site.logs.read_on == "local" or not host else hosts[host]


def on_node_as_owner(site, owner: str, host: str, argv: list[str]) -> list[str]:
    """`argv`, a read of a job's files, as its owner where the site says the nodes' reads run
    so ([identity] node_reads = "sudo", over SSH: the SSH account's sudo on the node).
    Elsewhere the read runs as the reading account and the scan keeps to the owner's files."""
    if site.identity.node_reads != "sudo" or not owner or owner == "root":
        return argv  # a root job's files are read as the SSH account (runbook never becomes root)
    if site.logs.read_on == "local" or not host:
        return argv  # this host's own reads: the owner's files only (the scan's -user test)
    return ["sudo", "-n", "-u", owner, "--", *argv]


@record
class Held:
    """What the watch holds of a running job between periods (state.watch_held): per file
    identity, the offset the last period read to and the lines before it; per file path, the
    memory-series lines kept (bounded: trend.held_and_trends)."""

    offsets: dict = field(default_factory=dict)  # {ident: (offset, lines before it)}
    series: dict = field(default_factory=dict)  # {path: [lines]}
    # {path: {"ident", "from", "end", "lines": [[byte offset, line]], "tail": [lines], "whole"}}: the
    # matching lines (with their context) of every period's read of the file since its start,
    # and its last lines: what a read of the whole file would send, so an incident on the job
    # reads only what came after (issue 65). "whole" is false, and no line is held, once a read
    # was cut (the file grew past the growth cap), the lines passed HELD_EXCERPT_BYTES, or the
    # log is appended to by earlier runs (their lines are told apart on a whole read only).
    excerpt: dict = field(default_factory=dict)


HELD_EXCERPT_BYTES = 256 << 10  # a watched file's matching lines the state holds, at most


def _with_latest(text: str, e) -> str:
    """An excerpt the cap cut short, and its file's last lines after it (tracebacks' bodies are
    not among them: a failure found there is read without its frames), each line once."""
    kept = set(text.split("\n"))
    latest = [t for t in e.tail if t not in kept]
    if not latest:
        return text
    e.notes.append(
        f"{e.path}: its last {len(latest)} lines were read after the capped excerpt (without "
        "tracebacks' frames): a failure there is seen, where it ran out may not be"
    )
    return text + "\n" + "\n".join(latest)


def read_logs_many(
    site,
    jobs: list[tuple[JobInfo, str]],
    hosts,
    *,
    step_pattern: str = "",
    held: dict[str, Held] | None = None,
) -> tuple[dict[str, JobLogs], dict[str, RunbookError]]:
    """Every job's logs, one exec per host, hosts in parallel: ({job id: JobLogs}, {job id: why
    its logs could not be read}). `jobs` holds (job, batch script) pairs. A job in `held` is
    watched: its files are read from where the last period stopped, and the series lines held
    come before the new ones (the watch's JobLogs then says where to start next)."""
    held = held or {}
    locations = _locations(jobs, site.identity.node_reads == "sudo")
    done = _read_hosts(site, locations, hosts, held)
    g = _Gathered(held=held)
    scripts = {job.job_id: script for job, script in jobs}
    for host, items, out, err in done:
        if out is None:
            for job, _ in items:
                g.unreadable[job.job_id] = err
            continue
        g.add_host(host, items, out, scripts)
    read: dict[str, JobLogs] = {}
    for job, _ in jobs:
        if job.job_id in g.unreadable or job.job_id not in g.parts:
            continue
        if not g.parts[job.job_id] and g.denied.get(job.job_id):
            # Nothing read, and a folder the account may not enter: never "no failure found".
            g.unreadable[job.job_id] = _denied(site, job, g.denied[job.job_id])
            continue
        read[job.job_id] = logs = g.job_logs(job, step_pattern)
        if job.job_id in held:
            logs.whole = functools.partial(g.whole_logs, job, step_pattern)
    return read, g.unreadable


def _denied(site, job: JobInfo, where: list[tuple[str, str, str]]) -> RunbookError:
    """The error of a job whose logs this account may not read: where, as whom, and the grant
    that reads them as the job's owner."""
    from runbook.identity import NotPermitted, node_sudoers_line

    said = "; ".join(f"{folder} on {host or 'this host'} as {who}" for host, who, folder in where)
    owner = job.user or "the job's owner"
    line = node_sudoers_line(site.ssh.user, site.identity.owners_group)
    if site.identity.node_reads == "sudo":
        hint = (
            f'the node\'s sudo did not let the SSH account read as {owner}: grant it there ("{line}"), '
            "or make the folder readable to it"
        )
    else:
        hint = (
            f'set [identity] node_reads = "sudo" and grant the SSH account on the nodes "{line}" '
            f"(it then reads as {owner}), or give the job's logs a folder the SSH account may read"
        )
    return NotPermitted(
        f"job {job.job_id}'s logs could not be read: permission denied ({said}); nothing of "
        "them was seen, so no failure can be told apart from none",
        hint=hint,
    )


def _locations(jobs: list[tuple[JobInfo, str]], as_owner: bool = False) -> dict[tuple, list]:
    """Where each job's logs are, by the host that holds them (and, where the nodes' reads run
    as each job's owner, by owner): {(host, owner or ""): [(job, location)]}."""
    by_host: dict[tuple, list] = {}
    for job, script in jobs:
        for pattern in log_patterns(job, script):
            where = locate(
                pattern,
                job_id=job.raw,
                work_dir=job.work_dir or ".",
                job_name=job.name,
                user=job.user,
                array_job_id=job.array_job_id,
                array_task_id=job.array_task_id,
            )
            key = (log_host(job), (job.user or "") if as_owner else "")
            by_host.setdefault(key, []).append((job, where))
    return by_host


MAX_READ_OUTPUT = 512 << 20  # one host's read of every job it holds, at most


def _read_hosts(site, by_owner: dict[tuple, list], hosts, held: dict | None = None) -> list:
    """One filtering exec per host, hosts in parallel: [(host, items, stdout or None, error)],
    one row per (host, owner) group. Only the job's owner's files are read; where the nodes'
    reads run as each owner (sudo), a host's owners are read in the same exec, one after the
    other (the sweep's one round trip per host holds however many users' jobs it meets)."""
    by_host: dict[str, list[tuple[str, list]]] = {}
    for (host, owner), items in by_owner.items():
        by_host.setdefault(host, []).append((owner, items))

    def read_host(host: str, groups: list[tuple[str, list]]) -> list:
        argvs = [
            on_node_as_owner(
                site,
                owner,
                host,
                remote_grep_many_argv(
                    [
                        (w.directory, w.name_glob, job.user or "", _known(held, job))
                        for job, w in items
                    ],
                    tail=site.logs.tail_lines,
                    grow=site.sweep.watch_max_read_mib << 20,
                ),
            )
            for owner, items in groups
        ]
        argv, group = (argvs[0], "") if len(argvs) == 1 else one_exec(argvs)
        try:
            transport = _transport(site, host, hosts)
            # Each location sends at most its excerpt's cap and its tail: the exec of many jobs
            # keeps all of theirs (a 1 MiB output cap had cut every job after the first ones).
            n = sum(len(items) for _, items in groups)
            most = min(MAX_READ_OUTPUT, n * (REMOTE_CAP_BYTES + TAIL_WINDOW + WATCH_SERIES_BYTES))
            # A host holding many jobs takes longer: the first read of each (up to the growth
            # cap of each file) must finish, or no period ever gets past it.
            timeout = max(site.ssh.command_timeout_s, 60) + 2 * n
            r = transport.run(argv, timeout=timeout, max_output=most)
        except RunbookError as e:
            return [(host, items, None, e) for _, items in groups]
        outs = [r.stdout] if len(argvs) == 1 else r.stdout.split(group)
        rows: list[tuple] = []
        for n, (owner, items) in enumerate(groups):
            out = outs[n] if n < len(outs) else ""
            if owner and not out.lstrip("\n").startswith("@@now "):
                # The scan never started: the node's sudo refused to run it as the owner.
                rows.append((host, items, None, _sudo_refused(site, host, owner, r.stderr)))
            else:
                rows.append((host, items, out, None))
        return rows

    if len(by_host) <= 1:
        return [row for h, groups in by_host.items() for row in read_host(h, groups)]
    for host in by_host:  # connections are made from the pool's threads; entries made here
        if site.logs.read_on != "local" and host:
            hosts[host]
    with ThreadPoolExecutor(max_workers=max(1, site.ssh.max_parallel)) as pool:
        return [
            row for rows in pool.map(lambda kv: read_host(*kv), by_host.items()) for row in rows
        ]


def _known(held: dict | None, job) -> str:
    """A location's `known` argument: the watch's offsets for a held job, "" for a full read."""
    if held is None or job.job_id not in held:
        return ""
    return watch_known(held[job.job_id].offsets)


def one_exec(argvs: list[list[str]]) -> tuple[list[str], str]:
    """Several reads as one command line, each quoted whole: (the argv, the line between their
    outputs). The line carries a nonce: a tail's text is a log's own, and a log's line
    "@@owner-group-end" must not shift the owners' outputs onto each other's jobs."""
    group = f"\n@@owner-group-end {secrets.token_hex(8)}\n"
    sep = f"; printf '{group.encode('unicode_escape').decode()}'; "
    return ["sh", "-c", sep.join(shlex.join(a) for a in argvs)], group


def _sudo_refused(site, host: str, owner: str, stderr: str) -> RunbookError:
    from runbook.identity import NotPermitted, node_sudoers_line

    said = " ".join((stderr or "").split())[:200]
    return NotPermitted(
        f"the SSH account could not read as {owner} on {host or 'this host'}"
        + (f" ({said})" if said else ""),
        hint=f'grant it on the nodes: "{node_sudoers_line(site.ssh.user, site.identity.owners_group)}"'
        ', or set [identity] node_reads = "check" (it then reads only what it may itself)',
    )


@record
class _Gathered:
    """What the hosts' answers hold, by job id."""

    held: dict = field(default_factory=dict)  # {job id: Held}: the watched jobs
    parts: dict = field(default_factory=dict)  # [(excerpt text, task of its file)]
    watched: dict = field(default_factory=dict)  # {job id: {path: (ident, end, lines)}}
    series: dict = field(default_factory=dict)  # {job id: {path: [series lines]}}
    trends: dict = field(default_factory=dict)  # {job id: {path: [Trend]}}, of those lines
    bytes_read: dict = field(default_factory=dict)
    tails: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)
    quiet: dict = field(default_factory=dict)  # seconds since the log was last written
    unreadable: dict = field(default_factory=dict)
    missing: dict = field(default_factory=dict)  # lines the log does not show to be this run's
    denied: dict = field(default_factory=dict)  # [(host, account, folder)] it may not enter
    excerpts: dict = field(default_factory=dict)  # {job id: {path: Held.excerpt's entry}}
    tasks: dict = field(default_factory=dict)  # {job id: {path: its task}}
    appended: set = field(default_factory=set)  # (job id, path): lines of earlier runs set aside

    def add_host(self, host: str, items: list, out: str, scripts: dict) -> None:
        now = host_now(out)
        per_loc = split_locations(out)
        for n, (job, where) in enumerate(items):
            jid = job.job_id
            self.parts.setdefault(jid, [])
            self.raw.setdefault(jid, []).append(f"@@loc {where.pattern}\n{per_loc.get(n, '')}")
            excerpts = parse_grep_output(per_loc.get(n, ""))
            refused = refusals(per_loc.get(n, ""))
            for who, folder in refused.denied:
                self.denied.setdefault(jid, []).append((host, who, folder))
                self.notes.setdefault(jid, []).append(
                    f"{folder} on {host or 'this host'} could not be read as {who}: "
                    "permission denied"
                )
            for kind, owner, path in refused.skipped:
                self.notes.setdefault(jid, []).append(
                    f"{path} left unread: {kind} of {owner or 'an unknown account'}, not a file "
                    f"of the job's owner {job.user or '?'}"
                )
            if not excerpts and not refused.denied:
                self.notes.setdefault(jid, []).append(
                    f"no log file matched {where.pattern} on {host or 'this host'}"
                )
            for path, e in sorted(excerpts.items()):
                if e.start == 0:  # a chunk past the start follows lines this run already wrote
                    said, gaps = attribute(job, scripts.get(jid, ""), e)
                    self.notes.setdefault(jid, []).extend(said)
                    self.missing.setdefault(jid, []).extend(gaps)
                    if said or gaps:
                        self.appended.add((jid, path))
                self.tasks.setdefault(jid, {})[path] = task_of(where, path)
                if now is not None and e.mtime is not None:
                    self.quiet[jid] = min(self.quiet.get(jid, now - e.mtime), now - e.mtime)
                text = e.text()
                if jid in self.held:
                    self._watched(jid, path, e, text)
                if e.truncated and e.tail:
                    # The cap kept the earliest matching lines: a failure at the end of a log
                    # dense with them (a memory line every step) is in its last lines only.
                    text = _with_latest(text, e)
                self.parts[jid].append((text, task_of(where, path)))
                self.tails.setdefault(jid, []).extend(e.tail)
                self.notes.setdefault(jid, []).extend(e.notes)
                if e.truncated:
                    self.notes.setdefault(jid, []).append(
                        f"{path}: excerpt cut at the 1 MiB cap; the earliest lines were kept"
                    )

    def _watched(self, jid: str, path: str, e, text: str) -> None:
        """A watched file: where its read stopped, and the series lines to hold next (those held
        before, then the new ones: trend.held_and_trends). A file read again from its start
        (truncated, rotated, replaced) keeps the points held before, less any its new content
        holds again (a copy of the old one): none counts twice."""
        # The series lines the node sent apart, in the file's order with the others.
        new = [t for _, t in sorted(e.lines + e.series)] if e.series else text.split("\n")
        before = self.held[jid].series.get(path, [])
        if before and not e.start:
            again = set(new)
            before = [line for line in before if line not in again]
        if e.ident is not None:  # else read whole (no python3 on the node): from its start next
            self.watched.setdefault(jid, {})[path] = (e.ident, e.end, None)
            self.bytes_read[jid] = self.bytes_read.get(jid, 0) + max(0, (e.end or 0) - e.start)
        kept, trends = trend.held_and_trends([*before, *new])  # one reading for both
        self.series.setdefault(jid, {})[path] = kept
        self.trends.setdefault(jid, {})[path] = trends
        if e.ident is not None:
            self.excerpts.setdefault(jid, {})[path] = self._held_excerpt(jid, path, e)

    def _held_excerpt(self, jid: str, path: str, e) -> dict:
        """What to hold of a watched file's matching lines: those held before (the same file,
        read on from where they stopped) and this read's, with its last lines; nothing but the
        tail where they no longer reach back to the file's start."""
        prev = self.held[jid].excerpt.get(path)
        inode = e.ident.split("/")[0]  # the checksum of a file's first bytes grows with them
        base: list[list] = []
        tail: list[str] = []
        if e.start == 0:
            base, tail, whole = [], [], True
        elif prev and prev.get("ident", "").split("/")[0] == inode and prev.get("end") == e.start:
            # Read on from where the held lines stop (the node checked it is the same file).
            base, tail, whole = prev.get("lines") or [], prev.get("tail") or [], prev.get("whole")
        else:
            base, tail, whole = [], [], False
        whole = bool(whole) and not e.cut and not e.truncated and (jid, path) not in self.appended
        # This read's first lines may be context the held lines end with (the node sends the
        # lines before the chunk that a failure at its start has as context): each line once.
        had = {n for n, _ in base[-16:]}
        lines = [*base, *([n, t] for n, t in e.lines if n not in had)] if whole else []
        if sum(len(t) + 12 for _, t in lines) > HELD_EXCERPT_BYTES:
            whole, lines = False, []
        # The tail as a whole file's: its last lines, tracebacks' bodies left out but the last.
        tail = [t for t in tail if not TRACEBACK_BODY.search(t)] + list(e.tail)
        return {"ident": e.ident, "from": e.start, "end": e.end, "lines": lines,
                "tail": tail[-TAIL_LINES:], "whole": whole}  # fmt: skip

    def whole_logs(self, job: JobInfo, step_pattern: str):
        """A watched job's whole logs from what the watch held and this read (no read of the
        whole again), as a whole read gives them; None where what is held does not reach back to
        the start of every file read."""
        jid = job.job_id
        held, tasks = self.excerpts.get(jid, {}), self.tasks.get(jid, {})
        if not held or set(held) != set(tasks) or not all(x["whole"] for x in held.values()):
            return None
        parts = [("\n".join(t for _, t in held[p]["lines"]), tasks[p]) for p in sorted(held)]
        tails = [t for p in sorted(held) for t in held[p]["tail"]]
        logs = self.job_logs(job, step_pattern, parts=parts, tails=tails)
        # The incident folder's excerpt as a whole read's: the held lines as the node's grep
        # sends them (PATH NUL OFFSET:line), then this read's output.
        kept = [f"@@held {p}\n" + "".join(f"{p}\0{n}:{t}\n" for n, t in held[p]["lines"])
                for p in sorted(held)]  # fmt: skip
        logs.raw = "".join(kept) + logs.raw
        logs.notes = [
            *logs.notes,
            *(f"{p}: the lines before byte {held[p]['from']} are what the watch held of its "
              "periods' reads; only the rest was read now" for p in sorted(held) if held[p]["from"]),
        ]  # fmt: skip
        return logs

    def _held_trends(self, jid: str) -> list:
        """A watched job's every rank, from the series lines held and read (what a read of the
        whole log gives: trend.held_and_trends), one trend per series and rank, the first file's."""
        out, seen = [], set()
        for trends in self.trends.get(jid, {}).values():
            for t in trends:
                if (t.series, t.rank) not in seen:
                    seen.add((t.series, t.rank))
                    out.append(t)
        return out

    def job_logs(self, job: JobInfo, step_pattern: str, parts=None, tails=None) -> JobLogs:
        """The job's logs as read; `parts` and `tails` (whole_logs): the whole log's, the watch's
        held lines and this read's together."""
        jid = job.job_id
        launch = scan_parts(
            self.parts[jid] if parts is None else parts,
            nodes=job.nodes,
            tasks_per_node=job.tasks_per_node,
            world_size=job.num_tasks,
            every_rank=jid not in self.held,  # a watched job's come from _watched's reading
        )
        launch.tails = self.tails.get(jid, []) if tails is None else tails
        if jid in self.held:
            # Only this period's lines were scanned: the series come from what is held too
            # (after the failing ranks' own, where an OOM is in the new lines).
            seen = {(t.series, t.rank) for t in launch.trends}
            launch.trends += [t for t in self._held_trends(jid) if (t.series, t.rank) not in seen]
        job_notes = self.notes.get(jid, [])
        if not self.parts[jid]:
            launch.incomplete.append(
                f"no log of the job was found ({'; '.join(job_notes)}; the job's paths came "
                f"from {job.source})"
            )
        launch.incomplete.extend(n for n in job_notes if "cut at" in n or "denied" in n)
        launch.incomplete.extend(self.missing.get(jid, []))
        last = training_steps(launch.tails, step_pattern) if step_pattern else None
        return JobLogs(
            launch,
            last + 1 if last is not None else None,
            job_notes,
            "\n".join(self.raw.get(jid, [])),
            self.quiet.get(jid),
            self.watched.get(jid, {}),
            self.series.get(jid, {}),
            self.bytes_read.get(jid, 0),
            self.excerpts.get(jid, {}),
        )


def read_logs(site, job, script: str, hosts, held: Held | None = None) -> JobLogs:
    """One job's logs (one exec on its log host). Raises what made them unreadable. With what
    the sweep's watch holds of the job (`held`, state.watch_held: a period read it while it
    ran), only what the files gained since is read, and the whole log is what was held and
    that; where what is held does not reach back to every file's start, the whole is read."""
    done, unreadable = read_logs_many(
        site,
        [(job, script)],
        hosts,
        step_pattern=site.logs.step_pattern,
        held={job.job_id: held} if held is not None and held.offsets else None,
    )
    if job.job_id in unreadable:
        raise unreadable[job.job_id]
    logs = done[job.job_id]
    if logs.whole is not None:
        whole = logs.whole()
        return whole if whole is not None else read_logs(site, job, script, hosts)
    return logs


def fetch_dump(site, job, launch: LaunchReport, hosts) -> tuple[dict | None, str]:
    """runbook.instrument's dump for the failing rank, when the job wrote one (one more read):
    (the dump, its raw text)."""
    ff = launch.first_failure
    marks = [i for i in launch.instrument if i.kind == "oom-dump" and i.fields.get("path")]
    mine = [i for i in marks if ff and i.rank in ff.ranks] or marks
    if not mine:
        return None, ""
    # The path is the job's own word (its log says it): read only a regular file of the job's
    # owner, as the logs are, never whatever it names.
    argv = [
        "sh",
        "-c",
        '[ -f "$2" ] && [ ! -L "$2" ] && { [ -z "$1" ] || [ "$(stat -c %U -- "$2")" = "$1" ]; } '
        '&& head -c "$3" -- "$2"',
        "runbook-dump",
        job.user or "",
        mine[0].fields["path"],
        str(8 << 20),
    ]
    host = log_host(job)
    r = _transport(site, host, hosts).run(on_node_as_owner(site, job.user or "", host, argv))
    if not r.ok:
        return None, ""
    try:
        return json.loads(r.stdout), r.stdout
    except json.JSONDecodeError:
        return None, r.stdout


@record
class LineageEvidence:
    """The training run this job belongs to, from signed tags in Slurm: the rungs already tried
    (job id, rung; nearest first), comments that claimed a lineage and were not believed, and
    when the run's first job started."""

    tried: list[tuple[str, str]] = field(default_factory=list)
    suspicious: list[str] = field(default_factory=list)
    start: float | None = None
    # The node count of the run's first job, as Slurm recorded it (None: not known): the size
    # grow_world returns a shrunk job to.
    root_nodes: int | None = None
    # The training step this job's parent failed at, from the signed tag (None: not known).
    parent_failed_step: int | None = None
    # The parent's failing micro-batch and what its step needed at least (MiB), from the signed
    # tag: the fit's second attempt (planning.fit.refit).
    parent_need: tuple[int, float] | None = None


def lineage_of(site, client, job: JobInfo) -> LineageEvidence:
    from runbook import lineage

    secret, user = lineage.site_secret(site), lineage.runbook_user(site)
    tried, suspicious = lineage.walk(client, job, secret=secret, runbook_user=user)
    root: JobInfo | None = job
    if tried:
        # The parent of the oldest signed rerun started the run.
        try:
            last = client.job(tried[-1][0])
            claim = lineage.read(
                last.job_id, last.comment, last.user, secret=secret, runbook_user=user
            )
            root = client.job(claim.fields["parent"]) if claim and claim.trusted else last
        except (RunbookError, KeyError):
            root = None
    t = (root.start or root.submit) if root is not None else None
    own = lineage.read(job.job_id, job.comment, job.user, secret=secret, runbook_user=user)
    trusted = own is not None and own.trusted
    step = own.fields.get("step", "") if own is not None and trusted else ""
    need = lineage.parse_need(own.fields.get("need", "")) if own is not None and trusted else None
    return LineageEvidence(
        tried,
        suspicious,
        t.timestamp() if t else None,
        root.num_nodes if root else None,
        int(step) if step.isdigit() and len(step) <= 12 else None,
        need,
    )


@record
class CheckpointEvidence:
    """The newest valid checkpoint of this training run (None: start from the beginning), and
    the ones passed over, each with its reason."""

    chosen: Checkpoint | None = None
    skipped: list[Checkpoint] = field(default_factory=list)


def checkpoints_of(site, job: JobInfo, run: LineageEvidence) -> CheckpointEvidence:
    from runbook import checkpoints

    found = checkpoints.find(
        site.checkpoints.pattern,
        workdir=job.work_dir or ".",
        marker=site.checkpoints.marker,
        load_max_mib=site.checkpoints.load_check_max_mib,
    )
    found = checkpoints.of_lineage(
        found, since=run.start, until=job.end.timestamp() if job.end else None
    )
    chosen, skipped = checkpoints.newest_valid(found)
    return CheckpointEvidence(chosen, skipped)


@record
class HealthEvidence:
    """Node health of the nodes probed: each one's, the one the OOM happened on (or, when the
    failing node is not known, the first with a GPU fault), and what could not be read where."""

    nodes: dict[str, NodeHealth] = field(default_factory=dict)
    oom_node: NodeHealth | None = None
    unknown: dict[str, list[str]] = field(default_factory=dict)


def node_health(site, hosts, job: JobInfo, node: str | None) -> HealthEvidence:
    """Probe the failing node (else the job's first nodes) in one SSH exec per node."""
    from runbook.evidence.gpu_health import probe_nodes

    targets = [node] if node else job.nodes[: site.ssh.max_parallel]
    if not targets:
        return HealthEvidence()
    health = probe_nodes(
        hosts, targets, job.raw, site.probes, since=job.start, max_parallel=site.ssh.max_parallel
    )
    oom = (
        health.get(node)
        if node
        else next((h for h in health.values() if h.gpu_fault_reasons()), None)
    )
    unknown = {n: h.unknowns() for n, h in health.items() if h.unknowns()}
    return HealthEvidence(health, oom, unknown)


def job_pids_of(site, hosts, job: JobInfo, node: str | None) -> set[int] | None:
    """The job's PIDs on its failing node, read before the cancel ends them (None: unknown)."""
    from runbook.evidence.gpu_health import job_pids

    if not node:
        return None
    try:
        return job_pids(hosts[node], job.raw, site.probes.timeout_s)
    except RunbookError:
        return None


# slurmdbd stores a job's start record (its submit line and environment) a moment after the job
# starts: a job that fails within seconds of starting may not have them in accounting yet
# (measured on the test cluster: a rerun read 3 s after its start got no environment).
ACCOUNTING_LAG_S = 10.0
YOUNG_JOB_S = 120.0


def submission_of(
    client,
    job: JobInfo,
    *,
    have=None,
    need_env: bool = True,
    sleep=time.sleep,
    clock=time.monotonic,
):
    """How the job was submitted, as accounting recorded it (its command line, its environment);
    a Slurm that cannot say leaves it unknown with the reason, never stops the incident. For a
    job that started moments ago, accounting is asked again for up to ACCOUNTING_LAG_S.
    `have`: an earlier answer (only what it lacks is asked); `need_env` False: the command line
    is enough for now (the job stage: the environment is the plan's, read by then, while
    slurmdbd stores it, which took over a second on the test cluster)."""
    from runbook.slurm.client import Submission

    deadline, wait = clock() + ACCOUNTING_LAG_S, 0.25
    sub: Submission | None = have
    while True:
        if sub is None or not _complete(sub, need_env):
            try:
                # Only what accounting did not have yet (a backend that reads both in one call
                # reads both).
                sub = (
                    client.submission(job.job_id, have=sub)
                    if sub
                    else client.submission(job.job_id)
                )
            except RunbookError as e:
                return Submission(
                    notes=[f"how job {job.job_id} was submitted is unknown: {e.message}"]
                )
        young = job.start is not None and (datetime.now() - job.start).total_seconds() < YOUNG_JOB_S
        if _complete(sub, need_env) or not young or clock() >= deadline:
            return sub
        sleep(wait)  # one backoff: most records land within a second, a slow slurmdbd gets 10 s
        wait = min(wait * 2, 4.0)


def _complete(sub, need_env: bool) -> bool:
    return bool(sub.line) and (sub.env is not None or not need_env)


def capacity_of(client, job: JobInfo, node: str | None) -> int | None:
    """How many nodes of the job's partition could run it without the failing node (and the
    nodes it already excluded): up, not drained, responding. None when Slurm cannot say, so a
    plan never shrinks a job on a guess."""
    from runbook.slurm.client import usable_state

    partition = (job.partition or "").split(",")[0]
    if not node or not partition:
        return None
    try:
        states = client.partition_nodes(partition)
    except RunbookError:
        return None
    if node not in states:
        return None
    gone = {node, *job.excluded}
    return sum(1 for n, st in states.items() if n not in gone and usable_state(st))


def capacity_later(client, job: JobInfo, node: str | None):
    """capacity_of, asked of Slurm (`sinfo`) the first time a rung needs it, then kept: most
    plans never place the job, and need no partition read."""
    return functools.cache(lambda: capacity_of(client, job, node))


def usable_nodes(client, job: JobInfo) -> set[str] | None:
    """The nodes of the job's partition Slurm could schedule on now (up, not drained,
    responding), the job's own included; None when Slurm cannot say."""
    from runbook.slurm.client import usable_state

    partition = (job.partition or "").split(",")[0]
    if not partition:
        return None
    try:
        states = client.partition_nodes(partition)
    except RunbookError:
        return None
    return {n for n, st in states.items() if usable_state(st)} if states else None


def configs_of(job: JobInfo, script: str) -> list:
    """The config files the job script names, read where the job runs (its working folder;
    runbook's host sees it over the shared filesystem, as it sees the checkpoints), with the
    job's own arguments from its sbatch line (a recipe path built from $1..$N)."""
    from runbook.jobfiles.configs import read_configs
    from runbook.slurm.submit_line import script_arguments

    args = script_arguments(job.submit_line) if job.submit_line else None
    return read_configs(script, job.work_dir or ".", args)


def interpreter(
    env: dict[str, str], script: str = "", entry: str | None = None, exists=os.path.exists
) -> str | None:
    """The job's Python: the one its training command names by full path
    (`srun /shared/venv/bin/python3 train.py`), else its recorded environment's (its
    virtualenv's, its conda environment's, the first python3 or python on its PATH); one this
    host sees (a shared filesystem), else None."""
    if entry:
        for m in re.finditer(r"(?<![\w/.-])(/[\w./-]*/python[\d.]*)(?=[ \t])", script):
            tail = script[m.end() : m.end() + 400].split("\n", 1)[0]
            if entry in tail or entry.removesuffix(".py").replace("/", ".") in tail:
                return m.group(1) if exists(m.group(1)) else None
    dirs = [f"{env[k]}/bin" for k in ("VIRTUAL_ENV", "CONDA_PREFIX") if env.get(k)]
    dirs += [d for d in env.get("PATH", "").split(":") if d.startswith("/")]
    for d in dirs:
        for name in ("python3", "python"):
            if exists(f"{d}/{name}"):
                return f"{d}/{name}"
    return None


def program_asker(
    site, actor, job: JobInfo, submission, script: str = "", program=None, procs=None, rank=None
):
    """(the job's interpreter, how to run it, how it is asked, the words the failing rank ran
    with or None) for the program's own parser and planning.ask: as the job's owner (the
    actor's `sh`), in the job's folder, with the job's environment and no GPU, for 120 s at
    most. Where the failing rank's process was read (`procs`, asking.process, before the
    cancel), its interpreter, folder, environment and exact argv are the job's; else the
    recorded environment from accounting (Slurm 22.05 shows a job's `--env-vars` to an
    administrator only, never to its owner: measured on the test cluster), and where there is
    none, only an interpreter the training command names by full path is asked, with PATH
    alone, and the check says so. None where the site does not ask ([identity] ask_program) or
    no interpreter is known here."""
    if not site.identity.ask_program or actor is None:
        return None
    from runbook.asking.process import rank_process

    entry = getattr(program, "entry", None)
    proc = rank_process(procs or [], entry, rank)
    env: dict[str, str] | None
    if proc is not None:
        env, folder = proc.env, proc.cwd
        python = _process_python(proc)
        how = (f"as {actor.owner.name}, with the command line, folder and environment of pid "
               f"{proc.pid} (read on its node before the cancel)")  # fmt: skip
    else:
        env, folder = (submission.env if submission is not None else None), job.work_dir or "."
        python = interpreter(env or {}, script, entry)  # no environment: a full path, or none
        how = f"as {actor.owner.name}"
        if not env:
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
            how += ", with PATH only (the job's environment is not recorded where its owner may read it)"
    if python is None:
        return None
    return python, _owner_runner(actor, folder, env), how, proc.program() if proc else None


def _process_python(proc) -> str | None:
    """The interpreter a process was started as (its argv[0], a venv's own path: its resolved
    exe would lose the venv), where this host sees it."""
    import shutil

    first = proc.argv[0] if proc.argv else ""
    if first.startswith("/"):
        return first if os.path.exists(first) else None
    found = shutil.which(first, path=proc.env.get("PATH", "")) if first else None
    return found if found and found.startswith("/") else None


def _owner_runner(actor, folder: str, env: dict[str, str]):
    """argv -> (exit code, stdout, stderr, seconds): run as the job's owner in `folder`, with
    `env` only (no GPU, no bytecode written), for 120 s at most."""
    import subprocess

    own = {**env, "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"}
    assign = [f"{k}={v}" for k, v in own.items() if re.fullmatch(r"[A-Za-z_]\w*", k)]
    shell = 'cd -- "$1" || exit 126; shift; exec timeout 120 env -i "$@"'

    def run(argv: list[str]) -> tuple[int, str, str, float]:
        t0 = time.monotonic()
        words = actor.wrap(["sh", "-c", shell, "runbook-ask", folder, *assign, *argv])
        try:
            r = subprocess.run(words, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                               timeout=150, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            return 124, "", "no answer within 150 s", time.monotonic() - t0
        return r.returncode, r.stdout, r.stderr, time.monotonic() - t0

    return run


def process_of(site, hosts, job: JobInfo, node: str | None, owner: str) -> list | None:
    """The job's processes (asking.process) on its failing node and its batch host (where its
    batch script runs), read as its owner before the cancel ends them; None where none could be
    read (the plan then reads the batch script, and says so)."""
    from runbook.asking import process

    found: list = []
    read = False
    for host in dict.fromkeys(h for h in (node, job.batch_host) if h):
        argv = on_node_as_owner(
            site, owner, host, ["sh", "-c", process.SCRIPT, "runbook-procs", job.raw]
        )
        try:
            r = hosts[host].run(argv, timeout=site.probes.timeout_s)
        except RunbookError:
            continue
        if r.exit_code == 0:
            read = True
            found += process.parse(r.stdout)
    return found if read else None


def program_of(job: JobInfo, script: str):
    """The options the job's program takes (jobfiles.program), read where the job runs."""
    from runbook.jobfiles.program import program_options

    return program_options(script, job.work_dir or ".")


@record
class JobReads:
    """What the job stage reads of Slurm besides the job: its batch script, how it was
    submitted, and slurmctld's jobs (its chain, its lineage check): each once per incident."""

    script: str
    submission: Any
    queue: list | None


def job_reads(client, job: JobInfo, evidence: dict) -> JobReads:
    """The three reads at once where the backend runs each as a command of its own (they are
    independent; a slurmdbd query is most of their wall time), one after the other otherwise
    (pyslurm's calls share one library). A batch script that cannot be read raises, as it did
    alone; the other two say what they lack."""
    reads = {
        "script": lambda: client.batch_script(job.job_id),
        "submission": lambda: submission_of(client, job, need_env=False),
        "queue": lambda: queue_of(client, evidence),
    }
    if getattr(client, "name", "") != "cli":
        return JobReads(**{k: f() for k, f in reads.items()})
    with ThreadPoolExecutor(max_workers=len(reads)) as pool:
        futures = {k: pool.submit(f) for k, f in reads.items()}
        return JobReads(**{k: f.result() for k, f in futures.items()})


def queue_of(client, evidence: dict) -> list | None:
    """slurmctld's jobs, read once for the incident (its chain, its lineage check); None, said
    in the evidence's notes, when Slurm could not list them (each user then asks again)."""
    try:
        return client.queue()
    except RunbookError as e:
        evidence.setdefault("notes", []).append(
            f"slurmctld's jobs could not be listed ({e.message}): the chain and the rerun "
            "check ask Slurm again for themselves"
        )
        return None


def dependants_of(client, job: JobInfo, evidence: dict, queue: list | None = None) -> list:
    """The pending jobs that wait on this one (a chain), from this incident's `queue` (else
    Slurm is asked); a query that fails is said in the evidence's notes, and nothing is changed
    for jobs runbook could not see."""
    try:
        found = client.dependants(list(dict.fromkeys([job.job_id, job.raw])), queue)
    except RunbookError as e:
        evidence.setdefault("notes", []).append(
            f"the jobs waiting on {job.job_id} could not be listed ({e.message}): any chain "
            "after it is not pointed at the rerun"
        )
        return []
    if found:
        evidence["dependants"] = [
            {"job": d.job_id, "user": d.user, "dependency": d.dependency} for d in found
        ]
    return found
