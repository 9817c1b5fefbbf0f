"""`runbook verify`'s judgement as data in, data out: a rerun that Slurm cancelled, that failed or
timed out before the failing step is not "passed"; steps come only from the training's output,
never from Slurm's own `*** STEP <jobid>.<n> ... CANCELLED ***` notices."""

from __future__ import annotations

from types import SimpleNamespace

from runbook.evidence.launcher_log import LaunchReport
from runbook.site import LogsSection
from runbook.verify import judge, training_steps

STEP = LogsSection().step_pattern
PLAN = {"rung": "halve_micro_batch", "failed_step": 20}


def job(state: str):
    return SimpleNamespace(job_id="77", state=state)


def test_slurm_step_notices_are_not_training_steps():
    tails = [
        "step 12 loss 2.1",
        "slurmstepd: error: *** STEP 77.0 ON gpu-01 CANCELLED AT 2026-11-23T03:00:00 ***",
        "[2026-11-23 03:00:01] *** JOB 77 ON gpu-01 CANCELLED AT 2026-11-23T03:00:01 ***",
        "srun: error: step 30 was killed",
    ]
    assert training_steps(tails, STEP) == 12


def test_a_cancelled_rerun_before_the_failing_step_is_not_passed():
    tails = ["step 12 loss 2.1", "slurmstepd: error: *** STEP 77.20 ON gpu-01 CANCELLED AT x ***"]
    v = judge(PLAN, job("CANCELLED"), LaunchReport(), tails, STEP)
    assert v["state"] == "failed" and v["last_step"] == 12
    assert any("CANCELLED before step 20" in d for d in v["details"])


def test_timeout_and_failure_before_the_step_fail_and_running_is_pending():
    for state in ("TIMEOUT", "FAILED", "NODE_FAIL"):
        assert judge(PLAN, job(state), LaunchReport(), ["step 3"], STEP)["state"] == "failed"
    assert judge(PLAN, job("RUNNING"), LaunchReport(), ["step 3"], STEP)["state"] == "pending"


def test_past_the_failing_step_is_passed_even_if_later_cancelled():
    v = judge(PLAN, job("CANCELLED"), LaunchReport(), ["step 25 loss 1.0"], STEP)
    assert v["state"] == "passed" and v["last_step"] == 25


def test_a_step_number_past_the_digit_limit_is_not_a_step():
    assert training_steps(["step " + "9" * 5000], STEP) is None
