"""The hook as pagers see it, in process (the WSGI app, a real SQLite state database): what each
request is answered, and what the workers do with a delivery when Slurm answers, refuses, or is
down. Slurm itself is replaced by a small object here (data in, data out); the real service
against the real cluster is tests/integration/test_hook_service.py."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from runbook import state
from runbook.errors import JobNotFound, SlurmError
from runbook.hook import Hook
from runbook.site import load_site


class Slurm:
    """What the workers and /healthz ask of Slurm, answered from a dict."""

    def __init__(self, jobs=(), down=False):
        self.jobs, self.down, self.asked = set(jobs), down, []

    def __call__(self, site):
        return self

    def job(self, job_id):
        self.asked.append(job_id)
        if self.down:
            raise SlurmError("`scontrol -o show job` exited 1: Unable to contact slurm controller")
        if job_id not in self.jobs:
            raise JobNotFound(f"job {job_id} is unknown to slurmctld and to accounting")
        return object()

    def ping(self):
        if self.down:
            raise SlurmError("`scontrol ping` exited 1: DOWN")
        return "Slurmctld(primary) at ctl is UP"


def site_for(tmp_path, **hook):
    f = tmp_path / "site.toml"
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in hook.items())
    f.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n[hook]\n{lines}')
    return load_site(str(f), environ={})


def call(app, method="POST", body=b"", path="/", headers=None):
    got = {}

    def start_response(status, hdrs):
        got["status"], got["headers"] = int(status.split()[0]), dict(hdrs)

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        **(headers or {}),
    }
    out = b"".join(app(environ, start_response))
    doc = out if got["headers"]["Content-Type"].startswith("text/plain") else json.loads(out)
    return got["status"], doc, got["headers"]


def rows(site):
    return [
        dict(r) for r in state.site_db(site).execute("SELECT * FROM deliveries ORDER BY created")
    ]


def test_answers_pagers_act_on(tmp_path):
    runs = []
    app = Hook(site_for(tmp_path), client_factory=Slurm({"7"}), run=lambda *a: runs.append(a))
    code, doc, _ = call(app, body=b'{"job_id": "7"}')
    assert code == 202 and doc["accepted"][0]["duplicate"] is False
    code2, doc2, _ = call(app, body=b'{"job_id": "7"}')
    assert code2 == 202 and doc2["accepted"][0] == {**doc["accepted"][0], "duplicate": True}
    assert [r["status"] for r in rows(app.site)] == ["queued"]  # queued once; nothing ran yet
    assert runs == []
    resolved = {"alerts": [{"status": "resolved", "labels": {"slurm_job_id": "7"}}]}
    assert call(app, body=json.dumps(resolved).encode())[0] == 200
    assert call(app, body=b'{"alerts": ["x"]}')[0] == 400
    assert call(app, method="GET")[0] == 405


def test_503_with_retry_after_when_the_delivery_cannot_be_queued(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    f = tmp_path / "site.toml"
    f.write_text(f'[state]\ndir = "{blocker / "state"}"\n[hook]\nretry_after_s = 17\n')
    app = Hook(load_site(str(f), environ={}), client_factory=Slurm())
    code, doc, headers = call(app, body=b'{"job_id": "7"}')
    assert code == 503 and headers["Retry-After"] == "17" and "cannot queue" in doc["error"]
    full = Hook(site_for(tmp_path, queue_max=1), client_factory=Slurm())
    assert call(full, body=b'{"job_id": "7"}')[0] == 202
    code, doc, headers = call(full, body=b'{"job_id": "8"}')
    assert code == 503 and "queue holds 1" in doc["error"] and "Retry-After" in headers


def test_worker_retries_while_slurm_is_down_then_runs_once(tmp_path):
    slurm = Slurm({"7"}, down=True)
    runs = []
    app = Hook(
        site_for(tmp_path),
        client_factory=slurm,
        run=lambda job, inc, key: runs.append((job, inc)) or ("done", inc),
    )
    _, doc, _ = call(app, body=b'{"job_id": "7"}')
    conn = state.site_db(app.site)
    app._one(conn, state.queue_claim(conn, "h:1:1"))
    (row,) = rows(app.site)
    assert row["status"] == "queued" and row["attempts"] == 1 and "controller" in row["last_error"]
    assert row["next_at"] > row["updated"]  # backed off, not hammering a recovering slurmctld
    assert state.queue_claim(conn, "h:1:1") is None  # not due yet
    # While the workers know Slurm is down, a new delivery is queued but answered 503: the pager
    # keeps the alert pending and retries; its retry is a duplicate with the same incident id.
    code, doc8, headers = call(app, body=b'{"job_id": "8"}')
    assert code == 503 and "Retry-After" in headers and "Slurm cannot be asked" in doc8["error"]
    assert {r["job_id"] for r in rows(app.site)} == {"7", "8"}
    slurm.down = False
    conn.execute("UPDATE deliveries SET next_at = 0 WHERE job_id = '7'")
    app._one(conn, state.queue_claim(conn, "h:1:1"))
    assert runs == [("7", doc["accepted"][0]["incident"])]
    assert {r["job_id"]: r["status"] for r in rows(app.site)} == {"7": "done", "8": "queued"}
    code, again, _ = call(app, body=b'{"job_id": "8"}')
    assert code == 202 and again["accepted"][0]["incident"] == doc8["accepted"][0]["incident"]


def test_a_job_slurm_does_not_know_is_rejected_not_retried(tmp_path):
    app = Hook(site_for(tmp_path), client_factory=Slurm(), run=lambda *a: pytest.fail("ran"))
    call(app, body=b'{"job_id": "999"}')
    conn = state.site_db(app.site)
    app._one(conn, state.queue_claim(conn, "h:1:1"))
    (row,) = rows(app.site)
    assert row["status"] == "rejected" and "unknown" in row["last_error"]


def test_a_worker_that_died_mid_delivery_leaves_it_to_the_next_start(tmp_path):
    app = Hook(site_for(tmp_path), client_factory=Slurm({"7"}))
    call(app, body=b'{"job_id": "7"}')
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    conn = state.site_db(app.site)
    assert state.queue_claim(conn, f"{socket.gethostname()}:{dead.pid}:1") is not None
    alive = f"{socket.gethostname()}:{os.getpid()}:1"
    conn.execute(
        "INSERT INTO deliveries(key, job_id, incident, source, status, owner) VALUES "
        "('k2', '8', 'i2', 'bare', 'running', ?)",
        (alive,),
    )
    assert state.queue_recover(conn) == 1  # the dead owner's only; the live one keeps its own
    assert {r["key"]: r["status"] for r in rows(app.site)} == {"bare:7": "queued", "k2": "running"}


def test_healthz_and_metrics(tmp_path):
    slurm = Slurm({"7"})
    app = Hook(site_for(tmp_path), client_factory=slurm, run=lambda j, i, k: ("done", i))
    code, doc, _ = call(app, method="GET", path="/healthz")
    assert code == 200 and doc["ok"] and doc["checks"]["slurm"]["answer"].endswith("UP")
    call(app, body=b'{"job_id": "7"}')
    call(app, body=b'{"nope": 1}')
    code, text, headers = call(app, method="GET", path="/metrics")
    assert code == 200 and headers["Content-Type"].startswith("text/plain")
    text = text.decode()
    assert 'runbook_hook_deliveries_total{code="202"} 1.0' in text
    assert 'runbook_hook_deliveries_total{code="400"} 1.0' in text
    assert "runbook_hook_queue_depth 1.0" in text
    slurm.down = True
    code, doc, _ = call(app, method="GET", path="/healthz")
    assert code == 200  # cached for a few seconds: a monitor cannot hammer slurmctld
    app._health = None
    code, doc, _ = call(app, method="GET", path="/healthz")
    assert code == 503 and not doc["checks"]["slurm"]["ok"] and doc["checks"]["state"]["ok"]


def test_sweep_metrics_textfile_keeps_the_last_success_through_a_failure(tmp_path):
    from runbook.sweep import Line, SweepResult, write_metrics

    path = str(tmp_path / "runbook.prom")
    res = SweepResult(
        lines=[
            Line("7", "u", "FAILED", "true_oom", "resubmitted", "inc-1"),
            Line("8", "u", "FAILED", "not_oom", "report only"),
        ]
    )
    write_metrics(path, res, 1.5)
    first = Path(path).read_text()
    assert 'runbook_sweep_jobs{incident="yes",verdict="true_oom"} 1.0' in first
    assert "runbook_sweep_success 1.0" in first
    ok_at = next(
        ln
        for ln in first.splitlines()
        if ln.startswith("runbook_sweep_last_success_timestamp_seconds ")
    )
    write_metrics(path, None, 0.2, "slurmctld down")
    second = Path(path).read_text()
    assert "runbook_sweep_success 0.0" in second and ok_at in second
