"""`runbook hook serve` as a service, over real HTTP on loopback: a delivery survives kill -9
right after its 202; slow clients do not lock others out; /healthz and /metrics answer."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from runbook import state
from runbook.site import load_site
from tests.integration.slurm_helpers import wait_until
from tests.integration.test_hook_http import _incident_of, _ledger, _wedged, free_port, post

pytestmark = pytest.mark.integration
TOKEN = "svc-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def start(port: int, *args: str, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["runbook", *args, "hook", "serve", "--port", str(port)],
        env={**os.environ, "RUNBOOK_HOOK_TOKEN": TOKEN, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_listening(f"http://127.0.0.1:{port}", proc, proc.stderr.read)
    return proc


def wait_listening(url: str, proc: subprocess.Popen, errors) -> None:
    """Until `runbook hook serve` answers /healthz (any status); its errors if it exited."""

    def up():
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2)
        except urllib.error.HTTPError:
            return True
        except OSError:
            if proc.poll() is not None:
                pytest.fail(errors())
            return False
        return True

    wait_until(up, 30, f"runbook hook serve on {url}")


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _deliveries(job: str) -> list[dict]:
    site = load_site("devcluster", environ={})
    conn = state.site_db(site)
    return [dict(r) for r in conn.execute("SELECT * FROM deliveries WHERE job_id = ?", (job,))]


def test_kill_9_right_after_the_202_loses_nothing_and_does_nothing_twice(cluster):
    job, s = _wedged(cluster, "killjob")
    port = free_port()
    proc = start(port, "--site", "devcluster")
    try:
        body = json.dumps({"job_id": job}).encode()
        code, doc = post(f"http://127.0.0.1:{port}/", body, AUTH)
        proc.send_signal(signal.SIGKILL)  # right after the answer: the delivery is on disk
        proc.wait(10)
        assert code == 202
        incident = doc["accepted"][0]["incident"]
        (row,) = _deliveries(job)
        assert row["incident"] == incident and row["status"] in ("queued", "running")
        proc = start(port, "--site", "devcluster")
        inc = wait_until(
            lambda: (r := _incident_of(job)) and r["status"] != "running" and r,
            180,
            "the queued incident to finish after the restart",
        )
        assert inc["id"] == incident and inc["verdict"] == "fragmentation"
        assert _ledger(job) == [("cancel", "applied"), ("submit", "applied")]
        assert [d["status"] for d in _deliveries(job)] == ["done"]
        s.wait_done(inc["new_job_id"])
    finally:
        proc.terminate()
        proc.wait(60)
        s.close()


def test_slow_clients_do_not_lock_others_out_and_health_and_metrics_answer(cluster, tmp_path):
    site = tmp_path / "svc.toml"
    site.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n[hook]\nchannel_timeout_s = 60\n')
    port = free_port()
    proc = start(port, "--config", str(site))
    url = f"http://127.0.0.1:{port}"
    slow = []
    try:
        # 150 clients that send half a request and then nothing: more than waitress's default
        # connection limit (100), which would leave everyone else waiting for the timeout.
        for _ in range(150):
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"job')
            slow.append(c)
        t0 = time.monotonic()
        code, doc = post(f"{url}/", b'{"job_id": "4242424"}', AUTH)
        assert code == 202 and doc["accepted"][0]["job_id"] == "4242424"
        assert post(f"{url}/", b'{"alerts": "x"}', AUTH)[0] == 400
        assert post(f"{url}/", b'{"job_id": "1"}', {"Authorization": "Bearer no"})[0] == 403
        answered_in = time.monotonic() - t0
        code, body = get(f"{url}/healthz")
        health = json.loads(body)
        assert code == 200 and health["checks"]["slurm"]["ok"] and health["checks"]["state"]["ok"]
        code, body = get(f"{url}/metrics")
        text = body.decode()
        assert code == 200 and 'runbook_hook_deliveries_total{code="202"} 1.0' in text
        assert 'runbook_hook_deliveries_total{code="403"} 1.0' in text
        print(f"3 requests answered in {answered_in:.2f}s with 150 slow connections open")
        # The worker asked the real Slurm about 4242424, which it does not know: rejected.
        conn = state.open_db(tmp_path / "state" / "runbook.db")
        wait_until(
            lambda: conn.execute("SELECT status FROM deliveries").fetchone()[0] == "rejected",
            60,
            "the unknown job's delivery to be rejected",
        )
    finally:
        for c in slow:
            c.close()
        proc.terminate()
        proc.wait(30)
