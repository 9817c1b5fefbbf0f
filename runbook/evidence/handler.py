"""Whether a running job asked to be asked: runbook.instrument's `checkpoint-request` lines
(each rank declares that it checkpoints when runbook writes its request file), counted against
the world size its launcher set and Slurm's own figures; and the ranks' answers to a request
(`checkpoint-seen`, `checkpoint-missed`, `checkpoint`). Pure readings of the instrument's lines
of the job's log (launcher_log.InstrumentLine) and of Slurm's record of the job.

A request reaches only the code that polls the file, so nothing can die of it; still, runbook
asks only when every rank of the job declared: a rank that did not would train on past the
step the others saved and hold at. "Every rank" is the launcher's world size, confirmed by
Slurm (each Slurm task a rank under srun; nodes x ranks per node under torchrun), never the
ranks the log happens to show. The lines are the job's own words: they say what the job's code
did, for the job's owner's own job, never anything about another job.
"""

from __future__ import annotations

import os
import re
from dataclasses import field

from runbook import words
from runbook.instrument import REQUEST_PREFIX
from runbook.record import record


@record
class Handler:
    """What the job's ranks declared. `request` (the file runbook writes) is None unless every
    rank of the job declared, and Slurm's figures agree; `why` then says what is missing."""

    request: str | None = None
    ranks: list[int] = field(default_factory=list)  # the ranks that declared
    missing: list[int] = field(default_factory=list)  # ranks of the world that did not
    world: int | None = None  # the world size the ranks declared
    confirmed_by: str = ""  # how Slurm's figures confirm it, in words
    launcher: str = ""
    hosts: list[str] = field(default_factory=list)
    opted_in: bool = False  # every rank said prevent=yes (RUNBOOK_PREVENT=1)
    hold_s: float | None = None  # the shortest hold a rank declared
    why: str = ""


def seen_ranks(launch) -> set[int]:
    """Every rank a job's log shows running: its instrument start lines and memory series
    (launcher_log.LaunchReport). Said in a refusal, never the count runbook asks against."""
    ranks = {m.rank for m in launch.instrument if m.kind == "start" and m.rank is not None}
    return ranks | {t.rank for t in launch.trends if t.rank is not None}


def _int(fields: dict, key: str) -> int | None:
    v = fields.get(key, "")
    return int(v) if v.isdigit() else None


def _hold(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is None or value == value else None


def _path(line: str) -> str:
    return line.split(" request=", 1)[1].strip() if " request=" in line else ""


def request_name_ok(path: str, job) -> str | None:
    """Why runbook will not write `path` (None: it may): an absolute path, no `..`, named
    .runbook-checkpoint-<this job's id>: the only file runbook writes for a running job, so a
    log's words can never point it at another."""
    names = {REQUEST_PREFIX + i for i in (job.job_id, job.raw_id) if i}
    if not path.startswith("/") or ".." in path.split("/") or "\n" in path:
        return f"the request file {path!r} is not an absolute path without '..'"
    if os.path.basename(path) not in names:
        return (
            f"the request file {path!r} is not named {REQUEST_PREFIX}{job.job_id} "
            "(runbook writes no other name)"
        )
    return None


def _confirm(world: int, decl: dict[int, dict], job) -> tuple[str, str]:
    """(how Slurm's figures confirm the declared world size, or "", why not)."""
    launchers = {f.get("launcher", "unknown") for f in decl.values()}
    nodes, tasks = job.num_nodes, job.num_tasks
    declared_nodes = {_int(f, "slurm_nnodes") for f in decl.values()}
    if nodes is not None and declared_nodes not in ({nodes}, {None}):
        return "", (
            f"the ranks say their allocation has {sorted(n for n in declared_nodes if n)} "
            f"node(s), Slurm says {nodes}: the declarations are not this run's"
        )
    if launchers == {"srun"}:
        if tasks is None:
            return "", "Slurm shows no task count for the job: its world size is unconfirmed"
        if tasks != world:
            return "", (
                f"the ranks declare a world of {world}, Slurm runs {tasks} task(s) of this "
                "job (each task a rank under srun)"
            )
        return f"srun: Slurm's {tasks} task(s) are the {world} ranks", ""
    locals_ = {_int(f, "local_world") for f in decl.values()}
    if len(locals_) != 1 or None in locals_:
        return "", (
            f"the launcher ({', '.join(sorted(launchers))}) states no single number of ranks "
            "per node (LOCAL_WORLD_SIZE, or deepspeed's LOCAL_SIZE): the world size cannot be "
            "confirmed against Slurm"
        )
    per_node = locals_.pop()
    assert per_node is not None
    if nodes is None or nodes * per_node != world:
        return "", (
            f"the ranks declare a world of {world}; Slurm's {nodes if nodes else '?'} node(s) "
            f"x {per_node} rank(s) per node make {nodes * per_node if nodes else '?'}"
        )
    return f"{', '.join(sorted(launchers))}: Slurm's {nodes} node(s) x {per_node} per node", ""


def read(lines, job, seen: set[int] | None = None) -> Handler:
    """`lines`: the instrument's lines of the job's log, in order; `job`: Slurm's record of the
    job (slurm.client.JobInfo); `seen`: the ranks the log shows (said when they did not declare).
    A rank's newest declaration counts (a requeued run appends to the same log)."""
    decl: dict[int, dict] = {}
    refused = []
    for m in lines:
        if m.kind != "checkpoint-request" or m.rank is None:
            continue
        if "refused:" in m.line:
            refused.append(m.rank)
            continue
        decl[m.rank] = {**m.fields, "request": _path(m.line)}
    h = Handler(ranks=sorted(decl))
    if not decl:
        h.why = (
            "no rank declared that it checkpoints on request (runbook.instrument's "
            "checkpoint_on, or RUNBOOK_CHECKPOINT_ON_REQUEST=1 in the job's environment)"
            + (f"; {words.ranks(sorted(set(refused)))} could not" if refused else "")
        )
        return h
    worlds = {_int(f, "world") for f in decl.values()}
    if len(worlds) != 1 or None in worlds:
        h.why = (
            "the declaring ranks state different or no world sizes "
            f"({', '.join(str(w) if w else '-' for w in sorted(worlds, key=lambda w: w or 0))}): "
            "the job's world size is unknown"
        )
        return h
    world = h.world = worlds.pop()
    assert world is not None
    h.missing = sorted(set(range(world)) - set(decl))
    h.launcher = ", ".join(sorted({f.get("launcher", "unknown") for f in decl.values()}))
    h.hosts = sorted({f.get("host", "") for f in decl.values()} - {""})
    h.opted_in = all(f.get("prevent") == "yes" for f in decl.values())
    holds = [_hold(f.get("hold")) for f in decl.values()]
    h.hold_s = None if None in holds else min(h for h in holds if h is not None)
    if h.missing:
        quiet = sorted(set(seen or ()) & set(h.missing))
        h.why = (
            f"{words.ranks(h.missing)} of the job's {world} did not declare that "
            f"{'it checkpoints' if len(h.missing) == 1 else 'they checkpoint'} on request"
            + (
                f" ({words.ranks(quiet)} {'prints' if len(quiet) == 1 else 'print'} to this log)"
                if quiet
                else ""
            )
            + ": asked, the others would save and hold while they train on"
        )
        return h
    if extra := sorted(r for r in decl if r >= world):
        h.why = f"{words.ranks(extra)} declared beyond the world of {world}"
        return h
    confirmed, unconfirmed = _confirm(world, decl, job)
    if not confirmed:
        h.why = unconfirmed
        return h
    h.confirmed_by = confirmed
    if job.nodes and (strangers := sorted(set(h.hosts) - set(job.nodes))):
        h.why = f"ranks declared from {', '.join(strangers)}, not a node of job {job.job_id}"
        return h
    paths = {f["request"] for f in decl.values()}
    if len(paths) != 1:
        h.why = (
            f"the ranks poll {len(paths)} different request files: runbook writes one, "
            "which every rank must read (a folder shared by the job's nodes)"
        )
        return h
    path = paths.pop()
    if bad := request_name_ok(path, job):
        h.why = bad
        return h
    h.request = path
    return h


@record
class Answers:
    """The ranks' answers to request `ident`, from the log read after it was written."""

    seen: dict[int, int | None] = field(default_factory=dict)  # rank -> the step it said
    missed: dict[int, int] = field(default_factory=dict)  # rank -> the step it was at
    written: dict[int, tuple[int, str]] = field(default_factory=dict)  # rank -> (step, path)


def answers(lines, ident: str) -> Answers:
    """What the ranks answered to request `ident` (runbook.instrument's checkpoint-seen,
    checkpoint-missed and checkpoint lines that name it)."""
    a = Answers()
    for m in lines:
        if m.rank is None or m.fields.get("id") != ident:
            continue
        step = _int(m.fields, "step")
        if m.kind == "checkpoint-seen":
            a.seen.setdefault(m.rank, step)
        elif m.kind == "checkpoint-missed" and step is not None:
            a.missed[m.rank] = step
        elif m.kind == "checkpoint" and step is not None:
            path = m.line.split(" path=", 1)[1].strip() if " path=" in m.line else ""
            a.written[m.rank] = (step, path)
    return a


def step_to_save(a: Answers, world: int) -> int | None:
    """The one step every rank saves at, from the steps they said on seeing `next`: the
    highest, when every rank said one (all paused there or a step before); else the one after
    it (a rank that has not answered is blocked in that step's collective with the paused ones,
    or still computing it). None: no rank answered."""
    steps = [s for s in a.seen.values() if s is not None]
    if not steps:
        return None
    top = max(steps)
    return top if len(a.seen) >= world and len(steps) == len(a.seen) else top + 1


# Slurm's own convention for a checkpoint before the end: `#SBATCH --signal=[B:]USR1@SECONDS`,
# answered by Lightning's SLURMEnvironment(auto_requeue=True) and by submitit with a
# checkpoint and `scontrol requeue`. What each says in the job's files, in their own words.
_CONVENTION = (
    (re.compile(r"(?m)^\s*#SBATCH\s+--signal[= ](?:B:)?(?:SIG)?USR[12]@\d+"), "#SBATCH --signal"),
    (re.compile(r"SLURM auto-requeueing enabled"), "Lightning's SLURMEnvironment auto_requeue"),
    (re.compile(r"submitit\.core\._submit|SUBMITIT_EXECUTOR"), "submitit"),
)


def requeue_convention(*texts: str) -> list[str]:
    """Which of Slurm's checkpoint-and-requeue conventions the job's script or log shows."""
    return [name for pat, name in _CONVENTION if any(pat.search(t or "") for t in texts)]
