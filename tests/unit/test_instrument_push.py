"""runbook.instrument's push to the hook (issue 30): what it sends, what it prints, when it must
not send; against a real HTTP server on loopback (the hook's own end-to-end run on the cluster is
tests/integration/test_hook_http.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from runbook import instrument


class Recorder(BaseHTTPRequestHandler):
    """Answers each POST with the next (status, body) of the server's script; records it."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        n = int(self.headers.get("Content-Length") or 0)
        self.server.got.append((self.path, dict(self.headers), self.rfile.read(n)))
        status, body = self.server.script.pop(0) if self.server.script else (202, {})
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    srv.got, srv.script = [], []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def job_env(monkeypatch, server):
    monkeypatch.setattr(
        instrument,
        "_state",
        {**instrument._state, "pushed": set(), "retries": [], "pressure_told": False},
    )
    for var in ("TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "RANK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_PROCID", "5")
    monkeypatch.setenv("RUNBOOK_HOOK_SETTLE_S", "0")
    monkeypatch.setenv("RUNBOOK_HOOK_TIMEOUT_S", "2")
    monkeypatch.setenv("RUNBOOK_HOOK_TOKEN", "s3cret-token")
    port = server.server_address[1]
    monkeypatch.setenv("RUNBOOK_HOOK_URL", f"http://127.0.0.1:{port}/hook?x=1")
    return f"http://127.0.0.1:{port}"


ACCEPTED = {"accepted": [{"job_id": "4242", "incident": "20261126-101010-4242"}], "ignored": []}


def test_pushes_the_job_id_with_the_token_once_and_says_the_incident(server, job_env, capsys):
    server.script = [(202, ACCEPTED)]
    line = instrument.push()
    assert line is not None and line in capsys.readouterr().err
    assert line == (
        f"RUNBOOK_INSTRUMENT push rank=5 job=4242 reason=oom to={job_env} "
        "status=202 incident=20261126-101010-4242"
    )
    assert "s3cret" not in line and "x=1" not in line  # neither the token nor the query
    ((path, headers, body),) = server.got
    assert path == "/hook?x=1" and json.loads(body) == {"job_id": "4242"}
    assert headers["Authorization"] == "Bearer s3cret-token"
    assert instrument.push() is None and len(server.got) == 1  # once per process


def test_a_refusal_is_said_and_not_retried_a_5xx_is_retried_once(server, job_env):
    server.script = [(403, {"error": "bearer token does not match"})]
    line = instrument.push()
    assert line.endswith("status=403 error='bearer token does not match'") and len(server.got) == 1
    instrument._state["pushed"].clear()
    server.got.clear()
    server.script = [(503, {"error": "cannot queue the delivery now"}), (202, ACCEPTED)]
    assert instrument.push().endswith("status=202 incident=20261126-101010-4242")
    assert len(server.got) == 2


def test_an_unreachable_hook_is_one_line_never_an_exception(job_env, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RUNBOOK_HOOK_URL", f"http://127.0.0.1:{port}/")
    line = instrument.push()
    assert "failed: URLError" in line and "refused" in line.lower()


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "3"}, "0 of 3 restarts"),
        ({"SLURM_JOB_ID": "42; rm -rf /"}, "not a Slurm job id"),
        ({"SLURM_JOB_ID": ""}, "not a Slurm job id"),
        ({"RUNBOOK_HOOK_URL": "ftp://user:pw@host/x"}, "must be an http:// or https:// URL"),
        ({"RUNBOOK_HOOK_URL": "https://user:pw@host/x"}, "credentials go in RUNBOOK_HOOK_TOKEN"),
    ],
)
def test_no_push_where_it_would_be_wrong(server, job_env, monkeypatch, env, said):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    line = instrument.push()
    assert "not pushed" in line and said in line and not server.got
    assert "pw" not in line


def test_the_last_restart_of_torchrun_pushes(server, job_env, monkeypatch):
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "3")
    monkeypatch.setenv("TORCHELASTIC_MAX_RESTARTS", "3")
    server.script = [(202, ACCEPTED)]
    assert "status=202" in instrument.push() and len(server.got) == 1


def test_without_a_url_nothing_is_sent_or_printed(server, job_env, monkeypatch, capsys):
    monkeypatch.delenv("RUNBOOK_HOOK_URL")
    assert instrument.push() is None and not server.got and not capsys.readouterr().err


UNCAUGHT = """
import torch
from runbook import instrument
instrument.install()
raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                             "total capacity of 79.15 GiB of which 1.00 GiB is free.")
"""
CAUGHT = """
import torch
from runbook import instrument
instrument.install()
try:
    with instrument.watch():
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
except torch.OutOfMemoryError:
    print("skipped the batch, training goes on")
"""


def _run(script: str, url: str, tmp_path) -> subprocess.CompletedProcess:
    env = {
        "RUNBOOK_OOM_DUMP_DIR": str(tmp_path),
        "SLURM_PROCID": "1",
        "SLURM_JOB_ID": "77",
        "RUNBOOK_HOOK_URL": url,
        "RUNBOOK_HOOK_SETTLE_S": "0",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )


def test_an_uncaught_oom_pushes_after_its_traceback_a_caught_one_does_not(server, tmp_path):
    pytest.importorskip("torch", reason="torch is a test dependency (scripts/test installs it)")
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    server.script = [(202, {"accepted": [{"job_id": "77", "incident": "i-77"}]})]
    r = _run(UNCAUGHT, url, tmp_path)
    assert r.returncode == 1
    ((_, _, body),) = server.got
    assert json.loads(body) == {"job_id": "77"}
    # The traceback is in the log before the incident can read it.
    err = r.stderr
    assert err.index("torch.OutOfMemoryError: CUDA out of memory") < err.index("push rank=1")
    assert "RUNBOOK_INSTRUMENT push rank=1 job=77 reason=oom" in err and "incident=i-77" in err
    # A job that catches the OOM (skips the batch, retries smaller) goes on: nobody is told.
    server.got.clear()
    r = _run(CAUGHT, url, tmp_path)
    assert r.returncode == 0 and "training goes on" in r.stdout and not server.got
    assert "RUNBOOK_INSTRUMENT push" not in r.stderr


@pytest.mark.parametrize(
    "body",
    [{"accepted": {"incident": "x"}}, {"accepted": "x"}, ["not", "an", "object"], {"accepted": []}],
)
def test_an_odd_answer_is_its_status_never_an_exception(server, job_env, body):
    server.script = [(202, body)]
    assert instrument.push().endswith("status=202")


def test_a_reply_that_is_not_http_and_a_nan_setting_are_one_line(job_env, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(2)
        port = s.getsockname()[1]

        def garbage():
            for _ in range(2):  # both tries
                conn, _ = s.accept()
                with conn:
                    conn.recv(65536)
                    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

        t = threading.Thread(target=garbage, daemon=True)
        t.start()
        monkeypatch.setenv("RUNBOOK_HOOK_URL", f"http://127.0.0.1:{port}/")
        monkeypatch.setenv("RUNBOOK_HOOK_SETTLE_S", "nan")
        monkeypatch.setattr(instrument, "HOOK_SETTLE_S", 0.0)
        line = instrument.push()
        t.join(10)
    assert "failed: BadStatusLine" in line


def test_retries_rising_over_three_memory_lines_tell_the_hook_once_without_holding_the_step(
    server, job_env, capsys
):
    server.script = [(202, ACCEPTED)]
    for step, retries in enumerate([0, 0, 5, 10, 15, 20]):
        instrument.memory_line(step, allocated=1, peak=2, reserved=2, retries=retries, total=9)
    deadline = time.monotonic() + 10
    while not server.got and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a second push, were there one, would have come by now
    ((_path, _headers, body),) = server.got
    assert json.loads(body) == {"job_id": "4242"}
    err = capsys.readouterr().err
    assert "RUNBOOK_INSTRUMENT push rank=5 job=4242 reason=thrashing" in err, err
    # An OOM later in the same process is still pushed: the reasons are told apart.
    server.script = [(202, ACCEPTED)]
    assert instrument.push("oom") is not None and len(server.got) == 2
