"""A real client: Debian's prometheus-alertmanager (0.25) with a webhook receiver pointing at
`runbook hook serve` on loopback fires an alert (posted with amtool) for a wedged job on the test
cluster; the incident runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request

import pytest

from tests.integration.slurm_helpers import wait_until
from tests.integration.test_hook_http import _incident_of, _wedged, free_port

_UNENDED = ("running", "interrupted")

pytestmark = pytest.mark.integration
TOKEN = "am-token-7"


@pytest.fixture
def alertmanager_to_hook(request, cluster):
    if not shutil.which("prometheus-alertmanager"):
        if os.environ.get("CI"):
            pytest.fail("prometheus-alertmanager not installed: scripts/test installs it")
        pytest.skip("prometheus-alertmanager not installed (scripts/test installs it)")
    hook_port, am_port = free_port(), free_port()
    env = {**os.environ, "RUNBOOK_HOOK_TOKEN": TOKEN, **getattr(request, "param", {})}
    hook = subprocess.Popen(
        ["runbook", "--site", "devcluster", "hook", "serve", "--port", str(hook_port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    work = tempfile.mkdtemp(prefix="am-")
    cfg = os.path.join(work, "alertmanager.yml")
    with open(cfg, "w") as f:
        f.write(f"""
route:
  receiver: runbook
  group_by: [slurm_job_id]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: runbook
    webhook_configs:
      - url: http://127.0.0.1:{hook_port}/
        send_resolved: false
        http_config:
          authorization:
            type: Bearer
            credentials: {TOKEN}
""")
    argv = [
        "prometheus-alertmanager",
        f"--config.file={cfg}",
        f"--storage.path={work}/data",
        f"--web.listen-address=127.0.0.1:{am_port}",
        "--cluster.listen-address=",
    ]
    am = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{am_port}"

    def ready():
        try:
            return urllib.request.urlopen(f"{url}/-/ready", timeout=1).status == 200
        except OSError:
            return False

    wait_until(ready, 30, "Alertmanager to be ready")
    yield url
    am.terminate()
    hook.terminate()
    am.wait(20)
    hook.wait(30)


def test_alertmanager_alert_runs_the_incident(alertmanager_to_hook, cluster):
    job, s = _wedged(cluster, "amjob")
    try:
        r = subprocess.run(
            [
                "amtool",
                "alert",
                "add",
                "SlurmJobOOM",
                f"slurm_job_id={job}",
                "severity=page",
                "--annotation=summary=CUDA OOM on a Slurm job",
                f"--alertmanager.url={alertmanager_to_hook}",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert r.returncode == 0, r.stderr
        row = wait_until(
            # Ended: a listing in the instant between the row and the job's lock reads
            # "interrupted" (no live lock), before the incident has a verdict.
            lambda: (i := _incident_of(job)) and i["status"] not in _UNENDED and i,
            180,
            "the incident Alertmanager's webhook started",
        )
        assert row["source"] == "hook" and row["verdict"] == "fragmentation"
        with open(os.path.join(row["folder"], "report.json")) as fh:
            report = json.load(fh)
        assert report["source"] == "hook" and report["new_job_id"]
        s.wait_done(report["new_job_id"])
    finally:
        s.close()


def _freeze(cluster, daemons: list[str], sig: int) -> None:
    """SIGSTOP/SIGCONT the real daemons: slurmctld and slurmdbd stall as a hung controller does."""
    run = os.path.join(cluster["RUNBOOK_CLUSTER_STATE"], "run")
    for d in daemons:
        with open(os.path.join(run, f"{d}.pid")) as f:
            os.kill(int(f.read().split()[0]), sig)


# Short Slurm timeouts and retries for the hook under test, so the outage is seconds long.
@pytest.mark.parametrize(
    "alertmanager_to_hook",
    [{"RUNBOOK_SLURM_COMMAND_TIMEOUT_S": "3", "RUNBOOK_HOOK_RETRY_MAX_S": "4"}],
    indirect=True,
)
def test_slurm_unreachable_for_a_while_then_one_incident(alertmanager_to_hook, cluster):
    """Slurm stalls (slurmctld and slurmdbd stopped) while Alertmanager delivers: the delivery is
    queued (202), the worker's lookups fail and are retried with backoff, and once Slurm answers
    again the incident runs once: nothing lost, nothing doubled."""
    import signal

    from runbook import state
    from runbook.site import load_site
    from tests.integration.test_hook_http import _ledger

    job, s = _wedged(cluster, "amoutage")
    daemons = ["slurmctld", "slurmdbd"]
    try:
        _freeze(cluster, daemons, signal.SIGSTOP)
        try:
            r = subprocess.run(
                [
                    "amtool",
                    "alert",
                    "add",
                    "SlurmJobOOM",
                    f"slurm_job_id={job}",
                    f"--alertmanager.url={alertmanager_to_hook}",
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert r.returncode == 0, r.stderr
            conn = state.site_db(load_site("devcluster", environ={}))

            def retried():
                row = conn.execute("SELECT * FROM deliveries WHERE job_id = ?", (job,)).fetchone()
                return row is not None and (row["attempts"] or 0) >= 1 and row["status"] == "queued"

            wait_until(retried, 60, "a Slurm lookup to fail and the delivery to wait in the queue")
            assert _incident_of(job) is None  # nothing was started on a guess
        finally:
            _freeze(cluster, daemons, signal.SIGCONT)
            # Both back before anything else runs: the controller answers and accounting too.
            wait_until(
                lambda: subprocess.run(["scontrol", "ping"], capture_output=True).returncode == 0,
                60,
                "slurmctld to answer again",
            )
            wait_until(
                lambda: (
                    subprocess.run(["sacct", "-n", "-X", "-j", job], capture_output=True).returncode
                    == 0
                ),
                60,
                "slurmdbd to answer again",
            )
        row = wait_until(
            # Ended: a listing in the instant between the row and the job's lock reads
            # "interrupted" (no live lock), before the incident has a verdict.
            lambda: (i := _incident_of(job)) and i["status"] not in _UNENDED and i,
            180,
            "the incident once Slurm answers again",
        )
        assert row["verdict"] == "fragmentation"
        deliveries = [
            dict(d)
            for d in conn.execute(
                "SELECT status, attempts FROM deliveries WHERE job_id = ?", (job,)
            )
        ]
        assert len(deliveries) == 1 and deliveries[0]["status"] == "done"
        assert deliveries[0]["attempts"] >= 2
        assert _ledger(job) == [("cancel", "applied"), ("submit", "applied")]
        s.wait_done(row["new_job_id"])
    finally:
        s.close()
