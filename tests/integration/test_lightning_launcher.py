"""Lightning's own launcher, run for real on the CPU (no GPU here): `Trainer(strategy="ddp")`
started as one process launches the other ranks and kills them all when one dies. runbook must
name the rank that failed first from what the launcher and PyTorch really print, and diagnose
it through the CLI (tests/captures/lightning_launcher.py; the stored captures are in
tests/data/corpus/captured_lightning.jsonl)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import corpus_checks
from tests.captures import lightning_launcher as ll

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def captures():
    py = ll.lightning_python()
    assert py, "lightning not importable: scripts/test installs lightning==2.6.6 beside torch"
    return ll.capture(py, [sc for sc in ll.SCENARIOS if sc.live])


def test_the_watcher_names_the_failed_rank_on_the_cpu(captures, tmp_path):
    assert len(captures) == sum(sc.live for sc in ll.SCENARIOS) >= 2
    for rec in captures:
        want = rec["answer"]["failing_ranks"]
        # The launcher's own line, as its source prints it: the stored records are not stale.
        assert f"[rank: {want[0]}] Child process with PID" in rec["text"], rec["id"]
        assert corpus_checks.launcher(rec) == [], rec["id"]
        log = tmp_path / f"{rec['id']}.log"
        log.write_text(rec["text"], encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "runbook", "diagnose", "--log", str(log), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        d = json.loads(done.stdout)
        assert d["first_failure"]["ranks"] == want, rec["id"]
        # A refused host allocation, or a SIGKILL with no traceback: host memory either way.
        assert d["verdict"] == "host_oom", (rec["id"], d["reasons"])
