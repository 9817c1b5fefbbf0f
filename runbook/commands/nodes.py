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
    happened there, each counted once (an Xid burst is one event). A site sets [nodes] drain_after_events so that a node with that many
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
        entry = by_node.setdefault(
            r["node"], {"node": r["node"], "events": 0, "kinds": {}, "last": None, "history": []}
        )
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
    limit = site.nodes.drain_after_events
    listed = sorted(by_node.values(), key=lambda e: (-e["events"], e["node"]))
    for e in listed:
        e["over_threshold"] = bool(limit and e["events"] >= limit)
    if as_json:
        click.echo(
            json.dumps({"since": since, "drain_after_events": limit, "nodes": listed}, indent=2)
        )
        return
    if not listed:
        click.echo(f"no node events in the last {since}")
        return
    for e in listed:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(e["kinds"].items()))
        mark = "  DRAIN THRESHOLD REACHED" if e["over_threshold"] else ""
        click.echo(f"{e['node']:<20}{e['events']:>4} event(s): {kinds}{mark}")
        if node:
            for h in e["history"]:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(h["at"]))
                click.echo(
                    f"  {when}  {h['kind']:<10} {h['gpu']:<14} {h['detail']}"
                    f"  (incident {h['incident']})"
                )
