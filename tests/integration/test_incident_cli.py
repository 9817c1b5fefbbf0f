"""The incident commands on the real cluster: a run that stops still leaves its report; the
incident list and the re-rendered report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def runbook(*args):
    r = subprocess.run(
        ["runbook", "--site", "devcluster", *args], capture_output=True, text=True, timeout=120
    )
    return r.returncode, r.stdout, r.stderr


def test_unknown_job_stops_at_the_first_step_with_a_report(cluster):
    code, out, err = runbook("oom", "--job", "999999", "--yes", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["exit_code"] == 1
    md = (Path(doc["folder"]) / "report.md").read_text()
    assert "stopped at step **job**" in md and "999999" in md
    assert "unknown to slurmctld and to accounting" in md
    code, out, _ = runbook("incidents", "--json")
    rows = json.loads(out)
    assert any(r["id"] == doc["incident"] and r["status"] == "stopped" for r in rows)


def test_report_rerenders_and_bad_ids_are_clear(cluster):
    # An incident of its own (a job Slurm does not know stops at the first step, with a report),
    # not one an earlier test happened to leave.
    code, out, _ = runbook("oom", "--job", "999998", "--yes", "--json")
    incident = json.loads(out)["incident"]
    code, out, _ = runbook("report", incident, "--format", "json")
    assert code == 0 and json.loads(out)["id"] == incident
    code, out, _ = runbook("report", incident, "--format", "html")
    assert code == 0 and out.startswith("<!doctype html>")
    code, _, err = runbook("report", "no-such-incident")
    assert code == 2 and "no incident 'no-such-incident'" in err


def test_bad_job_id_is_a_usage_error(cluster):
    code, _, err = runbook("oom", "--job", "12; rm -rf /")
    assert code == 3 and "is not a Slurm job id" in err
