"""Checkpoint on request: each rank declares the file it polls with the figures runbook counts
it against, and answers runbook's two writes of that file (`next`: say your step and pause; a
step: save after it, then hold until the cancel or the request is withdrawn). Run for real in a
fresh interpreter, with the environment torchrun or srun give a rank; the file is written by a
thread of the program as runbook writes it (whole, renamed into place)."""

from __future__ import annotations

import subprocess
import sys

from runbook.evidence import handler
from runbook.evidence.launcher_log import scan

PROGRAM = r"""
import os, sys, threading, time
from runbook import instrument

path = instrument.request_path()
def write(text, after=0.0):
    def go():
        time.sleep(after)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"runbook-checkpoint-request id=inc-1 step={text}\n")
        os.replace(tmp, path)
    threading.Thread(target=go).start() if after else go()

assert instrument.checkpoint_on()
for step in range(1, 4):
    assert not instrument.checkpoint_requested(step)
write("next")
write("5", after=0.6)                  # runbook names the step while this rank is paused
t0 = time.monotonic()
print("at 4", instrument.checkpoint_requested(4), "paused", time.monotonic() - t0 >= 0.5)
print("at 5", instrument.checkpoint_requested(5))
write("withdrawn", after=0.6)          # runbook gave up: the hold ends, training goes on
t0 = time.monotonic()
instrument.checkpoint_written(5, "/scratch/run/step_5.pt")
print("held", time.monotonic() - t0 >= 0.5)
print("at 6", instrument.checkpoint_requested(6))
os.remove(path)
instrument.checkpoint_written(7, "/scratch/run/step_7.pt")   # not requested: no hold
# A second request naming a step this rank already passed: it says so and saves nothing.
with open(path, "w") as f:
    f.write("runbook-checkpoint-request id=inc-2 step=6\n")
print("at 8", instrument.checkpoint_requested(8))
"""


def _run(env: dict, program: str = PROGRAM, tmp=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp,
        env={"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "4242", "RUNBOOK_PREVENT": "1", **env},
    )


TORCHRUN = {  # what torchrun gives rank 1 of 2 nodes x 2 (a Slurm task per node)
    "RANK": "1",
    "WORLD_SIZE": "4",
    "LOCAL_RANK": "1",
    "LOCAL_WORLD_SIZE": "2",
    "TORCHELASTIC_RUN_ID": "4242",
    "SLURM_PROCID": "0",
    "SLURM_NTASKS": "2",
    "SLURM_JOB_NUM_NODES": "2",
}


def test_a_rank_says_its_step_pauses_saves_the_step_named_holds_and_goes_on_when_withdrawn(
    tmp_path,
):
    r = _run(TORCHRUN, tmp=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out == ["at 4 False paused True", "at 5 True", "held True", "at 6 False", "at 8 False"]
    err = r.stderr
    path = f"{tmp_path}/.runbook-checkpoint-4242"
    assert (
        "RUNBOOK_INSTRUMENT checkpoint-request rank=1 world=4 local_rank=1 local_world=2 "
        "slurm_ntasks=2 slurm_nnodes=2 launcher=torchrun host=" in err
    )
    assert f"prevent=yes hold=900 request={path}" in err
    assert "RUNBOOK_INSTRUMENT checkpoint-seen rank=1 id=inc-1 step=4" in err
    assert "RUNBOOK_INSTRUMENT checkpoint rank=1 step=5 id=inc-1 path=/scratch/run/step_5.pt" in err
    assert "RUNBOOK_INSTRUMENT checkpoint-resumed rank=1 id=inc-1 why=withdrawn" in err
    assert "RUNBOOK_INSTRUMENT checkpoint rank=1 step=7 path=/scratch/run/step_7.pt" in err
    assert "RUNBOOK_INSTRUMENT checkpoint-missed rank=1 id=inc-2 step=8 asked=6" in err
    # runbook's own reading of these lines: the declaration, and the answers to inc-1.
    lines = scan(err).instrument
    a = handler.answers(lines, "inc-1")
    assert a.seen == {1: 4} and a.written == {1: (5, "/scratch/run/step_5.pt")}
    assert handler.answers(lines, "inc-2").missed == {1: 8}


def test_under_srun_each_task_is_a_rank_and_a_person_s_signal_still_means_now(tmp_path):
    program = r"""
import os, signal, time
from runbook import instrument
assert instrument.checkpoint_on("usr1")
os.kill(os.getpid(), signal.SIGUSR1)
time.sleep(0.05)
print(instrument.checkpoint_requested(3), instrument.checkpoint_requested(4))
assert not instrument.checkpoint_on("NOSUCHSIGNAL")
"""
    env = {"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_NNODES": "2"}
    r = _run({**env, "RUNBOOK_CHECKPOINT_HOLD_S": "0"}, program, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"]
    assert (
        "checkpoint-request rank=3 world=4 local_rank=1 local_world=- slurm_ntasks=4 "
        "slurm_nnodes=2 launcher=srun" in r.stderr
    )
    assert "refused: 'NOSUCHSIGNAL'" in r.stderr


def test_outside_a_slurm_job_nothing_is_declared(tmp_path):
    r = subprocess.run(
        [sys.executable, "-c", "from runbook import instrument; print(instrument.checkpoint_on())"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": "1; rm -rf /"},
    )
    assert r.stdout.strip() == "False"
    assert "refused: SLURM_JOB_ID is not a Slurm job id" in r.stderr


def test_under_deepspeeds_launcher_its_own_figures_are_declared(tmp_path):
    """deepspeed's launcher (one per node, from srun) sets WORLD_SIZE, RANK, LOCAL_RANK and
    LOCAL_SIZE (its ranks on this node), CROSS_SIZE (nodes), and no LOCAL_WORLD_SIZE: rank 1 of
    2 nodes x 2, on node 0 (Slurm task 0)."""
    env = {
        "WORLD_SIZE": "4",
        "RANK": "1",
        "LOCAL_RANK": "1",
        "LOCAL_SIZE": "2",
        "CROSS_SIZE": "2",
        "SLURM_PROCID": "0",
        "SLURM_NTASKS": "2",
        "SLURM_JOB_NUM_NODES": "2",
    }
    program = "from runbook import instrument; instrument.checkpoint_on()"
    r = _run(env, program, tmp_path)
    assert r.returncode == 0, r.stderr
    assert (
        "checkpoint-request rank=1 world=4 local_rank=1 local_world=2 slurm_ntasks=2 "
        "slurm_nnodes=2 launcher=deepspeed" in r.stderr
    ), r.stderr


def test_a_loop_that_gives_no_step_saves_nothing_on_runbooks_request(tmp_path):
    """checkpoint_requested() without the step it finished cannot take part in one step for
    every rank: it says it saw the request, with no step, and saves nothing (runbook then
    withdraws the request, saying why)."""
    program = r"""
import os
from runbook import instrument
assert instrument.checkpoint_on()
with open(instrument.request_path(), "w") as f:
    f.write("runbook-checkpoint-request id=inc-3 step=next\n")
print(instrument.checkpoint_requested(), instrument.checkpoint_requested())
"""
    r = _run({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, program, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]
    assert "checkpoint-seen rank=0 id=inc-3 step=-" in r.stderr
    assert handler.answers(scan(r.stderr).instrument, "inc-3").seen == {0: None}
