"""The incident commands on the real cluster: a run that stops still leaves its report; the
incident list and the re-rendered report."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.integration


def runbook(*args):
    r = subprocess.run(
        ["runbook", "--site", "devcluster", *args], capture_output=True, text=True, timeout=120
    )
    return r.returncode, r.stdout, r.stderr


def test_a_job_slurm_does_not_know_is_an_input_error_in_json_too(cluster):
    """A mistyped id is the caller's to fix: exit 3, the error as JSON where JSON was asked,
    and no incident opened for it."""
    _, out, _ = runbook("incidents", "--json")
    before = [r["id"] for r in json.loads(out) if r["job_id"] == "999997"]
    code, out, err = runbook("oom", "--job", "999997", "--yes", "--json")
    doc = json.loads(out)
    assert code == 3 and doc["exit_code"] == 3, (out, err)
    assert "unknown to slurmctld and to accounting" in doc["error"] and doc["hint"]
    _, out, _ = runbook("incidents", "--json")
    assert [r["id"] for r in json.loads(out) if r["job_id"] == "999997"] == before


def test_report_rerenders_and_bad_ids_are_clear(cluster):
    # An incident of its own (a job that ended well: nothing to do, with a report), not one an
    # earlier test happened to leave.
    from tests.integration.slurm_helpers import sbatch, squeue_state, wait_until

    job = sbatch("-p", "debug", "--chdir=/tmp", "--output=/dev/null", "--wrap", "true")
    wait_until(lambda: squeue_state(job) in ("", "COMPLETED"), 60, f"job {job} to end")
    code, out, _ = runbook("oom", "--job", job, "--yes", "--json")
    incident = json.loads(out)["incident"]
    assert incident, out
    code, out, _ = runbook("report", incident, "--format", "json")
    assert code == 0 and json.loads(out)["id"] == incident
    code, out, _ = runbook("report", incident, "--format", "html")
    assert code == 0 and out.startswith("<!doctype html>")
    code, _, err = runbook("report", "no-such-incident")
    assert code == 2 and "no incident 'no-such-incident'" in err


def test_bad_job_id_is_a_usage_error(cluster):
    code, _, err = runbook("oom", "--job", "12; rm -rf /")
    assert code == 3 and "is not a Slurm job id" in err
