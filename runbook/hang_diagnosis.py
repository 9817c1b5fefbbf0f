"""Who is different in a hung job: the ranks grouped by where their main thread stands.

In a hang every rank waits in the same collective except the one that never got there (a stuck
data read, a different collective, a Python deadlock) or that is gone. Grouping the ranks by
their stacks names it: the ranks outside the majority group, and their nodes, are the suspects.
Then the verdict, by what the evidence says about the suspects (playbooks/hang.yaml):

- gpu_fault: an Xid (or uncorrectable ECC) on a suspect's node, or on any node when no rank
  stands out;
- straggler_rank: a few ranks elsewhere (at most the playbook's share of the ranks);
- network: transport errors in the job's logs (NCCL's IB/socket warnings, gloo's connection
  errors) and no rank that stands out;
- unknown: otherwise, with what was missing.

Pure: captures and log lines in, a HangDiagnosis out.
"""

from __future__ import annotations

import re
from dataclasses import field

from runbook import words
from runbook.record import record

# Transport errors as NCCL, gloo and the IB stack print them. Watchdog timeouts are the hang's
# symptom, not its cause, so they are counted apart.
NETWORK = re.compile(
    r"NET/IB\s*:.*(?:error|failed)|NCCL WARN NET/|transport/net_ib|\bibv_\w+.*fail|"
    r"IBV_WC_\w*ERR|Got async event\s*:\s*port|RoCE|mlx5\S*:.*(?:error|down)|"
    r"Connection reset by peer|Connection closed by peer|Connection refused|No route to host|"
    r"Network is unreachable|Broken pipe",
    re.I,
)
WATCHDOG = re.compile(
    r"Watchdog caught collective operation timeout|ProcessGroupNCCL.*timed? ?out|"
    r"\bTimed out\b.*(?:collective|allreduce|all_reduce|barrier|broadcast)|"
    r"gloo.*(?:Timed out|timeout)",
    re.I,
)


@record
class RankView:
    node: str
    pid: int
    rank: int | None
    frames: list[str]  # innermost first
    signature: tuple[str, ...] = ()
    collective: str = ""  # the flight recorder's last collective, when the job keeps one
    seq: int | None = None  # that collective's sequence number


@record
class Group:
    signature: tuple[str, ...]
    members: list[RankView] = field(default_factory=list)
    majority: bool = False

    def contract(self) -> dict:
        rep = self.members[0]
        return {
            "ranks": [m.rank for m in self.members],
            "members": [{"rank": m.rank, "node": m.node, "pid": m.pid} for m in self.members],
            "majority": self.majority,
            "where": self.signature[0] if self.signature else "",
            "collective": rep.collective or None,
            "stack": rep.frames,
        }


@record
class HangDiagnosis:
    verdict: str
    reasons: list[str] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    suspects: list[dict] = field(default_factory=list)  # {rank, node, pid, why}
    suspect_nodes: list[str] = field(default_factory=list)
    missing_ranks: list[int] = field(default_factory=list)
    network_lines: list[str] = field(default_factory=list)
    watchdog_lines: list[str] = field(default_factory=list)
    gpu_faults: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # what could not be read, and why
    ranks_seen: int = 0
    world_size: int | None = None
    flight: dict[int, dict] = field(default_factory=dict)  # rank -> its last collective

    def contract(self) -> dict:
        return {
            "runbook": "hang",
            "verdict": self.verdict,
            "reasons": self.reasons,
            "groups": [g.contract() for g in self.groups],
            "suspects": self.suspects,
            "suspect_nodes": self.suspect_nodes,
            "missing_ranks": self.missing_ranks,
            "network_lines": self.network_lines,
            "watchdog_lines": self.watchdog_lines,
            "gpu_faults": self.gpu_faults,
            "unknown": self.unknown,
            "ranks_seen": self.ranks_seen,
            "world_size": self.world_size,
            "flight_recorder": self.flight,
        }


def signature(frames) -> tuple[str, ...]:
    """Where a rank stands: its main thread's functions and files, innermost first, without line
    numbers (ranks in the same collective may stand a line apart in a wrapper)."""
    return tuple(f"{f.function} ({f.file})" for f in frames)


def _block_node(rank: int, nodes: list[str], tasks_per_node: int | None) -> str | None:
    """Slurm's default (block) layout: ranks 0..n-1 on the first node, and so on."""
    if not nodes or not tasks_per_node or tasks_per_node <= 0:
        return None
    i = rank // tasks_per_node
    return nodes[i] if 0 <= i < len(nodes) else None


def classify_hang(
    captures: dict,
    *,
    log_lines: list[str],
    world_size: int | None,
    nodes: list[str],
    tasks_per_node: int | None,
    straggler_max_share: float,
) -> HangDiagnosis:
    """`captures`: {node: stacks.NodeCapture}; `log_lines`: the job's log lines as read."""
    d = HangDiagnosis(verdict="unknown", world_size=world_size)
    views, all_read = _read_captures(d, captures)
    _compare_collectives(d, views)
    d.ranks_seen = len(views)
    d.network_lines = [ln.strip()[:300] for ln in log_lines if NETWORK.search(ln)][:20]
    d.watchdog_lines = [ln.strip()[:300] for ln in log_lines if WATCHDOG.search(ln)][:20]

    by_sig: dict[tuple[str, ...], Group] = {}
    for v in views:
        by_sig.setdefault(v.signature, Group(v.signature)).members.append(v)
    groups = sorted(by_sig.values(), key=lambda g: (-len(g.members), g.signature))
    d.groups = groups
    seen_ranks = {v.rank for v in views if v.rank is not None}
    if world_size and all_read and seen_ranks:
        d.missing_ranks = [r for r in range(world_size) if r not in seen_ranks]

    outliers = _outliers(d, views, groups, nodes, tasks_per_node)
    size = world_size or len(views)
    limit = max(1, int(straggler_max_share * size))
    if outliers and len(outliers) <= limit:
        d.suspects = outliers
        d.suspect_nodes = sorted({s["node"] for s in outliers if s["node"]})
    elif outliers:
        d.reasons.append(
            f"{len(outliers)} ranks stand apart from the majority: more than the playbook's "
            f"straggler share ({straggler_max_share:g} of {size} ranks = {limit}); not one "
            "straggler"
        )
    for rule in (_faulty_suspect, _straggler, _network, _faulty_node):
        if rule(d, nodes):
            break
    else:
        _undetermined(d, views, groups)
    if d.unknown and d.verdict != "unknown":
        d.reasons.append("not read: " + "; ".join(d.unknown[:5]))
    return d


def _read_captures(d: HangDiagnosis, captures: dict) -> tuple[list[RankView], bool]:
    """Each node's capture: its ranks' main-thread stacks, flight records and GPU health; what
    could not be read goes to `d.unknown`. False with the views when a node's ranks were not all
    read (then a rank missing from the views is not known to be gone)."""
    views: list[RankView] = []
    all_read = True
    for node, cap in sorted(captures.items()):
        if cap.error:
            d.unknown.append(f"{node}: not reached ({cap.error})")
            all_read = False
            continue
        for part, why in cap.unavailable.items():
            d.unknown.append(f"{node}: {part}: {why}")
            if part in ("step_pids", "output"):
                all_read = False
        if cap.health is not None:
            reasons = cap.health.gpu_fault_reasons()
            if reasons:
                d.gpu_faults[node] = reasons
            for part, why in cap.health.unavailable.items():
                d.unknown.append(f"{node}: {part}: {why}")
        for rank, fr in cap.flight.items():
            d.flight[rank] = {
                "last_seq": fr.last_seq,
                "last_op": fr.last_op,
                "state": fr.state,
                "error": fr.error or None,
            }
        for r in cap.ranks:
            main = r.stack.main_thread()
            if main is None:
                continue
            sig = signature(main.frames)
            fr = cap.flight.get(r.rank) if r.rank is not None else None
            seq = fr.last_seq if fr is not None else None
            collective = (
                f"{fr.last_op} #{seq} ({fr.state})" if fr is not None and seq is not None else ""
            )
            frames = [f.text() for f in main.frames]
            views.append(RankView(node, r.pid, r.rank, frames, sig, collective, seq))
    return views, all_read


def _compare_collectives(d: HangDiagnosis, views: list[RankView]) -> None:
    """Ranks in the same code but at another collective are not in the same place; but only when
    every rank's flight recorder was read: a rank whose record came back and a rank whose did
    not are not apart for that."""
    if views and all(v.seq is not None for v in views):
        for v in views:
            v.signature = (*v.signature, f"collective #{v.seq}")
    elif any(v.seq is not None for v in views):
        read = sorted(v.rank for v in views if v.seq is not None and v.rank is not None)
        d.unknown.append(
            f"flight recorder: read for {words.ranks(read)} of {len(views)} only; "
            "collectives not compared"
        )


def _outliers(d: HangDiagnosis, views, groups: list[Group], nodes, tasks_per_node) -> list[dict]:
    """The ranks outside the largest group (when there is one), and the ranks with no process."""
    outliers: list[dict] = []
    if groups and (len(groups) == 1 or len(groups[0].members) > len(groups[1].members)):
        groups[0].majority = True
        where = groups[0].signature[0] if groups[0].signature else "?"
        first = groups[0].members[0].collective
        for g in groups[1:]:
            for m in g.members:
                outliers.append(
                    {
                        "rank": m.rank,
                        "node": m.node,
                        "pid": m.pid,
                        "why": f"in {m.frames[0] if m.frames else '?'}"
                        + (f" (last collective {m.collective})" if m.collective else "")
                        + f", while {len(groups[0].members)} ranks wait in {where}"
                        + (f" (last collective {first})" if first else ""),
                    }
                )
    elif groups:
        d.reasons.append(
            f"no majority: the {len(views)} ranks stand in {len(groups)} places of equal size; "
            "who is different cannot be told from the stacks"
        )
    for r in d.missing_ranks:
        outliers.append(
            {
                "rank": r,
                "node": _block_node(r, nodes, tasks_per_node),
                "pid": None,
                "why": "no process of this rank on its node (it exited or was killed)",
            }
        )
    return outliers


# -- the verdict's rules, in order: each sets it and says why, or answers False ---------------
def _faulty_suspect(d: HangDiagnosis, nodes: list[str]) -> bool:
    """A suspect's node has a GPU fault: the fault, not the code."""
    faulty = [n for n in d.suspect_nodes if n in d.gpu_faults]
    if not faulty:
        return False
    d.verdict = "gpu_fault"
    d.suspect_nodes = faulty
    for n in faulty:
        d.reasons.append(f"suspect node {n}: " + "; ".join(d.gpu_faults[n]))
    return True


def _straggler(d: HangDiagnosis, nodes: list[str]) -> bool:
    """A few ranks stand apart from the rest (or have no process): they hold the others."""
    if not d.suspects:
        return False
    d.verdict = "straggler_rank"
    for s in d.suspects:
        d.reasons.append(
            f"rank {s['rank'] if s['rank'] is not None else '?'} on {s['node'] or '?'}: {s['why']}"
        )
    if d.network_lines:
        d.reasons.append(
            f"also {words.count(len(d.network_lines), 'transport error line')} in the logs (network possible)"
        )
    return True


def _network(d: HangDiagnosis, nodes: list[str]) -> bool:
    """Everyone waits in one place and the transport complained: the network."""
    if not d.network_lines:
        return False
    d.verdict = "network"
    d.reasons.append(
        "every rank waits in the same place and the logs hold "
        f"{words.count(len(d.network_lines), 'transport error line')}, first: {d.network_lines[0]}"
    )
    named = sorted({n for n in nodes if any(n in ln for ln in d.network_lines)})
    if len(named) == 1:
        d.suspect_nodes = named
    return True


def _faulty_node(d: HangDiagnosis, nodes: list[str]) -> bool:
    """No rank stands apart, but a node of the job has a GPU fault."""
    if not d.gpu_faults:
        return False
    d.verdict = "gpu_fault"
    d.suspect_nodes = sorted(d.gpu_faults)
    for n in d.suspect_nodes:
        d.reasons.append(f"{n}: " + "; ".join(d.gpu_faults[n]))
    return True


def _undetermined(d: HangDiagnosis, views: list[RankView], groups: list[Group]) -> None:
    if not views:
        d.reasons.append("no rank's stack could be read: " + ("; ".join(d.unknown) or "?"))
    elif len(groups) == 1:
        d.reasons.append(
            f"all {len(views)} ranks read stand in the same place "
            f"({groups[0].signature[0] if groups[0].signature else '?'}), no transport "
            "error in the logs and no GPU fault: the cause is not in this evidence"
        )
