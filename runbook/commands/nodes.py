"""`runbook nodes`: each node's history across incidents."""

from __future__ import annotations

import json
import re
import time

import click

from runbook.errors import UsageError


def _since(value: str) -> float:
    m = re.fullmatch(r"(\d{1,5})([dh])", value.strip())
    if not m:
        raise UsageError(f"--since {value!r}: expected a number of days or hours, like 30d or 12h")
    n = int(m.group(1))
    return time.time() - n * (86400 if m.group(2) == "d" else 3600)


@click.command()
@click.option("--since", default="30d", show_default=True, help="How far back: 30d, 12h.")
@click.option("--node", metavar="NAME", help="One node's events, newest first.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: per node, the event count by kind and the events.",
)
@click.pass_obj
def nodes(app, since, node, as_json):
    """List each node's history across incidents.

    Xid and NVSwitch SXid events, row remaps, uncorrectable ECC, co-tenants seen, and OOMs that
    happened there, each counted once (an Xid burst is one event); and, from Slurm's accounting
    (`sacctmgr show event`), each time the node was drained or down (by whom, why) and when it
    returned to service. A site sets [nodes] drain_after_events so that a node with that many
    events in the window is drained with a reason instead of only excluded.

    \b
    Examples:
      runbook nodes
      runbook nodes --node gpu-07 --since 7d --json
    Exit codes: 0 ok, 2 usage error.
    """
    from runbook import state

    site = app.site()
    conn = state.site_db(site)
    rows = state.node_events(conn, since=_since(since), node=node)
    by_node: dict[str, dict] = {}
    for r in rows:
        entry = _entry(by_node, r["node"])
        entry["events"] += 1
        entry["kinds"][r["kind"]] = entry["kinds"].get(r["kind"], 0) + 1
        entry["last"] = max(entry["last"] or 0, r["at"])
        entry["history"].append(
            {
                "kind": r["kind"],
                "gpu": r["gpu"],
                "detail": r["detail"],
                "incident": r["incident"],
                "at": r["at"],
            }
        )
    # Slurm's record of drains and returns, for the one node asked about (one sacctmgr query;
    # the listing of every node stays runbook's own history, readable with Slurm down).
    slurm, unknown = _slurm_history(site, node, _since(since)) if node else ([], "")
    for ev in slurm:
        _entry(by_node, ev["node"])["service"].append(ev)
    limit = site.nodes.drain_after_events
    listed = sorted(by_node.values(), key=lambda e: (-e["events"], e["node"]))
    for e in listed:
        e["over_threshold"] = bool(limit and e["events"] >= limit)
    if as_json:
        doc = {"since": since, "drain_after_events": limit, "nodes": listed}
        doc["slurm_history"] = unknown or ("read" if node else "asked with --node only")
        click.echo(json.dumps(doc, indent=2))
        return
    if unknown:
        click.echo(f"# drains and returns to service: unknown ({unknown})")
    if not listed:
        click.echo(f"no node events in the last {since}")
        return
    for e in listed:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(e["kinds"].items()))
        mark = "  DRAIN THRESHOLD REACHED" if e["over_threshold"] else ""
        click.echo(f"{e['node']:<20}{e['events']:>4} event(s): {kinds}{mark}")
        if node:
            for at, text in _history_lines(e):
                click.echo(f"  {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(at))}  {text}")


def _entry(by_node: dict[str, dict], name: str) -> dict:
    """A node's row: runbook's own events (history) and Slurm's out-of-service periods."""
    return by_node.setdefault(
        name,
        {"node": name, "events": 0, "kinds": {}, "last": None, "history": [], "service": []},
    )


def _history_lines(e: dict) -> list[tuple[float, str]]:
    """(when, what) of one node, newest first: what runbook saw there, and each drain and
    return to service as Slurm recorded it."""
    rows = [
        (h["at"], f"{h['kind']:<10} {h['gpu']:<14} {h['detail']}  (incident {h['incident']})")
        for h in e["history"]
    ]
    for ev in e["service"]:
        if ev["start"] is not None:
            who = f"by {ev['user'] or 'an unknown user'}: {ev['reason']}"
            rows.append((ev["start"], f"{ev['state'].lower():<10} {who}"))
        if ev["end"] is not None:
            rows.append((ev["end"], f"{'returned':<10} to service (Slurm's record)"))
    return sorted(rows, key=lambda r: -r[0])


def _slurm_history(site, node: str | None, since: float) -> tuple[list[dict], str]:
    """Each period a node was drained or down, from Slurm's accounting (who, why, when it came
    back): ([event], "") or ([], why it could not be read). Read, never inferred."""
    from datetime import datetime

    from runbook.errors import RunbookError
    from runbook.slurm.factory import slurm_client

    try:
        events = slurm_client(site).node_history(node, datetime.fromtimestamp(since))
    except RunbookError as e:
        return [], e.message
    return [
        {
            "node": ev.node,
            "state": ev.state,
            "user": ev.user,
            "reason": ev.reason,
            "start": ev.start.timestamp() if ev.start else None,
            "end": ev.end.timestamp() if ev.end else None,
        }
        for ev in events
    ], ""
