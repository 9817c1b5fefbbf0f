"""A trigger pushed by Slurm itself: the test cluster's slurmctld runs runbook's shipped
EpilogSlurmctld (runbook/site_config/slurmctld_epilog.sh, edited by cluster.sh as a site edits it:
this host's runbook, its own site file and state, the `trigger` partition only). A real job fails
there (rank 3 raises the OOM and exits, the peers' gloo sockets close, the job ends FAILED), and an
incident exists for it without cron, a pager or a person."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.slurm_helpers import sacct_row, wait_until

pytestmark = pytest.mark.integration


def incidents(site: Path) -> list[dict]:
    r = subprocess.run(
        ["runbook", "--config", str(site), "incidents", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else []


def test_a_job_that_fails_is_handed_to_runbook_by_slurmctld(cluster, scenario):  # noqa: F811
    state = Path(cluster["RUNBOOK_CLUSTER_STATE"])
    site = state / "trigger-site.toml"
    assert site.exists() and os.access(state / "runbook-epilog.sh", os.X_OK)
    s = scenario("trigger", long_step=3, long_factor=4.0, extra_args="--oom-exits")
    job = s.submit("--partition=trigger")
    wait_until(lambda: (r := sacct_row(job)) and r["state"] == "FAILED", 120, f"job {job} to fail")
    found = wait_until(
        lambda: next((i for i in incidents(site) if i.get("job_id") == job), None),
        120,
        f"an incident for job {job} in {site}'s state",
    )
    assert found["source"] == "hook"
    wait_until(
        lambda: next(
            (i for i in incidents(site) if i.get("job_id") == job and i.get("verdict")), None
        ),
        120,
        "the incident's verdict",
    )
    mine = next(i for i in incidents(site) if i.get("job_id") == job)
    assert mine["verdict"] in ("true_oom", "fragmentation"), mine
    # What `runbook hook` printed for it, in the epilog's log.
    log = (state / "log" / "runbook-trigger.log").read_text()
    assert f"job {job}" in log


def test_each_failed_task_of_an_array_is_handed_over_by_its_task_id(cluster):
    """Slurm runs the epilog once per task, with SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID set;
    the task that ends last carries the array's own id as SLURM_JOB_ID, which runbook would read
    as the whole array (and refuse). Each failed task gets its incident, named ARRAY_TASK."""
    import tempfile

    from tests.integration.slurm_helpers import sbatch

    state = Path(cluster["RUNBOOK_CLUSTER_STATE"])
    site = state / "trigger-site.toml"
    work = Path(tempfile.mkdtemp(prefix="trigarr-", dir=cluster["RUNBOOK_CLUSTER_JOBS"]))
    os.chmod(work, 0o755)
    array = sbatch(
        "-p",
        "trigger",
        "--array=0-1",
        f"--chdir={work}",
        "--output=t-%A_%a.out",
        "--wrap",
        "echo 'ValueError: sample 7 has an empty label sequence'; exit 3",
    )
    want = {f"{array}_0", f"{array}_1"}
    wait_until(
        lambda: want <= {i.get("job_id") for i in incidents(site)},
        120,
        f"an incident for each task of array {array}",
    )
    log = (state / "log" / "runbook-trigger.log").read_text()
    assert f"job {array} is a job array" not in log
