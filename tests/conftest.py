"""Shared fixtures: where the real-output corpus lives, and the real test cluster."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CLUSTER_SH = REPO / "tests" / "cluster" / "cluster.sh"


def corpus_dir() -> Path:
    """../shared/corpus beside the checkout (RUNBOOK_CORPUS overrides)."""
    return Path(os.environ.get("RUNBOOK_CORPUS", REPO.parent / "shared" / "corpus"))


def corpus_records(relpath: str) -> list[dict]:
    path = corpus_dir() / relpath
    if not path.is_file():
        raise FileNotFoundError(
            f"corpus file {path} is missing: the tests read the real-output corpus from "
            f"../shared/corpus beside the checkout (or set RUNBOOK_CORPUS)"
        )
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def cluster() -> dict[str, str]:
    """Bring the real test cluster up, or reuse a healthy one; returns its `cluster.sh env`."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("integration tests must run in CI, and the test cluster needs root")
        pytest.skip("the test cluster needs root (it starts daemons and network namespaces)")
    up = subprocess.run(
        ["bash", str(CLUSTER_SH), "up"], capture_output=True, text=True, timeout=600
    )
    if up.returncode != 0:
        pytest.fail(f"test cluster did not come up:\n{up.stderr[-4000:]}")
    out = subprocess.run(
        ["bash", str(CLUSTER_SH), "env"], capture_output=True, text=True, check=True
    )
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
