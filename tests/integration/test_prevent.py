"""Before the OOM on the real cluster, under the launchers jobs use: a 2-node x 2-rank training
job whose rank 1 thrashes (its allocator's retries rising every step at 78000 of 81559 MiB, no
OOM yet), every rank declaring that it checkpoints on request (RUNBOOK_CHECKPOINT_ON_REQUEST=1)
and its owner opted in (RUNBOOK_PREVENT=1). Under torchrun (one agent per node, the ranks its
children) and under srun with a shell between it and each rank, runbook asks through the file
the ranks poll (never a signal: torchrun's agent dies of SIGUSR1), every rank saves one step, the
rerun is in Slurm held before the job is cancelled, and the rerun resumes at that step + 1 and
trains to the end. A job with one rank undeclared, one not opted in, and one whose rerun cannot
be submitted are left training. Every figure is checked in Slurm, in the jobs' own logs and in
the processes on the nodes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.integration.test_oom_scenarios import Scenario, log_of
from tests.integration.test_sweep import own_partition, site_file, sweep  # noqa: F401 (fixture)

pytestmark = pytest.mark.integration
DECLARE = "--export=ALL,RUNBOOK_CHECKPOINT_ON_REQUEST=1"


def _thrashing(
    cluster, name: str, launcher: str, extra: str = "", steps: int = 40, **overrides
) -> Scenario:
    """Rank 1's allocator retries rising every step at 78000 of 81559 MiB, no OOM yet."""
    return Scenario(
        cluster,
        name,
        param_mib=30000,
        act_mib_per_sample=3000,
        steps=steps,
        long_step=1,
        long_factor=1.0,
        ckpt_every=100000,
        launcher=launcher,
        extra_args="--long-rank 1 --mem-lines --retries-per-step 5 --thrash-rank 1 "
        f"--step-seconds 0.5 {extra}".strip(),
        **overrides,
    )


def _wait_lines(s: Scenario, job: str, lines: int) -> None:
    wait_until(
        lambda: log_of(s.workdir, job).count("RUNBOOK_INSTRUMENT mem") >= lines,
        120,
        "the job's memory lines",
    )


def _steps(log: str) -> list[int]:
    """The steps rank 0 printed as done ("step N/M"), in order: the job's own word."""
    return [int(m) for m in re.findall(r"(?m)^\d+: step (\d+)/\d+", log)]


def _sacct_steps(job: str) -> list[tuple[str, str, str]]:
    """(step id, state, exit code) of every step of `job`, from accounting."""
    out = sh("sacct", "-n", "-P", "-j", job, "-o", "JobID,State,ExitCode")
    return [tuple(ln.split("|")[:3]) for ln in out.splitlines() if ln.strip()]  # type: ignore[misc]


def _processes_of(job: str) -> list[int]:
    """PIDs on this host (every node's processes share its PID namespace) whose environment
    names `job`: what outlives a cancel."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if f"SLURM_JOB_ID={job}".encode() in env:
            found.append(int(pid))
    return found


def _prevent(site: str, job: str, *extra: str) -> dict:
    r = subprocess.run(
        ["runbook", "--site", site, "prevent", job, "--json", *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        got = {"exit": r.returncode, **json.loads(r.stdout)}
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON (exit {r.returncode}):\n{r.stdout}\n{r.stderr}") from None
    # What a failed assertion shows: the incident's own timeline, step by step.
    md = Path(got.get("folder") or "-") / "report.md"
    got["timeline"] = md.read_text().split("## Evidence")[0] if md.exists() else ""
    return got


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize("launcher", ["torchrun", "bash"])
def test_a_thrashing_job_is_asked_through_its_file_saves_one_step_and_is_replaced_held_first(
    cluster,
    tmp_path,
    own_partition,  # noqa: F811 (the fixture)
    launcher,
):
    s = _thrashing(cluster, f"prevent-{launcher}", launcher)
    job = s.submit(f"--partition={own_partition}", f"{DECLARE},RUNBOOK_PREVENT=1")
    try:
        _wait_lines(s, job, 24)
        site = site_file(tmp_path, ["fragmentation", "true_oom"], [own_partition])
        if launcher == "torchrun":
            # A person's dry run first: the plan, and nothing written, cancelled or submitted.
            dry = _prevent(site, job, "--dry-run")
            assert dry["exit"] == 0 and dry["verdict"] == "thrashing", dry
            assert {a["status"] for a in dry["actions"]} == {"dry_run"}, dry["actions"]
            kinds = [a["kind"] for a in dry["actions"] if a["kind"] != "write_file"]
            assert kinds == ["request", "submit", "cancel"], kinds
            assert squeue_state(job) == "RUNNING"
            assert not (s.workdir / f".runbook-checkpoint-{job}").exists()
            code, out = sweep(site)
            (line,) = [ln for ln in out["jobs"] if ln["job_id"] == job]
            assert line["verdict"] == "thrashing" and line["incident"], (line, out)
            assert "resubmitted as" in line["action"], line
            new = line["action"].split("resubmitted as ")[1].split()[0]
            incident = line["incident"]
        else:
            got = _prevent(site, job, "--yes")
            assert got["exit"] == 0 and got["new_job_id"], got["timeline"]
            new, incident = got["new_job_id"], got["incident"]
        wait_until(
            lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30, "the cancel"
        )
        # No process of the job outlives its cancel (torchrun's agents and their ranks, the
        # wrapping shells): KillWait is 5 s here.
        wait_until(lambda: not _processes_of(job), 30, f"job {job}'s processes to end")
        original = log_of(s.workdir, job)
        # Every rank's own answer: one step, saved by all four, none past it.
        written = re.findall(r"RUNBOOK_INSTRUMENT checkpoint rank=(\d) step=(\d+) id=\S+", original)
        assert sorted(int(r) for r, _ in written) == [0, 1, 2, 3], original[-3000:]
        (step,) = {int(x) for _, x in written}
        assert _steps(original)[-1] == step, _steps(original)
        assert "checkpoint-missed" not in original
        # Slurm: no step of the job ended of a signal it did not handle (0:10 is SIGUSR1), and
        # the rerun was in Slurm before the job was cancelled.
        assert not [r for r in _sacct_steps(job) if r[2].endswith(":10")], _sacct_steps(job)
        sub, end = (
            wait_until(
                lambda j=j, f=f: (
                    (v := sh("sacct", "-n", "-X", "-P", "-j", j, "-o", f).strip())
                    not in ("", "Unknown")
                    and v
                ),
                30,
                f"accounting's {f} of job {j}",
            )
            for j, f in ((new, "Submit"), (job, "End"))
        )
        assert _when(sub) <= _when(end), (sub, end)
        log = s.wait_done(new)
        assert f"at step {step}" in log and "resumed from" in log, log[:2000]
        assert _steps(log)[0] == step + 1 and _steps(log)[-1] == 40, _steps(log)
        assert "micro-batch 4 x grad-accum 4" in log, log[:2000]  # 8 x 2 before: 16 kept
        assert "OutOfMemoryError" not in log
        report = json.loads(
            (tmp_path / "state" / "incidents" / incident / "report.json").read_text()
        )
        assert report["evidence"]["prevention"]["steps_lost"] == 0, report["evidence"]
        assert report["evidence"]["requested_checkpoint"]["ranks_written"] == [0, 1, 2, 3]
        kinds = [a["kind"] for a in report["actions"]]
        assert kinds.index("submit") < kinds.index("cancel") < kinds.index("release"), kinds
    finally:
        sh("scancel", job, check=False)
        s.close()


def test_a_rank_that_never_declared_or_a_rerun_that_cannot_be_submitted_leaves_the_job_training(
    cluster,
    tmp_path,
    own_partition,  # noqa: F811 (the fixture)
):
    """Two jobs at once under torchrun: rank 3 of the first never declares (counted against
    the world of 4 torchrun and Slurm give, not against the ranks the log shows); the second
    declares on every rank, but its partition takes no new job when its rerun is submitted."""
    quiet = _thrashing(cluster, "prevent-undeclared", "torchrun", "--undeclared-rank 3")
    full = _thrashing(cluster, "prevent-nosubmit", "torchrun", steps=60)
    a = quiet.submit(f"--partition={own_partition}", f"{DECLARE},RUNBOOK_PREVENT=1")
    b = full.submit(f"--partition={own_partition}", f"{DECLARE},RUNBOOK_PREVENT=1")
    try:
        _wait_lines(quiet, a, 24)
        _wait_lines(full, b, 24)
        site = site_file(tmp_path, ["fragmentation", "true_oom"], [own_partition])
        got = _prevent(site, a, "--yes")
        assert got["verdict"] == "thrashing" and not got["new_job_id"], got
        assert not [x for x in got["actions"] if x["status"] != "skipped"], got["actions"]
        text = json.dumps(got)
        assert "rank 3 of the job's 4 did not declare" in text, text[:3000]
        assert squeue_state(a) == "RUNNING"
        assert not (quiet.workdir / f".runbook-checkpoint-{a}").exists()
        # The partition takes no new job: sbatch fails as the owner, after the checkpoint.
        sh("scontrol", "update", f"PartitionName={own_partition}", "State=DRAIN")
        try:
            got = _prevent(site, b, "--yes")
        finally:
            sh("scontrol", "update", f"PartitionName={own_partition}", "State=UP")
        assert not got["new_job_id"], got["timeline"]
        statuses = {x["kind"]: x["status"] for x in got["actions"]}
        assert statuses["submit"] == "failed" and "cancel" not in statuses, got["timeline"]
        assert statuses["request"] == "applied", got["timeline"]
        assert squeue_state(b) == "RUNNING"
        # The request was withdrawn: the ranks that saved go on training past their step.
        log = log_of(full.workdir, b)
        saved = re.findall(r"RUNBOOK_INSTRUMENT checkpoint rank=0 step=(\d+) id=", log)
        assert len(saved) == 1, (got["timeline"], log[-3000:])
        wait_until(
            lambda: _steps(log_of(full.workdir, b))[-1] > int(saved[0]) + 2, 60, "training on"
        )
        assert "why=withdrawn" in log_of(full.workdir, b)
    finally:
        sh("scancel", a, b, check=False)
        quiet.close()
        full.close()


def test_a_thrashing_job_that_did_not_opt_in_is_reported_only(
    cluster,
    tmp_path,
    own_partition,  # noqa: F811 (the fixture)
):
    s = _thrashing(cluster, "noprevent", "srun")
    job = s.submit(f"--partition={own_partition}", DECLARE)
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
