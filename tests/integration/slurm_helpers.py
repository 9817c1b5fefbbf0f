"""Helpers for tests that drive the real test cluster: submit, and poll (never sleep blindly)."""

from __future__ import annotations

import subprocess
import time


def sh(*argv: str, check: bool = True) -> str:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def sbatch(*args: str) -> str:
    return sh("sbatch", "--parsable", *args).strip().split(";")[0]


def wait_until(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def squeue_state(job_id: str) -> str:
    return sh("squeue", "-h", "-j", job_id, "-o", "%T", check=False).strip()


def sacct_row(job_id: str) -> dict[str, str] | None:
    out = sh(
        "sacct", "-n", "-X", "-P", "-j", job_id, "-o", "JobID,State,ExitCode,NodeList", check=False
    )
    for line in out.splitlines():
        jid, state, code, nodes = line.split("|")
        if jid == job_id:
            return {"state": state, "exit_code": code, "nodes": nodes}
    return None


def in_sweep_window(job_id: str) -> bool:
    """Whether accounting's window query (the one a sweep makes) lists the job as ended badly.
    slurmdbd lists a job there a little after `sacct -j` shows its state (longer under load): a
    test that sweeps once waits for this first, as overlapping cron windows would."""
    from datetime import datetime, timedelta

    from runbook.slurm.cli_backend import FAILED_STATES
    from runbook.slurm.client import window_end

    f = "%Y-%m-%dT%H:%M:%S"
    out = sh(
        "sacct", "-a", "-X", "-P", "-n", "-o", "JobID",
        "-S", (datetime.now() - timedelta(hours=1)).strftime(f),
        "-E", window_end(None).strftime(f),
        "-s", FAILED_STATES,
        check=False,
    )  # fmt: skip
    return job_id in out.split()
