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
    Exit codes: 0 ok, 1 the database cannot be reached, 2 configuration error (a schema newer
    than this runbook, a bad URL).
    """


def _open(app):
    """(the database's name for messages, a connection that does not check its version)."""
    from runbook import store

    site = app.site()
    target = site.state.url or str(site.path(site.state.dir) / "runbook.db")
    if not site.state.url:
        site.path(site.state.dir).mkdir(parents=True, exist_ok=True)
    schema = site.slurm.cluster if site.state.url else ""
    return store.describe(target), store.open_unchecked(target, schema=schema)


@state.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_obj
def show(app, as_json):
    """Print the state database in use, its schema version and its row counts."""
    from runbook import store

    name, db = _open(app)
    found = store.version(db)
    doc = {
        "database": name,
        "backend": db.kind,
        "schema": db.schema or None,
        "schema_version": found,
        "runbook_schema_version": store.SCHEMA_VERSION,
        "rows": {
            t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("incidents", "ledger", "deliveries", "locks", "node_events")
        }
        if found is not None
        else {},
    }
    db.close()
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    where = f", schema {doc['schema']}" if doc["schema"] else ""
    version = doc["schema_version"]
    click.echo(
        f"{doc['database']} ({doc['backend']}{where}), version "
        + (
            f"{version}"
            if version is not None
            else "none yet (runbook makes it on first use; `runbook state migrate` now)"
        )
    )
    for t, n in doc["rows"].items():
        click.echo(f"  {t:<12} {n}")


@state.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.pass_obj
def migrate(app, as_json):
    """Bring the state database's schema up to this runbook's version (idempotent)."""
    from runbook import store

    name, db = _open(app)
    try:
        before, after = store.migrate(db)
    finally:
        db.close()
    doc = {
        "database": name,
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
