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


def job(state: str, submit=None, start=None):
    return SimpleNamespace(job_id="77", state=state, submit=submit, start=start)


def test_slurm_step_notices_are_not_training_steps():
    tails = [
        "step 12 loss 2.1",
        "slurmstepd: error: *** STEP 77.0 ON gpu-01 CANCELLED AT 2026-11-23T03:00:00 ***",
        "[2026-11-23 03:00:01] *** JOB 77 ON gpu-01 CANCELLED AT 2026-11-23T03:00:01 ***",
        "srun: error: step 30 was killed",
    ]
    assert training_steps(tails, STEP) == 12


PREFIXES = [
    "0: ",
    "12: ",
    "[rank3]: ",
    "gpu-01: ",
    "2026-11-25 10:00:01 ",
    "[2026-11-25T10:00] 3: ",
]


def test_slurm_notices_under_any_prefix_are_not_training_steps():
    """Issue 34 item 6: the same notice under `srun -l`'s task label, a launcher's rank prefix,
    a parallel shell's host, a collector's timestamp: never step 184 (the job id)."""
    for prefix in PREFIXES:
        tails = [
            f"{prefix}step 12 loss 2.1",
            f"{prefix}slurmstepd: error: *** STEP 184.0 ON gpu-01 CANCELLED AT 2026-11-25T10:00 ***",
            f"{prefix}slurmstepd-gpu-01: error: *** JOB 184 ON gpu-01 CANCELLED AT x ***",
            f"{prefix}srun: error: gpu-01: task 3: step 184 Killed",
        ]
        assert training_steps(tails, STEP) == 12, prefix
        v = judge(PLAN, job("CANCELLED"), LaunchReport(), tails, STEP)
        assert v["state"] == "failed" and v["last_step"] == 12, (prefix, v)


def test_training_lines_that_mention_a_launcher_word_still_count():
    assert training_steps(["0: step 21 loss 1.0 (srun_wrapper ok)"], STEP) == 21


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


def test_the_reruns_queue_wait_and_pass_reach_the_cost():
    from datetime import datetime, timedelta

    from runbook.report.cost import incident_cost
    from runbook.verify import judge

    submit = datetime(2026, 11, 23, 7, 0, 0)
    r = judge(
        {"failed_step": 5},
        job("COMPLETED", submit=submit, start=submit + timedelta(seconds=42)),
        LaunchReport(),
        ["0: step 9/10 loss 0.1"],
        LogsSection().step_pattern,
    )
    assert r["state"] == "passed" and r["queue_wait_s"] == 42.0 and r["passed_at"]
    cost = incident_cost(
        {
            "job": {"end": submit.timestamp() - 60, "state": "OUT_OF_MEMORY"},
            "started": submit.timestamp() - 30,
            "verification": r,
        }
    )
    assert cost["rerun_queue_s"] == 42.0
    assert cost["recovered_s"] is not None and cost["recovered_s"] > 60
    labels = [m["label"] for m in cost["marks"]]
    assert labels[0] == "failure" and labels[-1] == "rerun past the failed step"


def test_a_step_past_what_the_rerun_could_have_trained_is_not_a_step():
    """Issue 34 item 6: the original trained 20 steps in 100 s; the rerun, resumed at step 16,
    has run 30 s. A number the training's own pattern matches far above what it could have
    reached (a job id printed as `step 4821`) is set aside; a plausible one counts."""
    from datetime import datetime, timedelta

    now = datetime.now()
    original = {
        "started": (now - timedelta(minutes=10)).timestamp(),
        "job": {
            "start": (now - timedelta(minutes=20)).isoformat(),
            "end": (now - timedelta(minutes=20) + timedelta(seconds=100)).isoformat(),
        },
    }
    plan = {**PLAN, "checkpoint": {"step": 16}}
    rerun = SimpleNamespace(
        job_id="78", state="CANCELLED", submit=None, start=now - timedelta(seconds=30), end=now
    )
    tails = ["step 17 loss 1.2", "step 18 loss 1.1", "step 4821 (a record id, not a step)"]
    v = judge(plan, rerun, LaunchReport(), tails, STEP, original=original)
    assert v["last_step"] == 18 and v["state"] == "failed", v
    assert any("set aside" in d for d in v["details"]), v["details"]
    ok = judge(plan, rerun, LaunchReport(), ["step 22 loss 1.0"], STEP, original=original)
    assert ok["last_step"] == 22 and ok["state"] == "passed", ok


def test_a_wedged_original_s_pace_is_taken_until_its_incident_began():
    """A job still RUNNING when runbook read it has slurmctld's end = start + time limit: its
    pace is measured to the incident's start, never over a year."""
    from datetime import datetime, timedelta

    from runbook.verify import plausible_step

    now = datetime.now()
    original = {
        "started": (now - timedelta(minutes=5)).timestamp(),
        "job": {
            "start": (now - timedelta(minutes=5, seconds=100)).isoformat(),
            "end": (now + timedelta(days=365)).isoformat(),
        },
    }
    rerun = SimpleNamespace(start=now - timedelta(seconds=50), end=None)
    bound, _ = plausible_step({"failed_step": 20}, original, rerun)
    assert bound is not None and 60 <= bound <= 120, bound  # 0.2 steps/s x 10 x 50 s + 10
