"""The state database's connection: SQLite (embedded, one agent host) or PostgreSQL (shared by
several agent hosts), behind one small interface, with the few dialect differences translated
here and nowhere else.

runbook's SQL is written once, in SQLite's spelling with `?` placeholders; for PostgreSQL the
placeholders become `%s` and `INSERT OR IGNORE` becomes `ON CONFLICT DO NOTHING`. A write that
reads before it writes (take a lock, claim a delivery) runs in `Db.write()`: SQLite's `BEGIN
IMMEDIATE`, or on PostgreSQL a transaction that first takes one transaction-scoped advisory lock,
so writers are serialized the same way on both.

The schema carries a version (table `schema_version`). An embedded SQLite database is brought up
to date when opened; a shared PostgreSQL one only by `runbook state migrate` (an admin step while
other hosts may be running): a host that finds it older or newer says so and does nothing.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from runbook.errors import ConfigError, RunbookError

SCHEMA_VERSION = 5

# Column types differ: PostgreSQL's REAL is 4 bytes, too coarse for epoch seconds.
_TYPES = {
    "sqlite": {"real": "REAL", "serial": "INTEGER PRIMARY KEY AUTOINCREMENT"},
    "postgresql": {"real": "DOUBLE PRECISION", "serial": "BIGSERIAL PRIMARY KEY"},
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS incidents(
  id TEXT PRIMARY KEY, job_id TEXT NOT NULL, source TEXT, created {real}, status TEXT,
  verdict TEXT, folder TEXT, parent_incident TEXT, new_job_id TEXT, data TEXT, updated {real});
CREATE INDEX IF NOT EXISTS incidents_job ON incidents(job_id);
CREATE TABLE IF NOT EXISTS ledger(
  seq {serial}, key TEXT NOT NULL, incident TEXT, kind TEXT,
  target TEXT, argv TEXT, status TEXT, exit_code INTEGER, output_tail TEXT, duration_s {real},
  actor TEXT, message TEXT, value TEXT, at {real});
CREATE UNIQUE INDEX IF NOT EXISTS ledger_applied_once ON ledger(key) WHERE status = 'applied';
CREATE TABLE IF NOT EXISTS deliveries(
  key TEXT PRIMARY KEY, job_id TEXT, incident TEXT, source TEXT, status TEXT, created {real},
  title TEXT, attempts INTEGER DEFAULT 0, next_at {real}, last_error TEXT, owner TEXT,
  updated {real});
CREATE TABLE IF NOT EXISTS outbox(
  id {serial}, sink TEXT, incident TEXT, payload TEXT, attempts INTEGER,
  last_error TEXT, created {real}, sent {real}, claimed_at {real});
CREATE TABLE IF NOT EXISTS locks(
  name TEXT PRIMARY KEY, holder TEXT, host TEXT, pid INTEGER, acquired {real}, expires {real});
CREATE TABLE IF NOT EXISTS node_events(
  key TEXT PRIMARY KEY, node TEXT NOT NULL, kind TEXT, gpu TEXT, detail TEXT, incident TEXT,
  at {real});
CREATE INDEX IF NOT EXISTS node_events_node ON node_events(node, at);
CREATE TABLE IF NOT EXISTS job_progress(
  job_id TEXT PRIMARY KEY, step INTEGER, since {real}, seen {real});
CREATE TABLE IF NOT EXISTS watch_files(
  job_id TEXT NOT NULL, path TEXT NOT NULL, ident TEXT, upto INTEGER, lines INTEGER,
  updated {real}, PRIMARY KEY(job_id, path));
CREATE TABLE IF NOT EXISTS watch_series(
  job_id TEXT PRIMARY KEY, run TEXT, data TEXT, updated {real});
"""

# Columns added after a table first shipped, by schema version: (version, table, column, type).
# A database made before keeps its rows and gains the columns.
COLUMNS = [
    (1, "deliveries", "title", "TEXT"),
    (1, "deliveries", "attempts", "INTEGER DEFAULT 0"),
    (1, "deliveries", "next_at", "{real}"),
    (1, "deliveries", "last_error", "TEXT"),
    (1, "deliveries", "owner", "TEXT"),
    (1, "deliveries", "updated", "{real}"),
    # 3: a message being sent is claimed, so two hosts flushing one outbox never both send it
    (3, "outbox", "claimed_at", "{real}"),
    # 4: when an incident last ran: a resumed one (its `created` is days old) lists as current
    (4, "incidents", "updated", "{real}"),
]

# The one advisory lock every PostgreSQL write transaction takes first (any constant works; this
# one spells "runbook" in the low bytes, so it is recognisable in pg_locks).
_WRITE_LOCK = 0x72756E626F6F6B


class StateUnavailable(RunbookError):
    """The state database cannot be written now (disk full, locked too long, unreachable)."""


class PostgresError(Exception):
    """An error of psycopg's, raised again by Db as this one (the original its __cause__, its
    class name `kind`): what catches the state's errors then needs no psycopg imported, and a
    site on SQLite never imports it (66 ms of every command's start-up, docs/scale.md)."""

    def __init__(self, message: str, kind: str = ""):
        super().__init__(message)
        self.kind = kind


@contextmanager
def _pg_errors() -> Iterator[None]:
    import psycopg  # already loaded: only a PostgreSQL Db gets here

    try:
        yield
    except psycopg.Error as e:
        raise PostgresError(str(e), type(e).__name__) from e


def _db_errors() -> tuple[type[Exception], ...]:
    return (sqlite3.Error, PostgresError)


# What a state database raises when it cannot answer (locked, full, gone, refused).
DB_ERRORS: tuple[type[Exception], ...] = _db_errors()
# ... and, with runbook's own errors (unreachable, wrong schema), what a caller that must go on
# catches.
STATE_ERRORS: tuple[type[Exception], ...] = (RunbookError, *DB_ERRORS)


class Row(dict):
    """A PostgreSQL row read like sqlite3.Row: by column name, by position, or as a dict."""

    def __getitem__(self, key):
        if isinstance(key, int):
            return list(self.values())[key]
        return dict.__getitem__(self, key)


def _pg_rows(cursor):
    names = [d.name for d in cursor.description] if cursor.description else []
    return lambda values: Row(zip(names, values, strict=True))


@functools.lru_cache(maxsize=256)
def _to_pg(sql: str, escape: bool) -> str:
    if escape:
        sql = sql.replace("%", "%%")
    sql = sql.replace("?", "%s")
    if re.match(r"\s*INSERT OR IGNORE INTO", sql):
        sql = (
            re.sub(r"INSERT OR IGNORE INTO", "INSERT INTO", sql, count=1)
            + " ON CONFLICT DO NOTHING"
        )
    return sql


class Db:
    """One connection to the state database. `execute` and `executemany` as sqlite3's; `write()`
    for a read-then-write that must not interleave with another process's; `reopen()` for a
    second connection to the same database (another thread: a lease's heartbeat)."""

    def __init__(self, raw, kind: str, target: str, schema: str = ""):
        self.raw, self.kind, self.target, self.schema = raw, kind, target, schema

    def execute(self, sql: str, params: tuple | list = ()) -> Any:
        if self.kind == "sqlite":
            return self.raw.execute(sql, params)
        with _pg_errors():
            return self.raw.execute(_to_pg(sql, bool(params)), params or None)

    def executemany(self, sql: str, rows: list) -> int:
        """Runs `sql` once per row; returns how many rows it changed."""
        if self.kind == "sqlite":
            return self.raw.executemany(sql, rows).rowcount
        changed = 0
        with _pg_errors(), self.raw.cursor() as cur:
            for row in rows:
                cur.execute(_to_pg(sql, True), row)
                changed += max(cur.rowcount, 0)
        return changed

    @contextmanager
    def write(self) -> Iterator[Db]:
        """A write transaction that no other runbook process's write interleaves with:
        committed at the end of the block, rolled back on any exception."""
        if self.kind == "sqlite":
            self.raw.execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                self.raw.execute("ROLLBACK")
                raise
            self.raw.execute("COMMIT")
            return
        with _pg_errors(), self.raw.transaction():
            self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            yield self

    def reopen(self) -> Db:
        """A second connection to a database this one already checked the schema of."""
        return open_unchecked(self.target, schema=self.schema)

    def close(self) -> None:
        self.raw.close()


def describe(target: str) -> str:
    """The database, for messages: the SQLite file, or the PostgreSQL URL without a password."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", target)


def is_postgres(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def connect(target: str, *, migrate: bool | None = None, schema: str = "") -> Db:
    """Open the state database `target` (a SQLite path, or a postgresql:// URL) and check its
    schema version. `migrate`: bring an older schema up to date (default: SQLite yes, a shared
    PostgreSQL no: `runbook state migrate` does that). `schema`: on PostgreSQL, the cluster's
    own schema ([slurm] cluster), so several clusters share one database without sharing job
    ids, locks, queues or node names."""
    db = open_unchecked(target, schema=schema)
    try:
        ensure_schema(db, migrate=(db.kind == "sqlite") if migrate is None else migrate)
    except BaseException:
        db.close()
        raise
    return db


def in_memory() -> Db:
    """An empty SQLite database in memory, with the schema: a dry run's state, which leaves no
    file behind."""
    raw = sqlite3.connect(":memory:", isolation_level=None)
    raw.row_factory = sqlite3.Row
    db = Db(raw, "sqlite", ":memory:")
    migrate(db)
    return db


def _connect_sqlite(path: Path) -> Db:
    try:
        # The state dir holds every user's incidents: runbook's account's alone when made here.
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        raw = sqlite3.connect(path, timeout=30, isolation_level=None)
        raw.execute("PRAGMA journal_mode=WAL")
        raw.execute("PRAGMA busy_timeout=30000")
    except (OSError, sqlite3.Error) as e:
        raise ConfigError(
            f"cannot open runbook's state database {path}: {e}",
            hint="check [state] dir in the site config and its permissions",
        ) from None
    raw.row_factory = sqlite3.Row
    return Db(raw, "sqlite", str(path))


def _connect_pg(url: str, schema: str = "") -> Db:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            f"[state] url is {describe(url)}, but the PostgreSQL driver is not installed",
            hint="pip install 'psycopg[binary]>=3.1' into runbook's environment",
        ) from None
    try:
        # Keepalives: a holder whose host vanished is seen as gone by the server within a minute.
        raw = psycopg.connect(
            url,
            autocommit=True,
            connect_timeout=5,
            row_factory=_pg_rows,
            keepalives=1,
            keepalives_idle=30,
            keepalives_interval=10,
            keepalives_count=3,
            application_name="runbook",
            # The cluster's schema set as the session starts, not by a statement of its own.
            options=f"-c search_path={_ident(schema)}" if schema else None,
        )
    except psycopg.Error as e:
        raise StateUnavailable(
            f"cannot reach runbook's state database {describe(url)}: "
            f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}",
            hint="check that PostgreSQL runs and [state] url (host, port, user, database, "
            "password in ~/.pgpass or the URL) is right; nothing was done",
        ) from None
    return Db(raw, "postgresql", url, schema)


def open_unchecked(target: str, *, schema: str = "") -> Db:
    """A connection that does not check the schema version: for `runbook state migrate`."""
    if not is_postgres(target):
        return _connect_sqlite(Path(target))
    return _connect_pg(target, schema)


def _ident(name: str) -> str:
    """A PostgreSQL identifier, quoted; only names a Slurm cluster can have get here."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}", name):
        raise ConfigError(
            f"[slurm] cluster {name!r} cannot name runbook's PostgreSQL schema: expected letters, "
            "digits, _ . - (at most 63, starting with a letter or digit)",
            hint="set [slurm] cluster to the ClusterName of slurm.conf",
        )
    return '"' + name + '"'


def _statements(kind: str) -> list[str]:
    text = SCHEMA.format(**_TYPES[kind])
    return [s.strip() for s in text.split(";") if s.strip()]


def version(db: Db) -> int | None:
    """The schema version recorded in the database; None for a database runbook never made
    (no tables), 0 for one made before versions were recorded."""
    if db.kind == "sqlite":
        have = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    else:
        have = {
            r[0]
            for r in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema()"
            )
        }
    if "incidents" not in have:
        return None
    if "schema_version" not in have:
        return 0
    row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _columns(db: Db, table: str) -> set[str]:
    if db.kind == "sqlite":
        return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    return {
        r[0]
        for r in db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND "
            "table_schema = current_schema()",
            (table,),
        )
    }


def migrate(db: Db) -> tuple[int | None, int]:
    """Bring the schema to SCHEMA_VERSION: the tables a new database needs, the columns an older
    one lacks. Safe to run while other runbook processes use the database, and twice. Returns
    (version before, version after)."""
    with db.write():
        if db.schema:
            db.execute(f"CREATE SCHEMA IF NOT EXISTS {_ident(db.schema)}")
        before = version(db)
        if before is not None and before > SCHEMA_VERSION:
            raise _too_new(db, before)
        for stmt in _statements(db.kind):
            db.execute(stmt)
        for _, table, column, decl in COLUMNS:
            if column not in _columns(db, table):
                db.execute(
                    f"ALTER TABLE {table} ADD COLUMN {column} {decl.format(**_TYPES[db.kind])}"
                )
        db.execute("DELETE FROM schema_version")
        db.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
    return before, SCHEMA_VERSION


def schemas_with_state(db: Db) -> list[str]:
    """On a shared PostgreSQL: every schema that holds runbook's state (one per cluster)."""
    if db.kind != "postgresql":
        return []
    return [
        r[0]
        for r in db.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = 'incidents' "
            "ORDER BY table_schema"
        )
    ]


def _too_new(db: Db, found: int) -> ConfigError:
    return ConfigError(
        f"the state database {describe(db.target)} has schema version {found}; this runbook "
        f"knows up to {SCHEMA_VERSION}",
        hint="upgrade runbook on this host (the others already run a newer one)",
    )


def _recorded(db: Db) -> int | None:
    """The version schema_version records, in one statement; None where that table cannot be
    read (a new or pre-version database: version() tells them apart)."""
    try:
        row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    except _db_errors():
        return None
    return int(row[0]) if row and row[0] is not None else None


def ensure_schema(db: Db, *, migrate: bool) -> None:
    if _recorded(db) == SCHEMA_VERSION:  # every start but the first after an upgrade
        return
    found = version(db)
    if found == SCHEMA_VERSION:
        return
    if found is not None and found > SCHEMA_VERSION:
        raise _too_new(db, found)
    if not migrate:
        raise ConfigError(
            f"the state database {describe(db.target)} has schema version "
            f"{'none (empty)' if found is None else found}; this runbook needs {SCHEMA_VERSION}",
            hint="run `runbook state migrate` once (safe while other hosts run), then retry",
        )
    _migrate_quietly(db)


def _migrate_quietly(db: Db) -> None:
    try:
        migrate(db)
    except sqlite3.OperationalError as e:
        # Two processes opening one new database at once: the other one made it first.
        if "duplicate column" not in str(e) and "already exists" not in str(e):
            raise
