"""Slurm's job dependencies as text (`squeue %E`, `scontrol show job`'s Dependency): which
pending jobs wait on a job, whether cancelling it would set them off, and the same dependency
pointed at the job's rerun. Pure functions of text.

Slurm prints a pending job's dependency as terms joined by `,` (all must hold) or `?` (any one),
each `TYPE:ID[+MINUTES][(STATE)]`, several ids of one type joined by `:`, e.g.
`afterok:2300(unfulfilled),afterany:2301(failed)`; `singleton` has no id.
"""

from __future__ import annotations

import re

from runbook.record import record

# The types a cancel satisfies at once: a job waiting on them starts the moment its job ends,
# however it ends (afterany), or because it did not succeed (afternotok). afterok never does.
SET_OFF_BY_CANCEL = frozenset({"afterany", "afternotok", "afterburstbuffer"})
_TERM = re.compile(r"^([a-z_]{1,32}):(.*)$")
_ID = re.compile(r"^(\d{1,18}(?:_\d{1,18})?)(\+\d{1,9})?(?:\([A-Za-z_]{1,32}\))?$")
NONE = {"", "(null)", "None"}


@record
class Dependant:
    """A pending job that waits on another: its id, owner and dependency as Slurm shows it, and
    the id of the job it waits on as its dependency names it (`A_T` or the raw id of a task)."""

    job_id: str
    user: str
    dependency: str
    on: str


def _split(dep: str) -> tuple[list[str], str]:
    sep = "?" if "?" in dep else ","
    return [t for t in dep.split(sep) if t], sep


def types_on(dep: str, job_id: str) -> set[str]:
    """The dependency types of `dep` that name `job_id`."""
    if dep.strip() in NONE:
        return set()
    out = set()
    for term in _split(dep.strip())[0]:
        m = _TERM.match(term)
        if not m:
            continue
        for one in m.group(2).split(":"):
            idm = _ID.match(one)
            if idm and idm.group(1) == job_id:
                out.add(m.group(1))
    return out


def repointed(dep: str, old: str, new: str) -> str | None:
    """`dep` with `old` replaced by `new` in each term that names it, the same types, each
    term's shown state dropped (scontrol update takes none); None: `dep` names no `old`, or
    holds a term runbook cannot read (it is then not rewritten)."""
    terms, sep = _split(dep.strip())
    out, hit = [], False
    for term in terms:
        m = _TERM.match(term)
        if not m:
            if term == "singleton":
                out.append(term)
                continue
            return None
        ids = []
        for one in m.group(2).split(":"):
            idm = _ID.match(one)
            if not idm:
                return None
            jid, delay = idm.group(1), idm.group(2) or ""
            hit |= jid == old
            ids.append((new if jid == old else jid) + delay)
        out.append(f"{m.group(1)}:{':'.join(ids)}")
    return sep.join(out) if hit else None


@record
class Queued:
    """One job slurmctld holds (pending, running, or ended within MinJobAge), as `squeue -t all`
    lists it: what a chain and the lineage check need of it. The comment is the user's text:
    data, never proof (runbook.lineage signs its own; a chain's change re-reads the job)."""

    job_id: str
    user: str
    state: str
    dependency: str
    comment: str


def parse_queue(text: str, sep: str) -> list[Queued]:
    """`squeue -h -a -t all -o %i<sep>%u<sep>%T<sep>%E<sep>%k` lines. The comment is last, so a
    separator in it stays in it; a line that is not five fields (a comment's second line) is
    not a job."""
    out = []
    for line in text.splitlines():
        parts = line.split(sep, 4)
        if len(parts) == 5 and parts[0].strip():
            job_id, user, st, dep, comment = parts
            out.append(Queued(job_id.strip(), user.strip(), st.strip(), dep.strip(), comment))
    return out


def dependants_in(queue: list[Queued], job_ids: list[str]) -> list[Dependant]:
    """The pending jobs of `queue` whose dependency names one of `job_ids` (an array task is
    named `A_T` or by its raw id, as the user wrote it)."""
    out = []
    for q in queue:
        on = next((j for j in job_ids if types_on(q.dependency, j)), None)
        if q.state == "PENDING" and on is not None:
            out.append(Dependant(q.job_id, q.user, q.dependency, on))
    return out
