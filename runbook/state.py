"""runbook's own state: incidents, the action ledger, per-job locks, the hook's queue, node
history. One SQLite database (WAL) on one agent host, or one PostgreSQL database shared by several
(`[state] url`); runbook.store holds the connection and the dialects, this module what is kept.

A lock is a row with a lease: its holder renews it while it lives (a heartbeat thread), and a
lock whose lease ran out is taken over by the next process that asks, on any host. Locks are
taken in a write transaction that no other writer interleaves with, so exactly one process wins
a job."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from runbook import store
from runbook.errors import ConfigError, RunbookError
from runbook.store import DB_ERRORS, STATE_ERRORS, Db, StateUnavailable

__all__ = ["DB_ERRORS", "STATE_ERRORS", "Db", "StateUnavailable"]  # with the functions below

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


class LockBusy(RunbookError):
    """Another runbook process holds the lock (the hook, the sweep or a person on this job)."""


def open_db(path: str | Path) -> Db:
    """The SQLite state database at `path` (made, or brought up to date, when opened)."""
    return store.connect(str(path))


def site_db(site, *, dry_run: bool = False) -> Db:
    """The site's state database: [state] url (PostgreSQL, shared by agent hosts), else SQLite
    in [state] dir. A dry run that finds no SQLite file works on an empty in-memory one, so it
    leaves no file behind (a dry run changes nothing, the state folder included)."""
    if site.state.url:
        return store.connect(site.state.url, schema=site.slurm.cluster)
    path = site.path(site.state.dir) / "runbook.db"
    check_state_dir(path.parent, allow_network_fs=site.state.allow_network_fs)
    if dry_run and not path.exists():
        return store.in_memory()
    return open_db(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(conn: Db, row, now: float) -> bool:
    """A lock nobody holds any more: its lease ran out (its holder stopped renewing it: killed,
    crashed, its host gone), or, on one host's SQLite, its holder's process is gone (seen at once,
    without waiting for the lease)."""
    if row["expires"] < now:
        return True
    return conn.kind == "sqlite" and row["host"] == socket.gethostname() and not _alive(row["pid"])


def lock_is_live(conn: Db, name: str) -> bool:
    """True while a holder keeps `name`'s lease (or, on SQLite, its process on this host
    lives); False when nobody holds it."""
    row = conn.execute("SELECT * FROM locks WHERE name = ?", (name,)).fetchone()
    return row is not None and not _stale(conn, row, time.time())


def incident_state(conn: Db, row) -> str:
    """An incident's status as a person should read it: a `running` one whose process is gone
    (kill -9, a crash, a reboot) is `interrupted`; `runbook oom --job` resumes it."""
    if row["status"] != "running" or lock_is_live(conn, f"job:{row['job_id']}"):
        return row["status"]
    # No live lock: the incident's process is gone, or the incident was closed (and its lock
    # then let go) after `row` was read. The row as it is now tells them apart: a listing made
    # in that instant must not call a finished incident interrupted.
    now = conn.execute("SELECT status FROM incidents WHERE id = ?", (row["id"],)).fetchone()
    status = now["status"] if now is not None else "running"
    return "interrupted" if status == "running" else status


def resumable_incident(conn: Db, job_id: str) -> str | None:
    """The newest incident of `job_id` that stopped or was interrupted: its id, to resume."""
    row = conn.execute(
        "SELECT id, job_id, status FROM incidents WHERE job_id = ? AND status IN ('running', "
        "'stopped') ORDER BY created DESC LIMIT 1",
        (job_id,),
    ).fetchone()
    if row is None:
        return None
    return row["id"] if incident_state(conn, row) in ("interrupted", "stopped") else None


def handled_incident(conn: Db, job_id: str):
    """The newest incident that handled `job_id` (complete, or handed to a person), or None."""
    return conn.execute(
        "SELECT id, new_job_id, verdict FROM incidents WHERE job_id = ? AND status IN "
        "('complete', 'needs_human') ORDER BY created DESC LIMIT 1",
        (job_id,),
    ).fetchone()


def start_incident(
    conn: Db, incident_id: str, job_id: str, source: str, folder: str, *, force: bool = False
):
    """Under the job's lock, in one transaction: the incident that already handled the job (its
    row: nothing is opened; unless `force`), else this one recorded as running (None)."""
    with conn.write():
        done = None if force else handled_incident(conn, job_id)
        if done is None:
            open_incident(conn, incident_id, job_id, source, folder)
    return done


def open_incident(conn: Db, incident_id: str, job_id: str, source: str, folder: str) -> None:
    """Record an incident as running; the same id again (a resumed incident) runs again, and
    keeps when it was created."""
    now = time.time()
    conn.execute(
        "INSERT INTO incidents(id, job_id, source, created, status, folder, updated) VALUES (?, "
        "?, ?, ?, 'running', ?, ?) ON CONFLICT(id) DO UPDATE SET status = 'running', "
        "updated = excluded.updated",
        (incident_id, job_id, source, now, folder, now),
    )


_LISTED = "id, job_id, source, created, updated, status, verdict, new_job_id, folder, data"


def recent_incidents(conn: Db, limit: int) -> list:
    """The incidents that ran last, most recent first: a resumed incident was created long ago
    but is the one an on-call is looking at now."""
    return list(
        conn.execute(
            f"SELECT {_LISTED} FROM incidents ORDER BY COALESCE(updated, created) DESC LIMIT ?",
            (limit,),
        )
    )


def listed_incident(conn: Db, row) -> dict:
    """A row of recent_incidents as a person reads it (incident_state's status); one that
    closed after it was read is read again, its verdict and new job with its status."""
    status = incident_state(conn, row)
    if status not in (row["status"], "interrupted"):
        fresh = conn.execute(f"SELECT {_LISTED} FROM incidents WHERE id = ?", (row["id"],))
        row = fresh.fetchone() or row
    return dict(row) | {"status": status}


def close_incident(
    conn: Db,
    incident_id: str,
    *,
    exit_code: int,
    verdict,
    new_job_id,
    summary: str,
    handled: bool = True,
    stopped: bool = False,
) -> None:
    """complete: handled; needs_human: a person decides; stopped (a step stopped the runbook:
    the next run resumes this incident) or failed: worth another run; observed: looked at,
    nothing to do yet (the job is not counted as handled)."""
    status = {0: "complete" if handled else "observed", 4: "needs_human"}.get(
        exit_code, "stopped" if stopped else "failed"
    )
    conn.execute(
        "UPDATE incidents SET status = ?, verdict = ?, new_job_id = ?, data = ?, updated = ? "
        "WHERE id = ?",
        (status, verdict, new_job_id, summary, time.time(), incident_id),
    )


def record_node_events(conn: Db, events) -> int:
    """Each event once (its key): a burst of Xid lines, or the same pending remap seen by
    several incidents, is one event. Returns how many were new."""
    return conn.executemany(
        "INSERT OR IGNORE INTO node_events(key, node, kind, gpu, detail, incident, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(e.key, e.node, e.kind, e.gpu, e.detail, e.incident, e.at) for e in events],
    )


def step_unchanged_for(conn: Db, job_id: str, step: int, now: float) -> float:
    """Seconds the job's last printed training step has stood still, across sweeps: the first
    sweep that sees a step records it (0 s); a later one that sees the same step measures."""
    with conn.write():
        row = conn.execute(
            "SELECT step, since FROM job_progress WHERE job_id = ?", (job_id,)
        ).fetchone()
        if row is not None and row["step"] == step:
            conn.execute("UPDATE job_progress SET seen = ? WHERE job_id = ?", (now, job_id))
            return max(0.0, now - row["since"])
        conn.execute(
            "INSERT INTO job_progress(job_id, step, since, seen) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(job_id) DO UPDATE SET step = excluded.step, since = excluded.since, "
            "seen = excluded.seen",
            (job_id, step, now, now),
        )
    return 0.0


def last_step(conn: Db, job_id: str) -> int | None:
    """The training step a sweep last saw the job print (job_progress), else None."""
    row = conn.execute("SELECT step FROM job_progress WHERE job_id = ?", (job_id,)).fetchone()
    return row["step"] if row is not None else None


def watch_run(job) -> str:
    """Which run of a job the watch holds lines of: a requeue of the same id starts anew."""
    return f"{job.start or ''}"


def watch_held(conn: Db, job_id: str, run: str) -> tuple[dict, dict, dict]:
    """What the watch holds of a running job from earlier periods (evidence.collect.Held's
    offsets, series and excerpt), empty where nothing is held or what is held is another run's
    (a requeue of the same job id)."""
    row = conn.execute("SELECT run, data FROM watch_series WHERE job_id = ?", (job_id,)).fetchone()
    if row is None or row["run"] != run:
        return {}, {}, {}
    try:
        data = json.loads(row["data"] or "{}")
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    # {"series": {path: [lines]}, "excerpt": {path: ...}}; before the excerpt was held, the
    # series alone ({path: [lines]}: a path is never the word "series").
    series, excerpt = (data.get("series"), data.get("excerpt")) if "series" in data else (data, {})
    offsets = {
        r["ident"]: (r["upto"], r["lines"] if r["lines"] is not None else -1)
        for r in conn.execute(
            "SELECT ident, upto, lines FROM watch_files WHERE job_id = ?", (job_id,)
        )
        if r["ident"] and r["upto"] is not None
    }
    return (
        offsets,
        series if isinstance(series, dict) else {},
        excerpt if isinstance(excerpt, dict) else {},
    )


def save_watch(
    conn: Db, job_id: str, run: str, files: dict, series: dict, excerpt: dict | None = None
) -> None:
    """Where this period's read of a running job stopped, per file ({path: (ident, end,
    lines)}), and the series lines and matching lines to hold ({path: [lines]}, {path:
    evidence.collect.Held.excerpt's entry}): the next period, and an incident, start there."""
    now = time.time()
    with conn.write():
        conn.execute("DELETE FROM watch_files WHERE job_id = ?", (job_id,))
        for path, (ident, end, lines) in files.items():
            conn.execute(
                "INSERT INTO watch_files(job_id, path, ident, upto, lines, updated) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (job_id, path, ident, end, lines, now),
            )
        conn.execute("DELETE FROM watch_series WHERE job_id = ?", (job_id,))
        conn.execute(
            "INSERT INTO watch_series(job_id, run, data, updated) VALUES (?, ?, ?, ?)",
            (job_id, run, json.dumps({"series": series, "excerpt": excerpt or {}}), now),
        )


def drop_watch(conn: Db, running: set[str]) -> int:
    """Forget what the watch held of jobs that no longer run: the rows stay bounded by the
    running jobs. How many jobs were dropped."""
    with conn.write():
        held = {r["job_id"] for r in conn.execute("SELECT job_id FROM watch_series")}
        gone = sorted(held - running)
        for job_id in gone:
            conn.execute("DELETE FROM watch_files WHERE job_id = ?", (job_id,))
            conn.execute("DELETE FROM watch_series WHERE job_id = ?", (job_id,))
    return len(gone)


def node_events(conn: Db, *, since: float, node: str | None = None) -> list:
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


def try_lock(conn: Db, name: str, holder: str, ttl_s: float = 3600) -> dict | None:
    """Take `name` for `holder` with a lease of `ttl_s` seconds. Returns None on success, else
    the row of whoever holds it. A lock whose lease ran out (or, on SQLite, whose holder's
    process on this host is gone) is taken over."""
    now, host = time.time(), socket.gethostname()
    with conn.write():
        row = conn.execute("SELECT * FROM locks WHERE name = ?", (name,)).fetchone()
        if row is not None and row["holder"] != holder and not _stale(conn, row, now):
            return dict(row)
        conn.execute(
            "INSERT INTO locks(name, holder, host, pid, acquired, expires) VALUES "
            "(?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, "
            "host = excluded.host, pid = excluded.pid, acquired = excluded.acquired, "
            "expires = excluded.expires",
            (name, holder, host, os.getpid(), now, now + ttl_s),
        )
    return None


def renew(conn: Db, name: str, holder: str, ttl_s: float) -> bool:
    """Extend `holder`'s lease on `name`; False when it no longer holds it (taken over)."""
    cur = conn.execute(
        "UPDATE locks SET expires = ? WHERE name = ? AND holder = ?",
        (time.time() + ttl_s, name, holder),
    )
    return cur.rowcount == 1


def release(conn: Db, name: str, holder: str) -> None:
    conn.execute("DELETE FROM locks WHERE name = ? AND holder = ?", (name, holder))


def holds(conn: Db, name: str, holder: str) -> bool:
    row = conn.execute("SELECT holder FROM locks WHERE name = ?", (name,)).fetchone()
    return row is not None and row["holder"] == holder


class Heartbeat:
    """Renews a lease every third of its length, on a connection of its own, until stopped: a
    lock stays held exactly as long as its holder lives. A renewal that fails (the database
    unreachable a moment) is tried again; a lease lost to another holder stops the heartbeat,
    and the executor then refuses every further step (it checks `holds` before each)."""

    def __init__(self, conn: Db, name: str, holder: str, ttl_s: float):
        self.name, self.holder, self.ttl_s = name, holder, ttl_s
        self._conn_of = conn.reopen if conn.target != ":memory:" else (lambda: conn)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease {name}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        conn = None
        while not self._stop.wait(self.ttl_s / 3):
            try:
                conn = conn or self._conn_of()
                if not renew(conn, self.name, self.holder, self.ttl_s):
                    return
            except RunbookError:
                conn = None
            except DB_ERRORS:
                conn = None
        if conn is not None:
            with contextlib.suppress(*DB_ERRORS):
                conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@contextmanager
def job_lock(conn: Db, job_id: str, holder: str, ttl_s: float = 60):
    """The job's lock, held (its lease renewed) for the whole block; released at its end. A
    holder killed midway stops renewing: another process takes over after `ttl_s`."""
    name = f"job:{job_id}"
    other = try_lock(conn, name, holder, ttl_s)
    if other is not None:
        since = time.strftime("%H:%M:%S", time.localtime(other["acquired"]))
        raise LockBusy(
            f"job {job_id} is being handled by {other['holder']} (pid {other['pid']} on "
            f"{other['host']}, since {since}); nothing was done",
            hint="wait for it to finish; `runbook incidents` shows its incident",
        )
    beat = Heartbeat(conn, name, holder, ttl_s)
    try:
        yield name
    finally:
        beat.stop()
        release(conn, name, holder)


def record(conn: Db, **row) -> None:
    row = {k: (json.dumps(v) if isinstance(v, list | dict) else v) for k, v in row.items()}
    cols = ", ".join(row)
    conn.execute(
        f"INSERT INTO ledger({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )


def applied_and_holder(conn: Db, key: str, lock: str) -> tuple[dict | None, str | None]:
    """One read for the executor: the ledger's applied row for `key` (None) and who holds
    `lock` now (None: nobody)."""
    row = conn.execute(
        "SELECT ledger.*, (SELECT holder FROM locks WHERE name = ?) AS lock_holder FROM "
        "(SELECT 1 AS one) AS base LEFT JOIN ledger ON ledger.key = ? AND ledger.status = "
        "'applied' ORDER BY ledger.seq LIMIT 1",
        (lock, key),
    ).fetchone()
    found = dict(row)
    holder = found.pop("lock_holder")
    return (found if found.get("key") is not None else None), holder


def applied(conn: Db, key: str) -> dict | None:
    """The ledger's applied row for `key`, or None."""
    return applied_and_holder(conn, key, "")[0]


# -- the hook's durable intake queue --------------------------------------------------------------
# A delivery is written here before the pager gets its 202, and taken by a worker from here: a
# restart between the two loses nothing. Status: queued -> running -> done | deduplicated |
# rejected | failed; a delivery whose Slurm lookup could not be made goes back to queued with a
# later next_at.


def queue_put(
    conn: Db,
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
        with conn.write():
            row = conn.execute("SELECT incident FROM deliveries WHERE key = ?", (key,)).fetchone()
            if row is not None:
                return row["incident"], True
            conn.execute(
                "INSERT INTO deliveries(key, job_id, incident, source, status, created, title, "
                "attempts, next_at, updated) VALUES (?, ?, ?, ?, 'queued', ?, ?, 0, ?, ?)",
                (key, job_id, incident, source, now, title, now, now),
            )
        return incident, False
    except DB_ERRORS as e:
        raise StateUnavailable(
            f"cannot queue the delivery in the state database: {e}",
            hint="check the state dir's disk space and permissions",
        ) from None


def queue_claim(conn: Db, owner: str, now: float | None = None) -> dict | None:
    """Take the oldest due delivery for `owner` (host:pid:thread), or None."""
    now = time.time() if now is None else now
    with conn.write():
        row = conn.execute(
            "SELECT * FROM deliveries WHERE status = 'queued' AND COALESCE(next_at, 0) <= ? "
            "ORDER BY next_at, created LIMIT 1",
            (now,),
        ).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE deliveries SET status = 'running', owner = ?, updated = ?, "
            "attempts = COALESCE(attempts, 0) + 1 WHERE key = ?",
            (owner, now, row["key"]),
        )
    return dict(row) | {"attempts": (row["attempts"] or 0) + 1}


def queue_finish(
    conn: Db,
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


def queue_retry(conn: Db, key: str, error: str, delay_s: float) -> None:
    now = time.time()
    conn.execute(
        "UPDATE deliveries SET status = 'queued', last_error = ?, next_at = ?, "
        "updated = ?, owner = NULL WHERE key = ?",
        (error, now + delay_s, now, key),
    )


def queue_recover(conn: Db, lease_s: float = 60) -> int:
    """Deliveries left `running` by a worker that is gone go back to the queue: on this host, a
    process that no longer exists; on another host, one claimed more than `lease_s` ago whose
    job nobody holds the lock of (its worker was killed, or its host died: the lease ran out). A
    worker that lives holds the job's lock while it works, so its delivery stays its own.
    Returns how many."""
    host, now = socket.gethostname(), time.time()
    back = 0
    for row in conn.execute(
        "SELECT key, owner, job_id, updated FROM deliveries WHERE status = 'running'"
    ).fetchall():
        o_host, _, rest = (row["owner"] or "").partition(":")
        pid = rest.partition(":")[0]
        if o_host == host and pid.isdigit():  # this host's worker: its process says it all
            gone = not _alive(int(pid))
        else:
            gone = (row["updated"] or 0) < now - lease_s and not lock_is_live(
                conn, f"job:{row['job_id']}"
            )
        if gone:
            cur = conn.execute(
                "UPDATE deliveries SET status = 'queued', owner = NULL, next_at = ? "
                "WHERE key = ? AND status = 'running' AND owner = ?",
                (now, row["key"], row["owner"]),
            )
            back += max(cur.rowcount, 0)
    return back


def queue_depth(conn: Db) -> int:
    return conn.execute(
        "SELECT COUNT(*) FROM deliveries WHERE status IN ('queued', 'running')"
    ).fetchone()[0]
