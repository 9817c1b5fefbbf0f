"""One contract, two backends: the Slurm commands (CLI) and pyslurm (the release matching the
test cluster's Slurm 22.05, where one is installed; skipped with the reason elsewhere), asked the same things about the same
real jobs on the real slurmctld and slurmdbd, with the same assertions. Then `runbook oom` end
to end with `[slurm] backend = "pyslurm"`, checked in Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from runbook.site import load_site
from runbook.slurm.factory import slurm_client
from tests.integration.slurm_helpers import (
    pyslurm_backend_or_skip,
    sacct_row,
    sbatch,
    sh,
    squeue_state,
    wait_until,
)

pytestmark = pytest.mark.integration

# Fields both backends read the same; `tres` of a finished job is not carried by pyslurm 22.5
# (runbook config show says so), `source` names the backend.
SAME = (
    "job_id", "raw_id", "name", "user", "state", "exit_code", "nodes", "node_expr", "start",
    "end", "submit", "work_dir", "partition", "comment", "num_nodes", "array_job_id",
    "array_task_id",
)  # fmt: skip
LIVE = (*SAME, "stdout", "stderr", "num_tasks", "excluded", "batch_host", "restarts", "resources")


@pytest.fixture
def backends(cluster):
    cli = slurm_client(load_site("devcluster", environ={}))
    return {"cli": cli, "pyslurm": pyslurm_backend_or_skip(cli)}


@pytest.fixture
def workdir(cluster):
    d = Path(tempfile.mkdtemp(prefix="backends-", dir=cluster["RUNBOOK_CLUSTER_JOBS"]))
    os.chmod(d, 0o755)
    return d


def same(a, b, fields) -> dict:
    return {f: (getattr(a, f), getattr(b, f)) for f in fields if getattr(a, f) != getattr(b, f)}


def test_both_backends_read_a_running_job_and_its_node_alike(backends, workdir):
    job = sbatch(
        "-N1",
        "--job-name=two backends = one answer",
        f"--chdir={workdir}",
        "--output=%x-%j.out",
        "--comment=read by both",
        "--time=10",
        "--wrap",
        "sleep 120",
    )
    try:
        wait_until(lambda: squeue_state(job) == "RUNNING", 30, f"job {job} RUNNING")
        cli, ps = backends["cli"].job(job), backends["pyslurm"].job(job)
        assert ps.source == "pyslurm" and cli.source == "scontrol"
        assert same(cli, ps, LIVE) == {}
        assert ps.name == "two backends = one answer" and ps.stdout.endswith(f"-{job}.out")
        assert backends["pyslurm"].batch_script(job) == backends["cli"].batch_script(job)
        node = ps.nodes[0]
        for b in backends.values():
            state, _ = b.node_state(node)
            assert "DRAIN" not in state and state
        known = {n: {j.job_id: j for j in b.known_jobs()} for n, b in backends.items()}
        assert job in known["pyslurm"] and set(known["cli"]) == set(known["pyslurm"])
        assert same(known["cli"][job], known["pyslurm"][job], LIVE) == {}
        from runbook.slurm.client import usable_state

        usable = {
            n: {k: usable_state(v) for k, v in b.partition_nodes(ps.partition).items()}
            for n, b in backends.items()
        }
        assert usable["cli"] == usable["pyslurm"] and node in usable["cli"]
    finally:
        sh("scancel", job, check=False)


def test_both_backends_read_finished_jobs_from_accounting_alike(backends, workdir):
    job = sbatch("-N1", f"--chdir={workdir}", "--output=%j.out", "--wrap", "exit 3")
    wait_until(lambda: (r := sacct_row(job)) and r["state"] == "FAILED", 60, f"job {job} FAILED")
    cli, ps = backends["cli"].job(job), backends["pyslurm"].job(job)
    assert same(cli, ps, SAME) == {}
    assert ps.exit_code == "3:0" and ps.state == "FAILED"
    since = datetime.now() - timedelta(minutes=10)

    # The jobs that ran (a job cancelled while pending is not listed by pyslurm 22.5, which
    # cannot pass slurmdbd the state list: PyslurmBackend.failed_jobs says so).
    # slurmdbd's usage window lists a job a few seconds after sacct's state query does
    # (measured here: under 10 s): the sweep's overlapping windows take both.
    def ran(name: str) -> set[str]:
        return {j.job_id for j in backends[name].failed_jobs(since) if j.nodes}

    wait_until(lambda: job in ran("pyslurm"), 60, f"job {job} in pyslurm's accounting window")
    assert job in ran("cli") and ran("cli") == ran("pyslurm")
    a, b = backends["cli"].submission(job), backends["pyslurm"].submission(job)
    assert (a.line, a.env) == (b.line, b.env) and a.line.startswith("sbatch")


def test_pyslurm_cancels_and_drains_as_slurm_then_shows(backends, workdir):
    ps = backends["pyslurm"]
    job = sbatch("-N1", f"--chdir={workdir}", "--output=%j.out", "--wrap", "sleep 120")
    wait_until(lambda: squeue_state(job) == "RUNNING", 30, f"job {job} RUNNING")
    ps.cancel(job)
    wait_until(lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30, "cancel")
    node = "gpu-03"
    try:
        ps.drain(node, "runbook test: pyslurm drain")
        state, reason = backends["cli"].node_state(node)
        assert "DRAIN" in state and reason.startswith("runbook test: pyslurm drain")
        assert "DRAIN" in ps.node_state(node)[0]
    finally:
        sh("scontrol", "update", f"nodename={node}", "state=resume", check=False)


def test_runbook_oom_end_to_end_on_the_pyslurm_backend(scenario, backends):
    """The happy path once more, the backend chosen the way a site chooses it."""
    from tests.integration.test_oom_scenarios import log_of

    s = scenario("pyslurm", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    env = {**os.environ, "RUNBOOK_SLURM_BACKEND": "pyslurm", "PYTHONUNBUFFERED": "1"}
    r = subprocess.run(
        ["runbook", "--site", "devcluster", "oom", "--job", job, "--yes", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["verdict"] == "fragmentation", r.stderr
    cancel = next(a for a in out["actions"] if a["kind"] == "cancel")
    assert cancel["argv"] == ["pyslurm", "Job.cancel", job]
    assert sacct_row(job)["state"].startswith("CANCELLED")
    new = out["new_job_id"]
    assert new
    wait_until(lambda: sacct_row(new) is not None, 30, f"the rerun {new} in accounting")
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["job"]["source"] == "pyslurm"
    # The lineage lookup that keeps a second resubmission from happening, on both backends.
    since = datetime.now() - timedelta(minutes=10)
    found = {
        n: {j for j, _, _ in b.find_lineage(job, "expandable_segments", since)}
        for n, b in backends.items()
    }
    assert found["cli"] == found["pyslurm"] == {new}
    scripts = {n: b.batch_scripts([job]) for n, b in backends.items()}
    assert scripts["cli"] == scripts["pyslurm"] and scripts["cli"][job]
    s.wait_done(new)
    assert "expandable_segments" in log_of(s.workdir, new)
