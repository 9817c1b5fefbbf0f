"""Fixtures the integration tests share."""

from __future__ import annotations

import pytest

from tests.integration.slurm_helpers import sh, wait_for_an_idle_cluster


@pytest.fixture
def scenario(cluster):
    """Makes test_oom_scenarios.Scenario jobs; closes them and cancels every job left queued."""
    from tests.integration.test_oom_scenarios import Scenario

    made: list[Scenario] = []
    for line in sh("squeue", "-h", "-o", "%i").splitlines():  # an earlier test's, not ours
        sh("scancel", line.strip(), check=False)
    wait_for_an_idle_cluster()

    def make(name: str, **overrides) -> Scenario:
        s = Scenario(cluster, name, **overrides)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
    for line in sh("squeue", "-h", "-o", "%i %j").splitlines():  # leave no wedged job behind
        sh("scancel", line.split()[0], check=False)
