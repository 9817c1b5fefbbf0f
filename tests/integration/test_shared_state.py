"""Issue 19: several agent hosts share one PostgreSQL (the test cluster's, 198.18.0.1:5433).

Two `runbook hook serve` processes, each in a network namespace and with a hostname of its own
(two hosts as far as runbook can tell), and a sweep, all on one state database: the same
failed job delivered to both gives one incident, one scancel, one new job; `kill -9` of the host
holding the job's lock mid-incident, and the other takes the incident over after the lease and
finishes it without repeating the scancel. And when PostgreSQL cannot be reached, the hook answers
503 and the sweep exits non-zero naming the database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from runbook import store
from tests.conftest import corpus_records
from tests.integration.slurm_helpers import in_sweep_window, sacct_row, sh, wait_until
from tests.integration.test_hook_http import post
from tests.integration.test_hook_service import wait_listening
from tests.integration.test_oom_scenarios import Scenario

pytestmark = pytest.mark.integration
TOKEN = "shared-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
LEASE_S = 3
PORT = 8481


def runbook_env(cluster, state_dir: Path, url: str | None = None) -> dict:
    return {
        **os.environ,
        "RUNBOOK_STATE_URL": url or cluster["RUNBOOK_CLUSTER_PG_URL"],
        "RUNBOOK_STATE_DIR": str(state_dir),  # each host's own incident folders
        "RUNBOOK_STATE_LEASE_S": str(LEASE_S),
        "RUNBOOK_HOOK_TOKEN": TOKEN,
        "PYTHONUNBUFFERED": "1",
    }


def agent(cluster, node: str, host: str, state_dir: Path) -> tuple[subprocess.Popen, str]:
    """`runbook hook serve` on `node`'s network namespace, under hostname `host`."""
    addr = {"gpu-01": "198.18.0.11", "gpu-02": "198.18.0.12", "gpu-03": "198.18.0.13"}[node]
    proc = subprocess.Popen(
        [
            "nsenter",
            f"--net=/run/netns/rb-{node}",
            "unshare",
            "--uts",
            "sh",
            "-c",
            'hostname "$0" && exec "$@"',
            host,
            "runbook",
            "--site",
            "devcluster",
            "hook",
            "serve",
            "--bind",
            addr,
            "--port",
            str(PORT),
        ],
        env=runbook_env(cluster, state_dir),
        stdout=subprocess.DEVNULL,
        stderr=open(state_dir / "serve.log", "w"),  # noqa: SIM115 (the process keeps it)
        start_new_session=True,
    )
    url = f"http://{addr}:{PORT}"
    wait_listening(url, proc, (state_dir / "serve.log").read_text)
    return proc, url


def pg(cluster):
    return store.connect(cluster["RUNBOOK_CLUSTER_PG_URL"])


def slow_health_on(state_dir: Path, node: str, probes, delay_s: float):
    """gpu-02 healthy (recorded outputs), its kernel log slow to answer: the incident spends
    seconds in node health, after its scancel, where the test kills the host running it."""
    from tests.cluster.scenario import node_health

    apps = next(
        r["text"]
        for r in corpus_records("ops/nvidia_smi_apps.jsonl")
        if r["id"] == "apps-gpud-550-h100x8-no-processes"
    )
    ecc = (Path(__file__).resolve().parents[1] / "data" / "nvidia-smi").joinpath(
        "gpud-535.161.08-h100x8-first2.q.txt"
    )
    sc = node_health(
        state_dir,
        node,
        probes,
        kernel="",
        ecc=ecc.read_text(),
        apps=apps,
        source="test scenario: healthy, slow kernel log",
        delay_s=delay_s,
    )
    sc.write()
    return sc


def test_two_hook_hosts_and_a_sweep_share_one_postgres_and_survive_kill_9(cluster):
    code = subprocess.run(
        ["runbook", "--site", "devcluster", "state", "migrate", "--json"],
        env=runbook_env(cluster, Path(tempfile.mkdtemp())),
        capture_output=True,
        text=True,
    )
    assert code.returncode == 0, code.stderr
    assert json.loads(code.stdout)["after"] == store.SCHEMA_VERSION
    # In a partition of its own: the sweep below must see this job only, not the failed jobs
    # other tests left in the window (it would act on those).
    s = Scenario(cluster, "twohosts", frag_mib_per_step=6000, long_step=1)
    submitted = time.monotonic()
    job = s.submit("--partition=shared")
    s.wait_failure(job, "Tried to allocate")
    scenario = slow_health_on(s.state_dir, "gpu-02", s.site.probes, delay_s=15)
    dirs = {h: Path(tempfile.mkdtemp(prefix=f"{h}-")) for h in ("agent-a", "agent-b")}
    procs = {}
    try:
        procs["agent-a"] = agent(cluster, "gpu-01", "agent-a", dirs["agent-a"])
        procs["agent-b"] = agent(cluster, "gpu-03", "agent-b", dirs["agent-b"])
        body = json.dumps({"job_id": job}).encode()
        answers = [post(url, body, AUTH) for _, url in procs.values() for _ in range(2)]
        assert {c for c, _ in answers} == {202}, answers
        incident = {d["accepted"][0]["incident"] for _, d in answers}
        assert len(incident) == 1, answers  # four deliveries, one incident id
        (incident_id,) = incident
        db = pg(cluster)
        holder = wait_until(
            lambda: db.execute(
                "SELECT host FROM locks WHERE name = ? AND EXISTS (SELECT 1 FROM ledger WHERE "
                "key = ? AND status = 'applied')",
                (f"job:{job}", f"cancel:{job}"),
            ).fetchone(),
            120,
            "a host to hold the job's lock with its scancel applied",
        )["host"]
        assert holder in procs, holder
        # A sweep now, on a third "host": the job failed (cancelled), its incident is running
        # and its lease alive: the sweep leaves it alone.
        wait_until(lambda: sacct_row(job)["state"].startswith("CANCELLED"), 30, "the scancel")
        wait_until(lambda: in_sweep_window(job), 60, "the sweep's window query to list the job")
        # The window reaches back past this job's submission whatever the agents took (a fixed
        # minute missed the job's end once, on a loaded 2-core machine), and no further.
        since = f"{int((time.monotonic() - submitted) // 60) + 2}m"
        sweep = subprocess.run(
            ["runbook", "--site", "devcluster", "sweep", "--since", since, "--json"],
            env={
                **runbook_env(cluster, Path(tempfile.mkdtemp())),
                "RUNBOOK_SWEEP_PARTITIONS": "shared",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert sweep.returncode in (0, 4), sweep.stderr
        swept = json.loads(sweep.stdout)
        skipped = {j: why for j, why in swept["skipped"]}
        assert "already handled" in skipped.get(job, ""), swept
        assert job not in [ln["job_id"] for ln in swept["jobs"]], swept
        running = db.execute("SELECT status FROM incidents WHERE id = ?", (incident_id,))
        assert running.fetchone()["status"] == "running", "the incident ended before the kill"
        os.killpg(procs[holder][0].pid, signal.SIGKILL)  # mid-incident: in node health
        procs[holder][0].wait(10)
        killed_at = time.monotonic()
        other = next(h for h in procs if h != holder)
        done = wait_until(
            lambda: (
                (
                    r := db.execute(
                        "SELECT * FROM incidents WHERE id = ? AND status <> 'running'",
                        (incident_id,),
                    ).fetchone()
                )
                and r
            ),
            180,
            f"{other} to take the incident over and finish it",
        )
        assert time.monotonic() - killed_at >= LEASE_S - 1  # not before the lease ran out
        assert done["status"] == "complete" and done["new_job_id"], dict(done)
        rows = db.execute("SELECT id FROM incidents WHERE job_id = ?", (job,)).fetchall()
        assert [r["id"] for r in rows] == [incident_id]
        applied = [
            r["kind"]
            for r in db.execute(
                "SELECT kind FROM ledger WHERE incident = ? AND status = 'applied' ORDER BY seq",
                (incident_id,),
            )
        ]
        assert applied.count("cancel") == 1 and applied.count("submit") == 1, applied
        # The survivor finished it, in its own folder, without a second scancel.
        report = json.loads((dirs[other] / "incidents" / incident_id / "report.json").read_text())
        again = [a for a in report["actions"] if a["kind"] == "cancel" and a["status"] == "applied"]
        assert not again and report["status"] == "complete", report["errors"]
        # Slurm: exactly one rerun of the job.
        children = [
            ln
            for ln in sh("squeue", "-h", "-t", "all", "-o", "%i|%k").splitlines()
            if f"parent={job}," in ln
        ]
        assert len(children) == 1 and children[0].split("|")[0] == done["new_job_id"], children
        (delivery,) = db.execute("SELECT * FROM deliveries WHERE job_id = ?", (job,)).fetchall()
        assert delivery["status"] == "done" and delivery["owner"] is None
        s.wait_done(done["new_job_id"])
        db.close()
    finally:
        for p, _ in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(60)
        scenario.clear()
        s.close()
        sh("scancel", job, check=False)


def test_postgres_unreachable_hook_answers_503_and_sweep_exits_non_zero(cluster, tmp_path):
    down = "postgresql://runbook@198.18.0.1:1/runbook"  # nothing listens there
    env = runbook_env(cluster, tmp_path, url=down)
    proc = subprocess.Popen(
        ["runbook", "--site", "devcluster", "hook", "serve", "--port", str(PORT + 1)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{PORT + 1}/"

        def answered():
            try:
                return post(url, b'{"job_id": "12345"}', AUTH)
            except OSError:
                return None

        code, doc = wait_until(answered, 30, "the hook to answer")
        assert code == 503, doc
        assert "198.18.0.1:1" in json.dumps(doc), doc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    sweep = subprocess.run(
        ["runbook", "--site", "devcluster", "sweep", "--since", "1h"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sweep.returncode != 0
    assert "198.18.0.1:1" in sweep.stderr and "Traceback" not in sweep.stderr, sweep.stderr


def test_a_named_cluster_passes_M_to_slurm_and_keeps_its_state_in_its_own_schema(cluster):
    """[slurm] cluster = devcluster (the test cluster's ClusterName in slurmdbd): every Slurm
    command runbook runs carries `-M devcluster`, and with a shared [state] url the incident lives
    in the PostgreSQL schema `devcluster`, listed by `incidents --all-clusters`."""
    env = {
        **runbook_env(cluster, Path(tempfile.mkdtemp())),
        "RUNBOOK_SLURM_CLUSTER": "devcluster",
    }

    def rb(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["runbook", "--site", "devcluster", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    refused = rb("incidents")  # the cluster's schema exists only after the admin's migrate
    if refused.returncode != 0:
        assert "runbook state migrate" in refused.stderr, refused.stderr
    migrated = rb("state", "migrate", "--json")
    assert migrated.returncode == 0 and json.loads(migrated.stdout)["schema"] == "devcluster"
    s = Scenario(cluster, "named", frag_mib_per_step=6000, long_step=1)
    job = s.submit("--partition=shared")
    try:
        s.wait_failure(job, "Tried to allocate")
        r = rb("oom", job, "--yes", "--json")
        out = json.loads(r.stdout)
        assert r.returncode == 0 and out["new_job_id"], r.stdout + r.stderr
        for a in out["actions"]:
            if a["kind"] in ("cancel", "submit"):
                tool = next(i for i, w in enumerate(a["argv"]) if w in ("scancel", "sbatch"))
                assert a["argv"][tool + 1 : tool + 3] == ["-M", "devcluster"], a["argv"]
        db = store.connect(cluster["RUNBOOK_CLUSTER_PG_URL"], schema="devcluster")
        (row,) = db.execute("SELECT id FROM incidents WHERE job_id = ?", (job,)).fetchall()
        assert row["id"] == out["incident"]
        db.close()
        listed = json.loads(rb("incidents", "--all-clusters", "--json").stdout)
        mine = [i for i in listed if i["id"] == out["incident"]]
        assert mine and mine[0]["cluster"] == "devcluster", listed[:3]
        s.wait_done(out["new_job_id"])
    finally:
        sh("scancel", job, check=False)
        s.close()
