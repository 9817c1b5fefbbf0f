"""Crashes and full disks lose nothing: an incident whose process died reads `interrupted` and is
resumed by the next `runbook oom` of its job; a nearly full state dir stops runbook before it
changes anything. State functions on a real SQLite database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

from runbook import state, store


def db(tmp_path):
    return state.open_db(tmp_path / "runbook.db")


def add(conn, iid, job, status):
    conn.execute(
        "INSERT INTO incidents(id, job_id, status, created) VALUES (?, ?, ?, ?)",
        (iid, job, status, float(len(iid))),
    )


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_running_incident_of_a_dead_process_is_interrupted_and_resumable(tmp_path):
    conn = db(tmp_path)
    add(conn, "i-1", "7", "running")
    conn.execute(
        "INSERT INTO locks VALUES ('job:7', 'cli:x', ?, ?, 0, 9e18)",
        (socket.gethostname(), dead_pid()),
    )
    row = conn.execute("SELECT * FROM incidents WHERE id = 'i-1'").fetchone()
    assert state.incident_state(conn, row) == "interrupted"
    assert state.resumable_incident(conn, "7") == "i-1"


def test_live_holder_keeps_it_running_and_other_hosts_are_not_judged(tmp_path):
    conn = db(tmp_path)
    add(conn, "i-2", "8", "running")
    conn.execute(
        "INSERT INTO locks VALUES ('job:8', 'cli:x', ?, ?, 0, 9e18)",
        (socket.gethostname(), os.getpid()),
    )
    row = conn.execute("SELECT * FROM incidents WHERE id = 'i-2'").fetchone()
    assert state.incident_state(conn, row) == "running"
    assert state.resumable_incident(conn, "8") is None
    conn.execute("UPDATE locks SET host = 'another-host', pid = 1")
    assert state.incident_state(conn, row) == "running"


def test_an_incident_closed_after_its_row_was_read_is_listed_as_it_ended(tmp_path):
    """A listing reads the incidents, then each one's lock. An incident that closed (and then
    let its lock go) in between is not `interrupted`: it is listed as it ended, with its
    verdict; one whose row still says running with no lock is."""
    conn = db(tmp_path)
    add(conn, "i-4", "10", "running")
    add(conn, "i-55", "11", "running")
    rows = {r["id"]: r for r in state.recent_incidents(conn, 10)}  # read while both ran
    conn.execute(
        "UPDATE incidents SET status = 'complete', verdict = 'fragmentation' WHERE id = 'i-4'"
    )
    assert state.incident_state(conn, rows["i-4"]) == "complete"
    listed = state.listed_incident(conn, rows["i-4"])
    assert (listed["status"], listed["verdict"]) == ("complete", "fragmentation")
    assert state.listed_incident(conn, rows["i-55"])["status"] == "interrupted"


def test_stopped_incident_is_resumed_complete_one_is_not(tmp_path):
    conn = db(tmp_path)
    add(conn, "i-3", "9", "stopped")
    assert state.resumable_incident(conn, "9") == "i-3"
    conn.execute("UPDATE incidents SET status = 'complete'")
    assert state.resumable_incident(conn, "9") is None


def test_nearly_full_state_dir_changes_nothing(tmp_path):
    def usage(free_mib):
        return lambda path: SimpleNamespace(free=free_mib * 2**20)

    state.check_free_space(tmp_path / "new" / "dir", 64, usage=usage(65))
    with pytest.raises(state.StateUnavailable, match="0.1 MiB free, below .state. min_free_mib"):
        state.check_free_space(tmp_path, 64, usage=usage(0.12))


def test_old_databases_are_migrated_and_concurrent_opens_do_not_race(tmp_path):
    import sqlite3

    old = sqlite3.connect(tmp_path / "runbook.db")
    old.execute(
        "CREATE TABLE deliveries(key TEXT PRIMARY KEY, job_id TEXT, incident TEXT, "
        "source TEXT, status TEXT, created REAL)"
    )
    old.commit()
    old.close()
    a = state.open_db(tmp_path / "runbook.db")
    b = state.open_db(tmp_path / "runbook.db")  # a second process opening it too
    cols = {r[1] for r in b.execute("PRAGMA table_info(deliveries)")}
    assert {"attempts", "next_at", "owner"} <= cols
    store.migrate(a)  # columns already there (another process won the race): no error


def test_a_stopped_close_is_stored_stopped_and_resumed(tmp_path):
    """close_incident of a run a step stopped stores `stopped` (resumed by the next run), not
    `failed`; exit 0 is complete, 4 needs_human."""
    conn = db(tmp_path)
    for iid, code, stopped, want in (
        ("s-1", 1, True, "stopped"),
        ("s-2", 1, False, "failed"),
        ("s-3", 0, False, "complete"),
        ("s-4", 4, False, "needs_human"),
    ):
        add(conn, iid, iid, "running")
        state.close_incident(
            conn, iid, exit_code=code, verdict=None, new_job_id=None, summary="", stopped=stopped
        )
        status = conn.execute("SELECT status FROM incidents WHERE id = ?", (iid,)).fetchone()[0]
        assert status == want
    assert state.resumable_incident(conn, "s-1") == "s-1"
    assert state.resumable_incident(conn, "s-2") is None


def test_storage_failures_are_told_apart_from_other_errors():
    """A full or read-only disk under the state (OSError's errno, SQLite's message) becomes one
    clear error naming the state dir; anything else is left alone (a bug stays a bug)."""
    import errno
    import sqlite3

    from runbook.errors import ExitCode, storage_failure

    full = storage_failure(OSError(errno.ENOSPC, "No space left on device", "/s/x.md"), "/s")
    assert full is not None and full.exit_code == ExitCode.STEP_FAILED
    assert "/s/x.md" in full.message and "state dir /s" in full.message
    assert "run the same command again" in full.hint
    assert storage_failure(sqlite3.OperationalError("database or disk is full")) is not None
    assert storage_failure(sqlite3.OperationalError("no such table: x")) is None
    assert storage_failure(OSError(errno.ENOENT, "No such file")) is None
    assert storage_failure(ValueError("disk is full")) is None
