"""`runbook hook serve` over real HTTP on loopback: signatures, bad requests, a real wedged job
handled in the background, duplicate deliveries; the hook and the sweep firing on one job at the
same moment yield one incident, one scancel and one resubmit."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from runbook import state
from runbook.site import load_site
from tests.integration.slurm_helpers import sh, wait_until
from tests.integration.test_oom_scenarios import Scenario, log_of

pytestmark = pytest.mark.integration
SECRET = "hook-test-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def hook(cluster):
    """The hook on the cluster's bridge address: the tests post to it from this host, and the
    jobs' runbook.instrument from inside the nodes' network namespaces."""
    port = free_port()
    addr = cluster["RUNBOOK_CLUSTER_HOST_ADDR"]
    env = {
        **os.environ,
        "RUNBOOK_HOOK_SECRET": SECRET,
        "RUNBOOK_HOOK_TOKEN": "tok-123",
        "RUNBOOK_HOOK_MAX_BODY_BYTES": "65536",
    }
    proc = subprocess.Popen(
        ["runbook", "--site", "devcluster", "hook", "serve", "--bind", addr, "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://{addr}:{port}/"

    def up():
        try:
            urllib.request.urlopen(url, timeout=1)
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False
        return True

    wait_until(up, 20, "runbook hook serve to listen")
    yield url
    proc.terminate()
    proc.wait(30)


def post(url, body: bytes, headers: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, headers=headers or {}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def signed(body: bytes) -> dict:
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"X-PagerDuty-Signature": f"v1=deadbeef,v1={sig}", "Content-Type": "application/json"}


def test_bad_requests_get_4xx_with_a_reason(hook):
    body = b'{"job_id": "999999"}'
    assert post(hook, body)[0] == 401
    code, doc = post(hook, body, {"X-PagerDuty-Signature": "v1=" + "0" * 64})
    assert code == 403 and "matches" in doc["error"]
    assert post(hook, body, {"Authorization": "Bearer wrong"})[0] == 403
    assert post(hook, b"{not json", signed(b"{not json"))[0] == 400
    # Bodies of the wrong shape: a 400 that names the field, never a 500 with an exception.
    for bad in (
        b'{"alerts": ["x"]}',
        b'{"alerts": [{"labels": ["a"]}]}',
        b'{"event": {"event_type": "incident.triggered", "data": [1]}}',
        b"[" * 20_000 + b"]" * 20_000,
        b'{"job_id": ' + b"9" * 5000 + b"}",
        b'{"job_id": "' + b"9" * 5000 + b'"}',  # issue 34: was "File name too long"
    ):
        code, doc = post(hook, bad, signed(bad))
        assert code == 400 and doc["error"].startswith("webhook body"), (bad[:40], code, doc)
    big = b'{"job_id": "1", "pad": "' + b"x" * 70000 + b'"}'
    code, doc = post(hook, big, signed(big))
    assert code == 413 and "limit" in doc["error"]
    # A job Slurm does not know: queued at once (the request thread never waits on Slurm), then
    # rejected by the worker once Slurm says so; never retried.
    # No incident of an earlier run has this one; 9 digits, inside Slurm's 32-bit ids.
    unknown = f"4{time.time_ns() % 10**8:08d}"
    body = json.dumps({"job_id": unknown}).encode()
    code, doc = post(hook, body, signed(body))
    got = doc["accepted"][0]
    assert code == 202 and got["incident"].endswith(f"-{unknown}")  # a new incident of that job
    assert {k: got[k] for k in ("job_id", "duplicate", "already_handled")} == {
        "job_id": unknown,
        "duplicate": False,
        "already_handled": False,
    }
    site = load_site("devcluster", environ={})
    wait_until(
        lambda: (
            state.site_db(site)
            .execute("SELECT status FROM deliveries WHERE job_id = ?", (unknown,))
            .fetchone()[0]
            == "rejected"
        ),
        60,
        "the unknown job's delivery to be rejected",
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(hook, timeout=5)
    assert e.value.code == 405


def test_resolved_alert_is_nothing_to_do(hook):
    body = json.dumps(
        {
            "version": "4",
            "status": "resolved",
            "alerts": [
                {"status": "resolved", "labels": {"alertname": "SlurmJobOOM", "slurm_job_id": "5"}}
            ],
        }
    ).encode()
    code, doc = post(hook, body, {"Authorization": "Bearer tok-123"})
    assert code == 200 and doc["status"] == "nothing to do"


def _wedged(cluster, name: str) -> tuple[str, Scenario]:
    s = Scenario(cluster, name, frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    return job, s


def _ledger(job: str) -> list[tuple]:
    site = load_site("devcluster", environ={})
    conn = state.open_db(site.path(site.state.dir) / "runbook.db")
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT kind, status FROM ledger WHERE key IN (?, ?) ORDER BY seq",
            (f"cancel:{job}", f"submit:{job}:expandable_segments"),
        )
    ]


def _incident_of(job: str) -> dict | None:
    out = subprocess.run(
        ["runbook", "--site", "devcluster", "incidents", "--json"], capture_output=True, text=True
    ).stdout
    return next((r for r in json.loads(out) if r["job_id"] == job), None)


def test_wedged_job_handled_in_the_background_and_duplicates_answered_alike(hook, cluster):
    job, s = _wedged(cluster, "hookjob")
    try:
        body = json.dumps({"job_id": job}).encode()
        t = time.monotonic()
        code, doc = post(hook, body, signed(body))
        assert code == 202 and time.monotonic() - t < 5  # at once; the work goes on behind
        incident = doc["accepted"][0]["incident"]
        code2, doc2 = post(hook, body, signed(body))
        assert code2 == 202 and doc2["accepted"][0]["incident"] == incident
        assert doc2["accepted"][0]["duplicate"] is True
        row = wait_until(
            lambda: (r := _incident_of(job)) and r["status"] != "running" and r,
            120,
            "the hook's incident to finish",
        )
        assert row["id"] == incident and row["verdict"] == "fragmentation"
        assert _ledger(job) == [("cancel", "applied"), ("submit", "applied")]
        s.wait_done(row["new_job_id"])
    finally:
        s.close()


def test_hook_and_sweep_at_the_same_moment_one_incident_one_scancel_one_resubmit(hook, cluster):
    job, s = _wedged(cluster, "racejob")
    try:
        body = json.dumps({"job_id": job}).encode()
        sweep = subprocess.Popen(
            ["runbook", "--site", "devcluster", "sweep", "--since", "1h", "--json"],
            stdout=subprocess.PIPE,
            text=True,
        )
        code, doc = post(hook, body, signed(body))
        sweep_out = json.loads(sweep.communicate(timeout=300)[0])
        assert code == 202
        wait_until(lambda: (r := _incident_of(job)) and r["status"] != "running", 120, "incident")
        incidents = [
            r
            for r in json.loads(
                subprocess.run(
                    ["runbook", "--site", "devcluster", "incidents", "--json"],
                    capture_output=True,
                    text=True,
                ).stdout
            )
            if r["job_id"] == job
        ]
        assert len(incidents) == 1, incidents
        assert _ledger(job) == [("cancel", "applied"), ("submit", "applied")]
        children = [
            ln
            for ln in sh("sacct", "-X", "-n", "-P", "-a", "-o", "JobID,Comment").splitlines()
            if f"parent={job}," in ln
        ]
        squeued = [
            ln
            for ln in sh("squeue", "-h", "-t", "all", "-o", "%i|%k").splitlines()
            if f"parent={job}," in ln
        ]
        assert len({ln.split("|")[0] for ln in children + squeued}) == 1
        lines = [ln for ln in sweep_out["jobs"] if ln["job_id"] == job]
        assert len(lines) <= 1  # the sweep either saw it handled, or handled it itself
        s.wait_done(incidents[0]["new_job_id"])
        assert "training finished" in log_of(s.workdir, incidents[0]["new_job_id"])
    finally:
        s.close()


def _token_file(s: Scenario) -> None:
    """The hook's token in a file the job's script reads (never on sbatch's line)."""
    token = s.workdir / "hook-token"
    token.write_text("tok-123\n")
    token.chmod(0o644)


def _push_line(s: Scenario, job: str) -> str:
    """runbook.instrument's push line in the job's log, once a rank printed it."""
    return wait_until(
        lambda: next(
            (ln for ln in log_of(s.workdir, job).splitlines() if "RUNBOOK_INSTRUMENT push" in ln),
            None,
        ),
        120,
        f"a push line in job {job}'s log",
    )


def test_a_rank_that_runs_out_tells_the_hook_itself_and_the_job_is_handled(hook, cluster):
    """Issue 30: nobody posts. The OOM goes uncaught in rank 3 of the modelled job;
    runbook.instrument's excepthook writes the dump, lets the traceback print, then POSTs the
    job id to the hook from inside the node (token from a file the script names). The hook
    opens the incident that the rank's own marker line names, and handles it like a page."""
    s = Scenario(
        cluster,
        "pushjob",
        frag_mib_per_step=6000,
        long_step=1,
        hook_url=hook,
        hook_token_file="hook-token",
        extra_args="--oom-raises",
    )
    _token_file(s)
    try:
        job = s.submit()
        pushed = _push_line(s, job)
        assert " job=" + job + " " in pushed and "status=202 incident=" in pushed, pushed
        assert "tok-123" not in pushed
        incident = pushed.split("incident=")[1].split()[0]
        row = wait_until(
            lambda: (r := _incident_of(job)) and r["status"] != "running" and r,
            120,
            "the pushed incident to finish",
        )
        assert row["id"] == incident and row["verdict"] == "fragmentation", row
        log = log_of(s.workdir, job)
        assert log.index("torch.OutOfMemoryError") < log.index("RUNBOOK_INSTRUMENT push")
        assert _ledger(job)[-1] == ("submit", "applied")
        assert "training finished" in s.wait_done(row["new_job_id"])
    finally:
        s.close()


def test_a_thrashing_rank_tells_the_hook_and_the_job_is_replaced_before_it_runs_out(hook, cluster):
    """Nobody posts and nothing has failed: rank 1 of a torchrun job thrashes (its allocator's
    retries rising over three memory lines), and runbook.instrument tells the hook itself. The
    hook reads the job's series as the sweep does and hands it to the prevention runbook under
    [policy] unattended_prevent ("opted_in": the owner set RUNBOOK_PREVENT=1), never as a
    person: one step saved on every rank, the rerun held before the cancel, trained to the end."""
    from tests.integration.test_prevent import _thrashing

    s = _thrashing(cluster, "pushthrash", "torchrun", hook_url=hook, hook_token_file="hook-token")
    _token_file(s)
    try:
        job = s.submit("--export=ALL,RUNBOOK_CHECKPOINT_ON_REQUEST=1,RUNBOOK_PREVENT=1")
        pushed = _push_line(s, job)
        assert "reason=thrashing" in pushed and "status=202 incident=" in pushed, pushed
        row = wait_until(
            lambda: (r := _incident_of(job)) and r["status"] != "running" and r,
            180,
            "the pushed incident to finish",
        )
        assert row["verdict"] == "thrashing" and row["new_job_id"], row
        site = load_site("devcluster", environ={})
        done = [
            kind
            for kind, status in state.open_db(site.path(site.state.dir) / "runbook.db").execute(
                "SELECT kind, status FROM ledger WHERE incident = ? ORDER BY seq", (row["id"],)
            )
            if status == "applied" and kind != "write_file"
        ]
        assert done == ["request", "request", "submit", "cancel", "release"], done
        log = log_of(s.workdir, job)
        assert "OutOfMemoryError" not in log
        step = int(re.findall(r"checkpoint rank=0 step=(\d+) id=", log)[0])
        rerun = s.wait_done(row["new_job_id"])
        assert f"at step {step}" in rerun and "training finished at step 40" in rerun
    finally:
        sh("scancel", job, check=False)
        s.close()
