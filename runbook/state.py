"""runbook's own state: one SQLite database (WAL) for incidents, the action ledger and per-job
locks. WAL lets the pager hook, the cron sweep and a person's CLI read while one of them writes;
locks are rows taken inside `BEGIN IMMEDIATE`, so exactly one process wins a job."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from runbook.errors import ConfigError, RunbookError

SCHEMA = """
CREATE TABLE IF NOT EXISTS incidents(
  id TEXT PRIMARY KEY, job_id TEXT NOT NULL, source TEXT, created REAL, status TEXT,
  verdict TEXT, folder TEXT, parent_incident TEXT, new_job_id TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS incidents_job ON incidents(job_id);
CREATE TABLE IF NOT EXISTS ledger(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, incident TEXT, kind TEXT,
  target TEXT, argv TEXT, status TEXT, exit_code INTEGER, output_tail TEXT, duration_s REAL,
  actor TEXT, message TEXT, value TEXT, at REAL);
CREATE UNIQUE INDEX IF NOT EXISTS ledger_applied_once ON ledger(key) WHERE status = 'applied';
CREATE TABLE IF NOT EXISTS deliveries(
  key TEXT PRIMARY KEY, job_id TEXT, incident TEXT, source TEXT, status TEXT, created REAL);
CREATE TABLE IF NOT EXISTS outbox(
  id INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT, incident TEXT, payload TEXT, attempts INTEGER,
  last_error TEXT, created REAL, sent REAL);
CREATE TABLE IF NOT EXISTS locks(
  name TEXT PRIMARY KEY, holder TEXT, host TEXT, pid INTEGER, acquired REAL, expires REAL);
"""


class LockBusy(RunbookError):
    """Another runbook process holds the lock (the hook, the sweep or a person on this job)."""


def open_db(path: str | Path) -> sqlite3.Connection:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.executescript(SCHEMA)
    except (OSError, sqlite3.Error) as e:
        raise ConfigError(
            f"cannot open runbook's state database {path}: {e}",
            hint="check [state] dir in the site config and its permissions",
        ) from None
    conn.row_factory = sqlite3.Row
    return conn


def site_db(site, *, dry_run: bool = False) -> sqlite3.Connection:
    """The site's state database. A dry run that finds none works on an empty in-memory one, so
    it leaves no file behind (a dry run changes nothing, the state folder included)."""
    path = site.path(site.state.dir) / "runbook.db"
    if dry_run and not path.exists():
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.executescript(SCHEMA)
        conn.row_factory = sqlite3.Row
        return conn
    return open_db(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def try_lock(conn: sqlite3.Connection, name: str, holder: str, ttl_s: float = 3600) -> dict | None:
    """Take `name` for `holder`. Returns None on success, else the row of whoever holds it. A lock
    whose holder died (same host, pid gone) or whose lease ran out is taken over."""
    now, host = time.time(), socket.gethostname()
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT * FROM locks WHERE name = ?", (name,)).fetchone()
        if row is not None and row["holder"] != holder:
            stale = row["expires"] < now or (row["host"] == host and not _alive(row["pid"]))
            if not stale:
                conn.execute("ROLLBACK")
                return dict(row)
        conn.execute(
            "INSERT OR REPLACE INTO locks(name, holder, host, pid, acquired, expires) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (name, holder, host, os.getpid(), now, now + ttl_s),
        )
        conn.execute("COMMIT")
        return None
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def release(conn: sqlite3.Connection, name: str, holder: str) -> None:
    conn.execute("DELETE FROM locks WHERE name = ? AND holder = ?", (name, holder))


def holds(conn: sqlite3.Connection, name: str, holder: str) -> bool:
    row = conn.execute("SELECT holder FROM locks WHERE name = ?", (name,)).fetchone()
    return row is not None and row["holder"] == holder


@contextmanager
def job_lock(conn: sqlite3.Connection, job_id: str, holder: str, ttl_s: float = 3600):
    name = f"job:{job_id}"
    other = try_lock(conn, name, holder, ttl_s)
    if other is not None:
        since = time.strftime("%H:%M:%S", time.localtime(other["acquired"]))
        raise LockBusy(
            f"job {job_id} is being handled by {other['holder']} (pid {other['pid']} on "
            f"{other['host']}, since {since}); nothing was done",
            hint="wait for it to finish; `runbook incidents` shows its incident",
        )
    try:
        yield name
    finally:
        release(conn, name, holder)


def record(conn: sqlite3.Connection, **row) -> None:
    row = {k: (json.dumps(v) if isinstance(v, list | dict) else v) for k, v in row.items()}
    cols = ", ".join(row)
    conn.execute(f"INSERT INTO ledger({cols}) VALUES ({', '.join('?' * len(row))})",
                 tuple(row.values()))  # fmt: skip


def applied(conn: sqlite3.Connection, key: str) -> dict | None:
    row = conn.execute(
        "SELECT * FROM ledger WHERE key = ? AND status = 'applied' ORDER BY seq LIMIT 1", (key,)
    ).fetchone()
    return dict(row) if row else None
