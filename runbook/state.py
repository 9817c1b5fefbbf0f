"""runbook's own state: one SQLite database (WAL) for incidents, the action ledger and per-job
locks. WAL lets the pager hook, the cron sweep and a person's CLI read while one of them writes;
locks are rows taken inside `BEGIN IMMEDIATE`, so exactly one process wins a job."""

from __future__ import annotations

import contextlib
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
  key TEXT PRIMARY KEY, job_id TEXT, incident TEXT, source TEXT, status TEXT, created REAL,
  title TEXT, attempts INTEGER DEFAULT 0, next_at REAL, last_error TEXT, owner TEXT, updated REAL);
CREATE TABLE IF NOT EXISTS outbox(
  id INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT, incident TEXT, payload TEXT, attempts INTEGER,
  last_error TEXT, created REAL, sent REAL);
CREATE TABLE IF NOT EXISTS locks(
  name TEXT PRIMARY KEY, holder TEXT, host TEXT, pid INTEGER, acquired REAL, expires REAL);
CREATE TABLE IF NOT EXISTS node_events(
  key TEXT PRIMARY KEY, node TEXT NOT NULL, kind TEXT, gpu TEXT, detail TEXT, incident TEXT,
  at REAL);
CREATE INDEX IF NOT EXISTS node_events_node ON node_events(node, at);
CREATE TABLE IF NOT EXISTS job_progress(
  job_id TEXT PRIMARY KEY, step INTEGER, since REAL, seen REAL);
"""


# Filesystems whose locking SQLite cannot rely on (its FAQ: "SQLite uses reader/writer locks ...
# many NFS implementations are known to have bugs in their locking"). Names as /proc/mounts
# spells them; FUSE mounts appear as fuse.<name>.
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "gpfs",
        "beegfs",
        "cifs",
        "smb3",
        "smbfs",
        "ceph",
        "fuse.ceph",
        "glusterfs",
        "fuse.glusterfs",
        "fuse.sshfs",
        "9p",
        "afs",
        "panfs",
        "wekafs",
        "fuse.weka",
        "orangefs",
        "pvfs2",
    }
)


def mount_fstype(path: str, mounts_text: str) -> str | None:
    """The filesystem type of the mount holding `path` (an absolute, resolved path), from the
    text of /proc/self/mounts: the entry with the longest mount point that is a prefix of it."""
    best, best_len = None, -1
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        # /proc/mounts escapes spaces and tabs in mount points as octal (\040).
        point = fields[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = path == point or path.startswith(point.rstrip("/") + "/") or point == "/"
        if inside and len(point) >= best_len:
            best, best_len = fields[2], len(point)
    return best


def check_state_dir(directory: Path, *, allow_network_fs: bool, mounts_file="/proc/self/mounts"):
    """Refuse a state dir on a network filesystem (SQLite locking is unsafe there)."""
    if allow_network_fs:
        return
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent  # the dir may not exist yet: judge the mount it will be made on
    try:
        mounts = Path(mounts_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return  # not Linux, or no procfs: nothing to judge by
    fstype = mount_fstype(str(probe.resolve()), mounts)
    if fstype in NETWORK_FS:
        raise ConfigError(
            f"state dir {directory} is on a {fstype} filesystem, where SQLite's locks are not "
            f"reliable (two runbook processes could both act on one job)",
            hint="set [state] dir to a local disk (e.g. /var/lib/runbook, or /tmp on a login "
            "node), or [state] allow_network_fs = true if your site has checked its locking",
        )


# Columns added to tables of older state databases, in order (SQLite adds columns in place).
_MIGRATIONS = {
    "deliveries": [
        ("title", "TEXT"),
        ("attempts", "INTEGER DEFAULT 0"),
        ("next_at", "REAL"),
        ("last_error", "TEXT"),
        ("owner", "TEXT"),
        ("updated", "REAL"),
    ],
}


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns an older database lacks. Several processes may open one database at the
    same moment (the hook, a sweep, a person): a column another one added first is fine."""
    for table, columns in _MIGRATIONS.items():
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for name, decl in columns:
            if name not in have:
                try:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
                except sqlite3.OperationalError as e:
                    if "duplicate column" not in str(e):
                        raise


class StateUnavailable(RunbookError):
    """The state database cannot be written now (disk full, locked too long, unreadable)."""


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
        _migrate(conn)
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
    check_state_dir(path.parent, allow_network_fs=site.state.allow_network_fs)
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


def lock_is_live(conn: sqlite3.Connection, name: str) -> bool | None:
    """True when a live process holds `name`, False when nobody does or its holder died on this
    host, None when another host holds it (its liveness cannot be seen from here)."""
    row = conn.execute("SELECT * FROM locks WHERE name = ?", (name,)).fetchone()
    if row is None or row["expires"] < time.time():
        return False
    if row["host"] != socket.gethostname():
        return None
    return _alive(row["pid"])


def incident_state(conn: sqlite3.Connection, row) -> str:
    """An incident's status as a person should read it: a `running` one whose process is gone
    (kill -9, a crash, a reboot) is `interrupted`; `runbook oom --job` resumes it."""
    if row["status"] == "running" and lock_is_live(conn, f"job:{row['job_id']}") is False:
        return "interrupted"
    return row["status"]


def resumable_incident(conn: sqlite3.Connection, job_id: str) -> str | None:
    """The newest incident of `job_id` that stopped or was interrupted: its id, to resume."""
    row = conn.execute(
        "SELECT id, job_id, status FROM incidents WHERE job_id = ? AND status IN ('running', "
        "'stopped') ORDER BY created DESC LIMIT 1",
        (job_id,),
    ).fetchone()
    if row is None:
        return None
    return row["id"] if incident_state(conn, row) in ("interrupted", "stopped") else None


def handled_incident(conn: sqlite3.Connection, job_id: str):
    """The newest incident that handled `job_id` (complete, or handed to a person), or None."""
    return conn.execute(
        "SELECT id, new_job_id, verdict FROM incidents WHERE job_id = ? AND status IN "
        "('complete', 'needs_human') ORDER BY created DESC LIMIT 1",
        (job_id,),
    ).fetchone()


def open_incident(
    conn: sqlite3.Connection, incident_id: str, job_id: str, source: str, folder: str
) -> None:
    """Record an incident as running; the same id again (a resumed incident) runs again."""
    conn.execute(
        "INSERT INTO incidents(id, job_id, source, created, status, folder) VALUES (?, ?, ?, ?, "
        "'running', ?) ON CONFLICT(id) DO UPDATE SET status = 'running'",
        (incident_id, job_id, source, time.time(), folder),
    )


def close_incident(
    conn: sqlite3.Connection, incident_id: str, *, exit_code: int, verdict, new_job_id, summary: str
) -> None:
    """complete: handled; needs_human: a person decides; failed/stopped: worth another run."""
    status = {0: "complete", 4: "needs_human"}.get(exit_code, "failed")
    conn.execute(
        "UPDATE incidents SET status = ?, verdict = ?, new_job_id = ?, data = ? WHERE id = ?",
        (status, verdict, new_job_id, summary, incident_id),
    )


def record_node_events(conn: sqlite3.Connection, events) -> int:
    """Each event once (its key): a burst of Xid lines, or the same pending remap seen by
    several incidents, is one event. Returns how many were new."""
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO node_events(key, node, kind, gpu, detail, incident, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(e.key, e.node, e.kind, e.gpu, e.detail, e.incident, e.at) for e in events],
    )
    return conn.total_changes - before


def step_unchanged_for(conn: sqlite3.Connection, job_id: str, step: int, now: float) -> float:
    """Seconds the job's last printed training step has stood still, across sweeps: the first
    sweep that sees a step records it (0 s); a later one that sees the same step measures."""
    with conn:
        row = conn.execute(
            "SELECT step, since FROM job_progress WHERE job_id = ?", (job_id,)
        ).fetchone()
        if row is not None and row["step"] == step:
            conn.execute("UPDATE job_progress SET seen = ? WHERE job_id = ?", (now, job_id))
            return max(0.0, now - row["since"])
        conn.execute(
            "INSERT OR REPLACE INTO job_progress(job_id, step, since, seen) VALUES (?, ?, ?, ?)",
            (job_id, step, now, now),
        )
    return 0.0


def node_events(conn: sqlite3.Connection, *, since: float, node: str | None = None) -> list:
    """Events since `since` (epoch seconds), newest first; one node's, or every node's."""
    if node:
        return conn.execute(
            "SELECT * FROM node_events WHERE node = ? AND at >= ? ORDER BY at DESC", (node, since)
        ).fetchall()
    return conn.execute(
        "SELECT * FROM node_events WHERE at >= ? ORDER BY node, at DESC", (since,)
    ).fetchall()


def check_free_space(directory: Path, min_free_mib: float, *, usage=None) -> None:
    """Refuse to start mutating when the state dir is nearly full: a ledger or report that cannot
    be written after a scancel is how a runbook loses track of what it did."""
    import shutil

    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = (usage or shutil.disk_usage)(probe).free / 2**20
    except OSError:
        return
    if free < min_free_mib:
        raise StateUnavailable(
            f"the state dir {directory} has {free:.1f} MiB free, below [state] min_free_mib "
            f"({min_free_mib:g}); nothing was done",
            hint="free space there (old incident folders can be archived), or point [state] dir "
            "at a disk with room",
        )


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
    conn.execute(
        f"INSERT INTO ledger({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )


def applied(conn: sqlite3.Connection, key: str) -> dict | None:
    row = conn.execute(
        "SELECT * FROM ledger WHERE key = ? AND status = 'applied' ORDER BY seq LIMIT 1", (key,)
    ).fetchone()
    return dict(row) if row else None


# -- the hook's durable intake queue --------------------------------------------------------------
# A delivery is written here before the pager gets its 202, and taken by a worker from here: a
# restart between the two loses nothing. Status: queued -> running -> done | deduplicated |
# rejected | failed; a delivery whose Slurm lookup could not be made goes back to queued with a
# later next_at.
QUEUE_OPEN = ("queued", "running")


def queue_put(
    conn: sqlite3.Connection,
    *,
    key: str,
    job_id: str,
    source: str,
    title: str,
    incident: str,
    now: float | None = None,
) -> tuple[str, bool]:
    """Queue one delivery unless its key is known. (incident id, duplicate?)"""
    now = time.time() if now is None else now
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT incident FROM deliveries WHERE key = ?", (key,)).fetchone()
        if row is not None:
            conn.execute("ROLLBACK")
            return row["incident"], True
        conn.execute(
            "INSERT INTO deliveries(key, job_id, incident, source, status, created, title, "
            "attempts, next_at, updated) VALUES (?, ?, ?, ?, 'queued', ?, ?, 0, ?, ?)",
            (key, job_id, incident, source, now, title, now, now),
        )
        conn.execute("COMMIT")
        return incident, False
    except sqlite3.Error as e:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise StateUnavailable(
            f"cannot queue the delivery in the state database: {e}",
            hint="check the state dir's disk space and permissions",
        ) from None


def queue_claim(conn: sqlite3.Connection, owner: str, now: float | None = None) -> dict | None:
    """Take the oldest due delivery for `owner` (host:pid:thread), or None."""
    now = time.time() if now is None else now
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT * FROM deliveries WHERE status = 'queued' AND COALESCE(next_at, 0) <= ? "
            "ORDER BY next_at, created LIMIT 1",
            (now,),
        ).fetchone()
        if row is None:
            conn.execute("COMMIT")
            return None
        conn.execute(
            "UPDATE deliveries SET status = 'running', owner = ?, updated = ?, "
            "attempts = COALESCE(attempts, 0) + 1 WHERE key = ?",
            (owner, now, row["key"]),
        )
        conn.execute("COMMIT")
        return dict(row) | {"attempts": (row["attempts"] or 0) + 1}
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def queue_finish(
    conn: sqlite3.Connection,
    key: str,
    status: str,
    *,
    incident: str | None = None,
    error: str | None = None,
) -> None:
    conn.execute(
        "UPDATE deliveries SET status = ?, incident = COALESCE(?, incident), "
        "last_error = ?, updated = ?, owner = NULL WHERE key = ?",
        (status, incident, error, time.time(), key),
    )


def queue_retry(conn: sqlite3.Connection, key: str, error: str, delay_s: float) -> None:
    now = time.time()
    conn.execute(
        "UPDATE deliveries SET status = 'queued', last_error = ?, next_at = ?, "
        "updated = ?, owner = NULL WHERE key = ?",
        (error, now + delay_s, now, key),
    )


def queue_recover(conn: sqlite3.Connection) -> int:
    """Deliveries left `running` by a process of this host that is gone (kill -9, a crash) go
    back to the queue. Returns how many."""
    host = socket.gethostname()
    back = 0
    for row in conn.execute(
        "SELECT key, owner FROM deliveries WHERE status = 'running'"
    ).fetchall():
        o_host, _, rest = (row["owner"] or "").partition(":")
        pid = rest.partition(":")[0]
        if o_host == host and pid.isdigit() and not _alive(int(pid)):
            conn.execute(
                "UPDATE deliveries SET status = 'queued', owner = NULL, next_at = ? "
                "WHERE key = ? AND status = 'running'",
                (time.time(), row["key"]),
            )
            back += 1
    return back


def queue_depth(conn: sqlite3.Connection) -> int:
    return conn.execute(
        "SELECT COUNT(*) FROM deliveries WHERE status IN ('queued', 'running')"
    ).fetchone()[0]
