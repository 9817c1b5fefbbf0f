"""What an incident saw on a node, as events for the node's history (`runbook nodes`).

One event per thing that happened, counted once: Xid lines repeat in bursts, so an Xid is keyed by
node, GPU, number and a ten-minute bucket of its time; a pending row remap or a remap failure by
node and GPU; an uncorrectable-ECC count by node, GPU and the count itself; a co-tenant by node and
PID; an OOM by its incident. Lines stamped in the first minutes after boot (the kernel's seconds
since boot, below `boot_grace_s`) are the boot's own noise, not failures. Pure: values in, values
out.
"""

from __future__ import annotations

from runbook import record as records  # this module has its own record()
from runbook import words

XID_BUCKET_S = 600.0


@records.record(frozen=True)
class NodeEvent:
    key: str  # the same event seen again has the same key
    node: str
    kind: str  # xid | sxid | row_remap | ecc | co_tenant | oom
    gpu: str
    detail: str
    incident: str
    at: float


def _seconds_since_boot(stamp: str | None) -> float | None:
    try:
        return float(stamp) if stamp and "." in stamp and ":" not in stamp else None
    except ValueError:
        return None


def events_of(
    node: str,
    health,
    *,
    incident: str,
    verdict: str | None,
    now: float,
    job_id: str | None = None,
    boot_grace_s: float = 300.0,
) -> list[NodeEvent]:
    out: list[NodeEvent] = []
    kernel = getattr(health, "kernel", None)
    for e in kernel.events if kernel else []:
        since_boot = _seconds_since_boot(e.time)
        if since_boot is not None and since_boot < boot_grace_s:
            continue
        when = e.when.timestamp() if e.when else now
        bucket = int(when // XID_BUCKET_S) if e.when else (e.time or incident)
        kind = "sxid" if e.source == "sxid" else "xid"
        gpu = e.pci or "?"
        out.append(
            NodeEvent(
                f"{kind}:{node}:{gpu}:{e.xid}:{bucket}",
                node,
                kind,
                gpu,
                f"{kind.upper() if kind == 'sxid' else 'Xid'} {e.xid} ({e.category})",
                incident,
                when,
            )
        )
    memory = getattr(health, "memory", None)
    for g in memory.gpus if memory else []:
        gpu = g.bus_id or "?"
        for state, flag in (("pending", g.remap_pending), ("failure", g.remap_failure)):
            if flag:
                out.append(
                    NodeEvent(
                        f"row_remap:{node}:{gpu}:{state}",
                        node,
                        "row_remap",
                        gpu,
                        f"row remap {state}",
                        incident,
                        now,
                    )
                )
        if g.volatile_uncorrectable:
            n = g.volatile_uncorrectable
            out.append(
                NodeEvent(
                    f"ecc:{node}:{gpu}:{n}",
                    node,
                    "ecc",
                    gpu,
                    words.count(n, "volatile uncorrectable ECC error"),
                    incident,
                    now,
                )
            )
    if health is not None and getattr(health, "apps", None):
        for app in health.foreign_apps(job_id):
            out.append(
                NodeEvent(
                    f"co_tenant:{node}:{app.pid}",
                    node,
                    "co_tenant",
                    app.gpu or "?",
                    f"PID {app.pid} held {app.used_mib} MiB",
                    incident,
                    now,
                )
            )
    if verdict in ("true_oom", "fragmentation", "co_tenant", "gpu_fault", "host_oom"):
        out.append(
            NodeEvent(f"oom:{node}:{incident}", node, "oom", "?", f"OOM ({verdict})", incident, now)
        )
    return out


def record(
    conn,
    site,
    health,
    node: str | None,
    *,
    incident: str,
    verdict: str | None,
    job_id: str | None,
    now: float,
) -> int:
    """Add what this incident saw on each probed node to the nodes' history (each event once),
    and return how many events the failing node has in the site's window."""
    from runbook import state

    events = [
        e
        for name, h in health.nodes.items()
        for e in events_of(
            name,
            h,
            incident=incident,
            verdict=verdict if name == node else None,
            now=now,
            job_id=job_id,
            boot_grace_s=site.nodes.boot_grace_s,
        )
    ]
    with conn.write():  # every node's events and the count: one transaction, not one a row
        state.record_node_events(conn, events)
        if not node:
            return 0
        since = now - site.nodes.window_days * 86400
        return len(state.node_events(conn, since=since, node=node))
