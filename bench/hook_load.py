"""Benchmark: `runbook hook serve` under 1,000 deliveries in 60 s on loopback, against a set of
real failed jobs on the test cluster.

A third of the deliveries repeat an earlier one (Alertmanager resending the same alert), a few
are invalid (not JSON, wrong shape, wrong token), the rest are new alerts for the job set (each
job alerted several times, as a flapping alert does). Reported: answer time p50/p99/max by
status, the server's peak RSS, incidents created (must be exactly one per distinct job), and how
long the queue took to drain after the last delivery.

    bash tests/cluster/cluster.sh up && python3 bench/hook_load.py [--deliveries 1000]
        [--seconds 60] [--jobs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook import state  # noqa: E402
from runbook.site import load_site  # noqa: E402
from tests.integration.slurm_helpers import sacct_row, sbatch, wait_until  # noqa: E402

TOKEN = "load-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: bytes, token: str = TOKEN) -> tuple[int, float]:
    req = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
            code = r.status
    except urllib.error.HTTPError as e:
        e.read()
        code = e.code
    return code, time.perf_counter() - t


def alert(job: str, n: int) -> bytes:
    return json.dumps(
        {
            "version": "4",
            "status": "firing",
            "receiver": "runbook",
            "alerts": [
                {
                    "status": "firing",
                    "labels": {"alertname": "SlurmJobFailed", "slurm_job_id": job},
                    "annotations": {"summary": f"job {job} failed"},
                    "fingerprint": f"fp{job}x{n}",
                    "startsAt": f"2026-11-23T03:{n % 60:02d}:00Z",
                }
            ],
        }
    ).encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deliveries", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=30)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="runbook-hook-load-"))
    print(f"submitting {a.jobs} jobs that fail (exit 3) ...", flush=True)
    jobs = [
        sbatch("-p", "debug", f"--output={work}/%j.out", "--wrap", "echo step 1; exit 3")
        for _ in range(a.jobs)
    ]
    wait_until(
        lambda: all((r := sacct_row(j)) and r["state"] == "FAILED" for j in jobs),
        120,
        "the jobs to fail",
    )
    text = (REPO / "site_config" / "devcluster.toml").read_text()
    text = text.replace("/var/tmp/runbook-devcluster/runbook-state", str(work / "state"))
    site_path = work / "site.toml"
    site_path.write_text(text)
    port = free_port()
    server = subprocess.Popen(
        ["runbook", "--config", str(site_path), "hook", "serve", "--port", str(port)],
        env={**os.environ, "RUNBOOK_HOOK_TOKEN": TOKEN},
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    wait_until(lambda: _up(url), 30, "the hook to listen")
    rng = random.Random(11)
    sent: list[bytes] = []
    results: dict[int, list[float]] = {}
    interval = a.seconds / a.deliveries
    start = time.perf_counter()
    for i in range(a.deliveries):
        roll = rng.random()
        token = TOKEN
        if roll < 0.33 and sent:
            body = rng.choice(sent)  # a resend of an earlier delivery
        elif roll < 0.36:
            body = rng.choice([b"{not json", b'{"alerts": "x"}', b'{"event": [1]}'])
        elif roll < 0.38:
            body, token = alert(rng.choice(jobs), i), "wrong"
        else:
            body = alert(rng.choice(jobs), i)
            sent.append(body)
        code, secs = post(url, body, token)
        results.setdefault(code, []).append(secs)
        delay = start + (i + 1) * interval - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    sent_s = time.perf_counter() - start
    conn = state.site_db(load_site(str(site_path), environ={}))
    t0 = time.perf_counter()
    wait_until(lambda: state.queue_depth(conn) == 0, 600, "the queue to drain")
    drained = time.perf_counter() - t0
    rss = _peak_rss_mib(server.pid)
    server.terminate()
    server.wait(120)
    per_job = dict(
        conn.execute("SELECT job_id, COUNT(*) FROM incidents GROUP BY job_id").fetchall()
    )
    alerted = {json.loads(b)["alerts"][0]["labels"]["slurm_job_id"] for b in sent}
    every = [s for v in results.values() for s in v]
    print(
        f"{a.deliveries} deliveries in {sent_s:.1f} s; answers by status: "
        + ", ".join(f"{c}: {len(v)}" for c, v in sorted(results.items()))
    )
    print(
        f"answer time: p50 {statistics.median(every) * 1000:.1f} ms, p99 "
        f"{sorted(every)[int(len(every) * 0.99) - 1] * 1000:.1f} ms, max {max(every) * 1000:.1f} ms"
    )
    print(f"server peak RSS: {rss:.1f} MiB; queue drained {drained:.1f} s after the last delivery")
    ok = set(per_job) == alerted and all(n == 1 for n in per_job.values())
    print(
        f"incidents: {sum(per_job.values())} for {len(alerted)} distinct jobs alerted -> "
        f"{'exactly one each' if ok else 'NOT one each: ' + str(per_job)}"
    )


def _up(url: str) -> bool:
    try:
        urllib.request.urlopen(url + "healthz", timeout=2)
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def _peak_rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


if __name__ == "__main__":
    main()
