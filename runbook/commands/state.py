"""`runbook state`: the state database itself (SQLite, or PostgreSQL shared by agent hosts)."""

from __future__ import annotations

import json

import click


@click.group()
def state():
    """Show or migrate runbook's state database.

    The state (incidents, the action ledger, locks, the hook's queue, node history) lives in
    SQLite in [state] dir, or in PostgreSQL shared by several agent hosts with [state] url
    (postgresql://user@host/db); sites of several clusters ([slurm] cluster) share one
    PostgreSQL, each in a schema named after its cluster. An embedded SQLite database is brought up to date when opened;
    a shared PostgreSQL one only by `runbook state migrate`, run once by an admin (safe while
    other hosts run): until then every runbook on it stops with that hint.

    \b
    Examples:
      runbook --site prod state show
      runbook --site prod state migrate --json
    Exit codes: 0 ok, 2 configuration error (unreachable, newer schema, bad URL).
    """


def _target(site) -> str:
    return site.state.url or str(site.path(site.state.dir) / "runbook.db")


@state.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_obj
def show(app, as_json):
    """Print the state database in use, its schema version and its row counts."""
    from runbook import store

    site = app.site()
    target = _target(site)
    db = store.open_unchecked(target, schema=site.slurm.cluster if site.state.url else "")
    doc = {
        "database": store.describe(target),
        "backend": db.kind,
        "schema": db.schema or None,
        "schema_version": store.version(db),
        "runbook_schema_version": store.SCHEMA_VERSION,
        "rows": {
            t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("incidents", "ledger", "deliveries", "locks", "node_events")
        },
    }
    db.close()
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    where = f", schema {doc['schema']}" if doc["schema"] else ""
    click.echo(f"{doc['database']} ({doc['backend']}{where}), version {doc['schema_version']}")
    for t, n in doc["rows"].items():
        click.echo(f"  {t:<12} {n}")


@state.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_obj
def migrate(app, as_json):
    """Bring the state database's schema up to this runbook's version (idempotent)."""
    from runbook import store

    site = app.site()
    target = _target(site)
    if not site.state.url:
        site.path(site.state.dir).mkdir(parents=True, exist_ok=True)
    db = store.open_unchecked(target, schema=site.slurm.cluster if site.state.url else "")
    try:
        before, after = store.migrate(db)
    finally:
        db.close()
    doc = {
        "database": store.describe(target),
        "schema": db.schema or None,
        "before": before,
        "after": after,
    }
    if as_json:
        click.echo(json.dumps(doc))
    else:
        was = "new" if before is None else f"version {before}"
        where = f" (schema {doc['schema']})" if doc["schema"] else ""
        click.echo(f"{doc['database']}{where}: {was} -> version {after}")
