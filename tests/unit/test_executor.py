"""The one executor: ledger, live-state check, dry run, confirmation, lock; real SQLite, real
files, a real second process racing for the same job."""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import pytest

from runbook import state
from runbook.actions import steps
from runbook.actions.executor import Action, Executor, Outcome
from runbook.errors import RunbookError


@pytest.fixture
def db(tmp_path):
    return state.open_db(tmp_path / "state" / "runbook.db")


def counting_action(calls: list, key="k1", skip=None, fail=False) -> Action:
    def apply():
        calls.append(time.time())
        if fail:
            raise RunbookError("boom")
        return Outcome(0, "ok", "value-1")

    return Action("cancel", "123", ["scancel", "123"], key, "scancel 123", lambda: skip, apply)


def test_applied_once_then_skipped_from_the_ledger(db):
    calls: list = []
    ex = Executor(db, incident="i1", actor="test")
    assert ex.run(counting_action(calls)).status == "applied"
    again = Executor(db, incident="i2", actor="sweep").run(counting_action(calls))
    assert again.status == "skipped" and "already done" in again.message and "i1" in again.message
    assert len(calls) == 1
    rows = db.execute("SELECT status, incident FROM ledger ORDER BY seq").fetchall()
    assert [tuple(r) for r in rows] == [("applied", "i1"), ("skipped", "i2")]


def test_live_state_skip_is_a_ledger_line_not_silence(db):
    calls: list = []
    r = Executor(db, incident="i", actor="t").run(
        counting_action(calls, skip="job 123 already CANCELLED")
    )
    assert r.status == "skipped" and calls == []
    row = db.execute("SELECT status, message FROM ledger").fetchone()
    assert tuple(row) == ("skipped", "job 123 already CANCELLED")


def test_dry_run_is_real_shaped_and_touches_nothing(db, tmp_path):
    target = tmp_path / "out" / "job.sbatch"
    ex = Executor(db, incident="i", actor="t", dry_run=True)
    r = ex.run(steps.write_file(str(target), "#!/bin/bash\n"))
    assert r.status == "dry_run" and r.argv[0] == "write" and r.dry_run
    assert not target.exists() and not target.parent.exists()
    assert db.execute("SELECT count(*) FROM ledger").fetchone()[0] == 0


def test_declined_and_failed_are_recorded(db):
    calls: list = []
    r = Executor(db, incident="i", actor="t", confirm=lambda a: False).run(counting_action(calls))
    assert r.status == "declined" and calls == []
    r2 = Executor(db, incident="i", actor="t").run(counting_action(calls, key="k2", fail=True))
    assert r2.status == "failed" and r2.message == "boom"
    assert [x[0] for x in db.execute("SELECT status FROM ledger ORDER BY seq")] == [
        "declined",
        "failed",
    ]


def test_write_file_is_atomic_and_never_overwrites(db, tmp_path):
    path = tmp_path / "job.v2.sbatch"
    ex = Executor(db, incident="i", actor="t")
    assert ex.run(steps.write_file(str(path), "A\n")).status == "applied"
    assert path.read_text() == "A\n" and oct(path.stat().st_mode)[-3:] == "755"
    assert ex.run(steps.write_file(str(path), "A\n")).status == "skipped"
    r = ex.run(steps.write_file(str(path), "B\n"))
    assert r.status == "failed" and "never overwrites" in r.message and path.read_text() == "A\n"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".runbook-")]


def test_lock_must_be_held_to_apply(db):
    calls: list = []
    ex = Executor(db, incident="i", actor="t", lock="job:123", lock_holder="me")
    r = ex.run(counting_action(calls))
    assert r.status == "failed" and "not held" in r.message and calls == []
    with state.job_lock(db, "123", "me") as name:
        ex.lock = name
        assert ex.run(counting_action(calls)).status == "applied"


def _race(db_path, job, holder, start_at, out):
    conn = state.open_db(db_path)
    while time.time() < start_at:
        time.sleep(0.001)
    try:
        with state.job_lock(conn, job, holder):
            out.put((holder, "won"))
            time.sleep(0.5)
    except state.LockBusy as e:
        out.put((holder, f"busy: {e}"))


def test_two_processes_racing_for_one_job_exactly_one_wins(tmp_path):
    db_path = tmp_path / "runbook.db"
    state.open_db(db_path).close()
    out = mp.Queue()
    start_at = time.time() + 0.5
    procs = [
        mp.Process(target=_race, args=(db_path, "777", h, start_at, out)) for h in ("hook", "sweep")
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(10)
    results = dict(out.get(timeout=5) for _ in procs)
    assert sorted(v == "won" for v in results.values()) == [False, True]
    loser = next(v for v in results.values() if v != "won")
    assert "being handled by" in loser


def test_a_dead_holders_lock_is_taken_over(db):
    db.execute(
        "INSERT INTO locks VALUES ('job:5', 'ghost', ?, 999999999, 0, ?)",
        (__import__("socket").gethostname(), time.time() + 3600),
    )
    with state.job_lock(db, "5", "me"):
        assert state.holds(db, "job:5", "me")


def test_a_forged_claim_to_be_the_rerun_is_named_and_does_not_stop_it(db):
    """steps.submit: another user's job whose unsigned comment claims this very parent and rung
    is no reason to skip; the applied result names it as SUSPICIOUS (ledger and report)."""

    class FakeSlurm:
        submitted: list = []

        def find_lineage(self, parent, rung, since):
            return [("77", "mallory", f"runbook:incident=x,parent={parent},rung={rung}")]

        def submit_argv(self, script, args, env, script_args=()):
            return ["sbatch", *args, script, *script_args]

        def submit(self, script, args, env, script_args=()):
            self.submitted.append(args)
            return "78"

    slurm = FakeSlurm()
    a = steps.submit(
        slurm,
        "job.sbatch",
        [],
        {},
        incident="i",
        parent="5",
        rung="r",
        secret=b"site key",
        runbook_user="runbook",
    )
    r = Executor(db, incident="i", actor="t").run(a)
    assert r.status == "applied" and r.value == "78" and len(slurm.submitted) == 1
    assert r.message.startswith("done; SUSPICIOUS") and "job 77 of user mallory" in r.message
    (msg,) = db.execute("SELECT message FROM ledger").fetchone()
    assert "job 77 of user mallory" in msg
