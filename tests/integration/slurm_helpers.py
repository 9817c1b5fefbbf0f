"""Helpers for tests that drive the real test cluster: submit, and poll (never sleep blindly)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest


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
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what}\n{cluster_snapshot()}"
            )
        time.sleep(0.2)


def cluster_snapshot() -> str:
    """What the cluster looked like when a wait ran out: the queue with each job's reason, the
    nodes' states with theirs, and slurmctld's last lines. A CI run fails once; this is all the
    next session will have to find out why."""
    parts = []
    for title, argv in (
        ("squeue", ("squeue", "-a", "-t", "all", "-o", "%i %j %T %r %N %M")),
        ("sinfo", ("sinfo", "-N", "-h", "-o", "%N %T %E %C")),
    ):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=15)
            parts.append(f"--- {title} (exit {r.returncode})\n{r.stdout}{r.stderr}")
        except (OSError, subprocess.SubprocessError) as e:
            parts.append(f"--- {title}: {e}")
    log = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
    try:
        tail = (log / "log" / "slurmctld.log").read_text(errors="replace").splitlines()[-25:]
        parts.append("--- slurmctld.log (last 25 lines)\n" + "\n".join(tail))
    except OSError as e:
        parts.append(f"--- slurmctld.log: {e}")
    return "\n".join(parts)


def wait_for_an_idle_cluster(timeout: float = 90.0) -> None:
    """Before a test submits: every node up and not completing an earlier test's job, and no job
    of an earlier test still in the queue. A node still completing a cancelled job, or marked not
    responding after a test froze slurmctld, would hold the next test's jobs pending."""

    def idle() -> bool:
        queue = sh("squeue", "-h", "-o", "%i", check=False).split()
        states = sh("sinfo", "-N", "-h", "-o", "%T", check=False).split()
        return not queue and bool(states) and all(st == "idle" for st in states)

    wait_until(idle, timeout, "every node idle and the queue empty before the test")


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


def pyslurm_backend_or_skip(cli):
    """The pyslurm backend on this cluster, or a skip that says which pyslurm and which Slurm:
    runbook ships no pyslurm, and the registry has none for this cluster's Slurm 22.05, so the
    live contract runs only where a site (or a developer) installed the matching release."""
    from runbook.slurm import pyslurm_backend as pb

    slurm = cli.version()
    have = pb.installed()
    if have["error"]:
        pytest.skip(
            f"pyslurm live contract: no pyslurm imports here, this cluster runs Slurm {slurm} "
            f"(install pyslurm {pb.release_for(slurm)} to run it): "
            f"{have['error']}"
        )
    why = pb.release_mismatch(str(have["version"]), slurm)
    if why:
        pytest.skip(f"pyslurm live contract: {why}")
    return pb.PyslurmBackend(submitter=cli)
