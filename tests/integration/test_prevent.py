"""Before the OOM (issue 56) on the real cluster: a 2-node x 2-rank training job whose rank 1
thrashes (its allocator's retries rising every step at 78000 of 81559 MiB, no OOM yet). With a
checkpoint handler on every rank (RUNBOOK_CHECKPOINT_SIGNAL=USR1) and its owner's opt-in
(RUNBOOK_PREVENT=1), `runbook sweep` asks it to checkpoint (a real SIGUSR1 through scancel),
reads the checkpoint back, cancels it and resubmits it fitted from that step; the rerun resumes
at the checkpoint's step + 1 and trains to the end. Without the opt-in it is reported only.
Every figure is checked in Slurm and in the jobs' own logs."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.integration.test_oom_scenarios import Scenario, log_of
from tests.integration.test_sweep import own_partition, site_file, sweep  # noqa: F401 (fixture)

pytestmark = pytest.mark.integration


def _thrashing(cluster, name: str) -> Scenario:
    return Scenario(
        cluster,
        name,
        param_mib=30000,
        act_mib_per_sample=3000,
        steps=40,
        long_step=1,
        long_factor=1.0,
        ckpt_every=100000,
        extra_args="--long-rank 1 --mem-lines --retries-per-step 5 --thrash-rank 1 "
        "--step-seconds 0.5",
    )


def _wait_lines(s: Scenario, job: str, lines: int) -> None:
    wait_until(
        lambda: log_of(s.workdir, job).count("RUNBOOK_INSTRUMENT mem") >= lines,
        120,
        "the job's memory lines",
    )


def _steps(log: str) -> list[int]:
    """The steps rank 0 printed as done ("step N/M"), in order: the job's own word."""
    return [int(m) for m in re.findall(r"(?m)^0: step (\d+)/\d+", log)]


def test_a_thrashing_job_that_handles_the_request_is_rerun_fitted_and_loses_no_step(
    cluster,
    tmp_path,
    own_partition,  # noqa: F811 (the fixture)
):
    s = _thrashing(cluster, "prevent")
    job = s.submit(
        f"--partition={own_partition}",
        "--export=ALL,RUNBOOK_CHECKPOINT_SIGNAL=USR1,RUNBOOK_PREVENT=1",
    )
    try:
        _wait_lines(s, job, 16)
        site = site_file(tmp_path, ["fragmentation", "true_oom"], [own_partition])
        # A person's dry run first: the plan, and nothing sent, cancelled or submitted.
        r = subprocess.run(
            ["runbook", "--site", site, "prevent", job, "--dry-run", "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        dry = json.loads(r.stdout)
        assert r.returncode == 0 and dry["verdict"] == "thrashing", (r.stdout, r.stderr)
        assert {a["kind"]: a["status"] for a in dry["actions"]} == {
            "signal": "dry_run",
            "cancel": "dry_run",
            "write_file": "dry_run",
            "submit": "dry_run",
        }, dry["actions"]
        assert squeue_state(job) == "RUNNING"
        assert "RUNBOOK_INSTRUMENT checkpoint rank" not in log_of(s.workdir, job)
        code, out = sweep(site)
        (line,) = [ln for ln in out["jobs"] if ln["job_id"] == job]
        assert line["verdict"] == "thrashing" and line["incident"], (line, out)
        assert "resubmitted as" in line["action"], line
        new = line["action"].split("resubmitted as ")[1].split()[0]
        # Slurm: the original cancelled (by its owner's scancel), the rerun is the owner's.
        wait_until(
            lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30, "the cancel"
        )
        original = log_of(s.workdir, job)
        # The job's own answer: the checkpoint it wrote when asked, and no step after it.
        asked = re.findall(r"RUNBOOK_INSTRUMENT checkpoint rank=0 step=(\d+) path=(\S+)", original)
        assert len(asked) == 1, original[-3000:]
        step = int(asked[0][0])
        assert _steps(original)[-1] == step, _steps(original)
        log = s.wait_done(new)
        assert f"resumed from {s.workdir}/{asked[0][1]} at step {step}" in log or (
            f"at step {step}" in log and "resumed from" in log
        ), log[:2000]
        assert _steps(log)[0] == step + 1 and _steps(log)[-1] == 40, _steps(log)
        assert "micro-batch 4 x grad-accum 4" in log, log[:2000]  # 8 x 2 before: 16 kept
        assert "OutOfMemoryError" not in log
        r = subprocess.run(
            [
                "runbook",
                "--site",
                site_file(tmp_path, [], [own_partition]),
                "verify",
                "--incident",
                line["incident"],
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        v = json.loads(r.stdout)
        assert r.returncode == 0 and v["state"] == "passed", v
        report = json.loads(
            (tmp_path / "state" / "incidents" / line["incident"] / "report.json").read_text()
        )
        assert report["evidence"]["prevention"]["steps_lost"] == 0, report["evidence"]
        assert report["evidence"]["prevention"]["checkpoint_step"] == step
    finally:
        sh("scancel", job, check=False)
        s.close()


def test_a_thrashing_job_that_did_not_opt_in_is_reported_only(
    cluster,
    tmp_path,
    own_partition,  # noqa: F811 (the fixture)
):
    s = _thrashing(cluster, "noprevent")
    job = s.submit(f"--partition={own_partition}", "--export=ALL,RUNBOOK_CHECKPOINT_SIGNAL=USR1")
    try:
        _wait_lines(s, job, 16)
        code, out = sweep(site_file(tmp_path, ["fragmentation", "true_oom"], [own_partition]))
        (line,) = [ln for ln in out["jobs"] if ln["job_id"] == job]
        assert line["verdict"] == "thrashing" and not line["incident"], line
        assert "nothing changed" in line["action"], line
        assert squeue_state(job) == "RUNNING"
        assert "RUNBOOK_INSTRUMENT checkpoint rank" not in log_of(s.workdir, job)
    finally:
        sh("scancel", job, check=False)
        s.close()
