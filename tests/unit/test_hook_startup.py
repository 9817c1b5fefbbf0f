"""`runbook hook serve` that cannot start says why in one line and exits 2: port in use, an
address that is not this host's, a public bind without a secret."""

from __future__ import annotations

import socket
import subprocess
import sys


def serve(tmp_path, *args, env=None):
    site = tmp_path / "site.toml"
    site.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n')
    return subprocess.run(
        [sys.executable, "-m", "runbook", "--config", str(site), "hook", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def test_port_in_use(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = serve(tmp_path, "--port", str(s.getsockname()[1]))
    assert r.returncode == 2 and "is in use" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 2  # the error and what to do


def test_bad_bind_address(tmp_path):
    r = serve(tmp_path, "--bind", "999.1.1.1", "--port", "1", env={"RUNBOOK_HOOK_TOKEN": "t"})
    assert r.returncode == 2 and "not an address of this host" in r.stderr
    assert "Traceback" not in r.stderr


def test_public_bind_needs_a_secret_or_token(tmp_path):
    r = serve(tmp_path, "--bind", "0.0.0.0", "--port", "1")
    assert r.returncode == 2 and "without a secret or token" in r.stderr
