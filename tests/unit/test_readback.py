"""Issue 34 item 2: a mutation is "applied" only once Slurm shows its effect. scancel exits 0 for
an id Slurm 22.05 ignores (slurmctld logs "invalid JobId"), and a drain can be refused quietly by
a node that is gone: the step then fails with what Slurm showed instead, and the ledger says so."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from runbook import state
from runbook.actions import steps
from runbook.actions.executor import Executor


class Slurm:
    """Slurm as the actions see it: what each mutation returns, and what Slurm shows after."""

    def __init__(self, job_states: list[str], node_states: list[str] | None = None):
        self.job_states = job_states
        self.node_states = node_states or []

    def job(self, job_id):
        state_now = self.job_states.pop(0) if len(self.job_states) > 1 else self.job_states[0]
        return SimpleNamespace(
            job_id=job_id,
            state=state_now,
            terminal=state_now in ("CANCELLED", "FAILED", "COMPLETED"),
        )

    def node_state(self, node):
        now = self.node_states.pop(0) if len(self.node_states) > 1 else self.node_states[0]
        return now, "x"

    def cancel_argv(self, job_id):
        return ["scancel", job_id]

    def drain_argv(self, node, reason):
        return ["scontrol", "update", f"nodename={node}", "state=drain"]

    def cancel(self, job_id):
        return SimpleNamespace(exit_code=0, stdout="")

    def drain(self, node, reason):
        return SimpleNamespace(exit_code=0, stdout="")


@pytest.fixture
def ex(tmp_path):
    return Executor(state.open_db(tmp_path / "s" / "runbook.db"), incident="i", actor="t")


def test_scancel_that_slurm_ignored_is_failed_with_what_slurm_shows(ex):
    # the live-state check reads RUNNING, then every read-back too: scancel changed nothing
    r = ex.run(steps.cancel(Slurm(["RUNNING"]), "8", readback_s=0.6))
    assert r.status == "failed"
    assert "did not take effect" in r.message and "still shows job 8 RUNNING" in r.message
    row = ex.conn.execute("SELECT status, message FROM ledger").fetchone()
    assert row["status"] == "failed" and "RUNNING" in row["message"]


def test_scancel_is_applied_once_slurm_shows_the_job_ending(ex):
    slurm = Slurm(["RUNNING", "RUNNING", "RUNNING", "CANCELLED"])
    r = ex.run(steps.cancel(slurm, "8_2", readback_s=5))
    assert r.status == "applied" and "Slurm shows it ending" in r.message


def test_a_drain_slurm_does_not_show_is_failed(ex):
    r = ex.run(steps.drain(Slurm(["RUNNING"], ["IDLE"]), "gpu-01", "why", "i", readback_s=0.6))
    assert r.status == "failed" and "Slurm shows gpu-01 IDLE" in r.message


def test_a_drain_is_applied_once_the_node_shows_drain(ex):
    slurm = Slurm(["RUNNING"], ["IDLE", "IDLE", "IDLE+DRAIN"])
    r = ex.run(steps.drain(slurm, "gpu-01", "why", "i", readback_s=5))
    assert r.status == "applied" and "shows DRAIN" in r.message
