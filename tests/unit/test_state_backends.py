"""One state interface, two backends (issue 19): every test here runs on SQLite and on a real
PostgreSQL (Debian's server, a throwaway cluster: tests/pg.py). Locks with leases, the ledger's
applied-once guarantee, the hook's queue, node history, schema versions."""

from __future__ import annotations

import threading
import time

import pytest

from runbook import state, store
from runbook.errors import ConfigError
from tests import pg


@pytest.fixture(scope="module")
def postgres():
    why = pg.why_not()
    if why:
        pytest.skip(f"PostgreSQL backend not testable here: {why}")
    server = pg.ThrowawayPostgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "runbook.db")
    return request.getfixturevalue("postgres").fresh_database()


@pytest.fixture
def db(target):
    conn = store.connect(target, migrate=True)
    yield conn
    conn.close()


def test_a_new_database_gets_the_schema_and_its_version(db):
    assert store.version(db) == store.SCHEMA_VERSION
    assert store.migrate(db) == (store.SCHEMA_VERSION, store.SCHEMA_VERSION)  # idempotent


def test_a_lock_is_held_once_and_taken_over_when_its_lease_runs_out(db, target):
    other_host = store.connect(target)
    assert state.try_lock(db, "job:1", "a", ttl_s=0.5) is None
    busy = state.try_lock(other_host, "job:1", "b", ttl_s=0.5)
    assert busy is not None and busy["holder"] == "a"
    assert state.lock_is_live(other_host, "job:1")
    # The holder stops renewing (killed): after the lease, another process takes it.
    time.sleep(0.7)
    assert not state.lock_is_live(other_host, "job:1")
    assert state.try_lock(other_host, "job:1", "b", ttl_s=30) is None
    assert state.holds(other_host, "job:1", "b") and not state.holds(db, "job:1", "a")
    assert not state.renew(db, "job:1", "a", 30)  # a's lease is gone for good
    other_host.close()


def test_a_live_holder_keeps_its_lock_past_the_lease_by_renewing(db, target):
    with state.job_lock(db, "7", "a", ttl_s=0.6) as name:
        time.sleep(1.5)  # more than twice the lease: the heartbeat renewed it
        other = store.connect(target)
        with pytest.raises(state.LockBusy), state.job_lock(other, "7", "b", ttl_s=0.6):
            pass
        assert state.holds(other, name, "a")
        other.close()
    assert not state.lock_is_live(db, "job:7")  # released at the end of the block


def test_only_one_of_many_concurrent_takers_wins(db, target):
    winners: list[str] = []

    def take(i: int) -> None:
        conn = store.connect(target)
        if state.try_lock(conn, "job:42", f"t{i}", ttl_s=60) is None:
            winners.append(f"t{i}")
        conn.close()

    threads = [threading.Thread(target=take, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1, winners


def test_the_ledger_keeps_one_applied_row_per_key(db):
    state.record(db, key="scancel:1", incident="i", kind="cancel", status="applied", at=1.0)
    assert state.applied(db, "scancel:1")["incident"] == "i"
    with pytest.raises(store.DB_ERRORS):
        state.record(db, key="scancel:1", incident="j", kind="cancel", status="applied", at=2.0)
    state.record(db, key="scancel:1", incident="j", kind="cancel", status="skipped", at=3.0)


def test_the_queue_takes_a_delivery_once_and_recovers_an_abandoned_one(db, target):
    assert state.queue_put(db, key="k", job_id="5", source="bare", title="t", incident="i1") == (
        "i1",
        False,
    )
    assert state.queue_put(db, key="k", job_id="5", source="bare", title="t", incident="i9") == (
        "i1",
        True,
    )
    row = state.queue_claim(db, "other-host:123:1")
    assert row is not None and row["key"] == "k" and row["attempts"] == 1
    assert state.queue_claim(db, "other-host:123:2") is None  # taken
    assert state.queue_recover(db, lease_s=60) == 0  # claimed just now: its worker may live
    # Its worker's host died: no lock on job 5, and claimed two minutes ago.
    db.execute("UPDATE deliveries SET updated = ? WHERE key = 'k'", (time.time() - 120,))
    second = store.connect(target)
    assert state.queue_recover(second, lease_s=60) == 1
    assert state.queue_claim(second, "this-host:1:1")["key"] == "k"
    second.close()


def test_a_delivery_whose_job_lock_lives_stays_with_its_worker(db):
    state.queue_put(db, key="k2", job_id="6", source="bare", title="t", incident="i2")
    state.queue_claim(db, "other-host:9:1")
    db.execute("UPDATE deliveries SET updated = ? WHERE key = 'k2'", (time.time() - 120,))
    assert state.try_lock(db, "job:6", "other-host worker", ttl_s=60) is None
    assert state.queue_recover(db, lease_s=60) == 0


def test_node_events_count_once_and_progress_is_measured_across_sweeps(db):
    from types import SimpleNamespace as E

    ev = E(key="x1", node="gpu-01", kind="xid", gpu="0", detail="79", incident="i", at=5.0)
    assert state.record_node_events(db, [ev, ev]) == 1
    assert state.record_node_events(db, [ev]) == 0
    assert [r["key"] for r in state.node_events(db, since=0)] == ["x1"]
    assert state.step_unchanged_for(db, "9", 100, now=1000.0) == 0.0
    assert state.step_unchanged_for(db, "9", 100, now=1300.0) == 300.0
    assert state.step_unchanged_for(db, "9", 101, now=1400.0) == 0.0


def test_incidents_open_close_and_count_as_handled(db):
    state.open_incident(db, "inc1", "77", "cli", "/f")
    state.close_incident(db, "inc1", exit_code=0, verdict="grow", new_job_id=None, summary="s",
                         handled=False)  # fmt: skip
    assert state.handled_incident(db, "77") is None  # observed only
    state.open_incident(db, "inc2", "77", "cli", "/f")
    state.close_incident(db, "inc2", exit_code=0, verdict="true_oom", new_job_id="78", summary="s")
    assert state.handled_incident(db, "77")["new_job_id"] == "78"


def test_a_resumed_incident_lists_as_the_most_recent_and_keeps_when_it_was_created(db):
    # The field case: an incident stopped days ago, many others since, then `runbook oom JOB`
    # resumes it; `runbook incidents` must show it at the top, not past the limit.
    state.open_incident(db, "old", "5", "cli", "/f")
    state.close_incident(db, "old", exit_code=1, verdict=None, new_job_id=None, summary="s",
                         stopped=True)  # fmt: skip
    created = db.execute("SELECT created FROM incidents WHERE id = 'old'").fetchone()[0]
    for i in range(3):
        time.sleep(0.01)
        state.open_incident(db, f"new{i}", str(10 + i), "cli", "/f")
    assert [r["id"] for r in state.recent_incidents(db, 2)] == ["new2", "new1"]
    time.sleep(0.01)
    state.open_incident(db, "old", "5", "cli", "/f")
    rows = state.recent_incidents(db, 2)
    assert [r["id"] for r in rows] == ["old", "new2"] and rows[0]["created"] == created
    assert rows[0]["status"] == "running" and rows[0]["updated"] > created


def test_a_newer_schema_is_refused_and_an_older_shared_one_asks_for_migrate(db, target):
    db.execute("UPDATE schema_version SET version = ?", (store.SCHEMA_VERSION + 1,))
    with pytest.raises(ConfigError) as e:
        store.connect(target)
    assert "upgrade runbook" in e.value.hint
    db.execute("UPDATE schema_version SET version = ?", (1,))
    if db.kind == "postgresql":
        with pytest.raises(ConfigError) as e:
            store.connect(target)  # a shared database is migrated by an admin, on purpose
        assert "runbook state migrate" in e.value.hint
        assert store.migrate(db) == (1, store.SCHEMA_VERSION)
    else:
        store.connect(target).close()  # the embedded one is brought up to date
        assert store.version(db) == store.SCHEMA_VERSION


def test_an_unreachable_postgres_is_a_clear_error_naming_it_without_the_password():
    with pytest.raises(store.StateUnavailable) as e:
        store.connect("postgresql://runbook:s3cret@127.0.0.1:1/runbook")
    assert "127.0.0.1:1" in e.value.message and "s3cret" not in e.value.message


def test_clusters_share_one_postgres_each_in_its_own_schema(postgres):
    """Several clusters' sites on one PostgreSQL ([slurm] cluster names the schema): the same
    job id on two clusters is two jobs; one cluster's lock and queue are not the other's."""
    url = postgres.fresh_database()
    a = store.connect(url, schema="alpha", migrate=True)
    b = store.connect(url, schema="beta", migrate=True)
    assert state.try_lock(a, "job:100", "alpha-host", ttl_s=60) is None
    assert state.try_lock(b, "job:100", "beta-host", ttl_s=60) is None  # not alpha's job 100
    state.open_incident(a, "ia", "100", "hook", "/a")
    state.close_incident(a, "ia", exit_code=0, verdict="true_oom", new_job_id="101", summary="")
    assert state.handled_incident(b, "100") is None
    state.queue_put(a, key="bare:100", job_id="100", source="bare", title="", incident="ia")
    assert state.queue_claim(b, "beta-host:1:1") is None  # beta's workers see only beta's queue
    assert store.schemas_with_state(a) == ["alpha", "beta"]
    with pytest.raises(ConfigError):
        store.connect(url, schema='x"; DROP TABLE incidents; --')
    a.close()
    b.close()


def test_a_shared_cluster_schema_waits_for_migrate(postgres):
    url = postgres.fresh_database()
    with pytest.raises(ConfigError) as e:
        store.connect(url, schema="gamma")
    assert "runbook state migrate" in e.value.hint


def test_two_hosts_flushing_one_outbox_send_each_message_once(db, target, monkeypatch):
    import dataclasses

    from runbook import notify
    from runbook.site import SiteConfig

    site = SiteConfig()
    site = dataclasses.replace(
        site, notify=dataclasses.replace(site.notify, webhook_url="http://127.0.0.1:9/hook")
    )
    sent: list[str] = []
    lock = threading.Lock()

    def fake_send(url, payload, timeout):
        time.sleep(0.01)  # a real POST takes a while: the other host flushes meanwhile
        with lock:
            sent.append(payload)

    monkeypatch.setattr(notify, "_send_webhook", fake_send)
    for i in range(20):
        notify.queue(db, site, f"inc{i}", f"summary {i}", None)

    def host() -> None:
        conn = store.connect(target)  # each host its own connection, in its own thread
        notify.flush(conn, site)
        conn.close()

    threads = [threading.Thread(target=host) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(sent) == 20 and sorted(sent) == sorted(set(sent))
    assert db.execute("SELECT count(*) FROM outbox WHERE sent IS NULL").fetchone()[0] == 0
