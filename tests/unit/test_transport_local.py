"""The local transport: argv never goes through a shell, output caps are reported, timeouts kill."""

from __future__ import annotations

import shlex
import sys

import pytest

from runbook.errors import TransportError
from runbook.transport.base import command_line
from runbook.transport.local import LocalTransport

HOSTILE = ["job; rm -rf /", "$(touch /tmp/pwned)", "a b'c\"d", "`id`", "gpu-[01-02]", "-n", "\n"]


@pytest.mark.parametrize("piece", HOSTILE)
def test_command_line_round_trips_through_a_shell(piece):
    argv = ["printf", "%s", piece]
    assert shlex.split(command_line(argv)) == argv
    # And a real shell reads it back as the same argv (this is what the SSH server does).
    r = LocalTransport().run(["sh", "-c", command_line(argv)])
    assert r.ok and r.stdout == piece


def test_output_cap_is_reported_not_silent():
    t = LocalTransport(max_output_bytes=1000)
    r = t.run([sys.executable, "-c", "import sys; sys.stdout.write('x' * 5000)"])
    assert r.ok and len(r.stdout) == 1000
    assert r.stdout_dropped == 4000 and r.truncated


def test_exit_code_and_stderr():
    r = LocalTransport().run(
        [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"]
    )
    assert r.exit_code == 3 and r.stderr == "boom" and r.tail() == "boom"


def test_timeout_kills_and_says_so():
    with pytest.raises(TransportError, match="did not finish within 0.3s"):
        LocalTransport().run(["sleep", "5"], timeout=0.3)


def test_missing_program_is_a_clear_error():
    with pytest.raises(TransportError, match="cannot run `no-such-program-xyz`"):
        LocalTransport().run(["no-such-program-xyz"])
