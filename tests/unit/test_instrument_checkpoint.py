"""Checkpoint on request (issue 56): the job declares the signal it handles, runbook (through
Slurm, as the job's owner) sends it, the loop sees one request per signal and says where the
checkpoint went. Run in a fresh interpreter: Python delivers signals to the main thread."""

from __future__ import annotations

import subprocess
import sys

from runbook.evidence.launcher_log import scan

PROGRAM = r"""
import os, signal, time
from runbook import instrument
assert not instrument.checkpoint_requested()
assert instrument.checkpoint_on("usr1")
os.kill(os.getpid(), signal.SIGUSR1)
time.sleep(0.05)
print("first", instrument.checkpoint_requested(), "second", instrument.checkpoint_requested())
t0 = time.monotonic()
instrument.checkpoint_written(7, "/scratch/run/step_7.pt")  # requested: held for the cancel
held = time.monotonic() - t0
instrument.checkpoint_written(8, "/scratch/run/step_8.pt")  # not requested: no hold
print("held", held >= 1.0, "then waited", time.monotonic() - t0 - held >= 1.0)
assert not instrument.checkpoint_on("NOSUCHSIGNAL")
"""


def test_a_signal_asks_the_loop_once_and_the_log_says_the_handler_and_the_checkpoint():
    r = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "SLURM_PROCID": "1",
            "PATH": "/usr/bin:/bin",
            "RUNBOOK_CHECKPOINT_HOLD_S": "1",
            "RUNBOOK_PREVENT": "1",
        },
    )
    assert r.returncode == 0, r.stderr
    assert "first True second False" in r.stdout
    # After the requested checkpoint the loop waits for the cancel, then goes on; not after
    # one nobody asked for.
    assert "held True then waited False" in r.stdout, r.stdout
    assert "RUNBOOK_INSTRUMENT checkpoint-signal rank=1 signal=USR1 prevent=yes hold=1" in r.stderr
    assert "RUNBOOK_INSTRUMENT checkpoint rank=1 step=7 path=/scratch/run/step_7.pt" in r.stderr
    assert "refused: 'NOSUCHSIGNAL'" in r.stderr
    # The log scan keeps these lines (the node-side filter passes RUNBOOK_INSTRUMENT lines).
    kinds = {i.kind for i in scan(r.stderr).instrument}
    assert {"checkpoint-signal", "checkpoint"} <= kinds, kinds
