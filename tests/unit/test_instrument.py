"""The in-job hook on CPU: a real torch.OutOfMemoryError, a real dump, the marker line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="torch is a test dependency (scripts/test installs it)")

from runbook.evidence.launcher_log import scan  # noqa: E402

SCRIPT = """
import os, torch
from runbook import instrument
instrument.install(model=torch.nn.Linear(1000, 1000))
with instrument.watch():
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                                 "total capacity of 79.15 GiB of which 1.00 GiB is free.")
"""


def test_real_oom_on_cpu_dumps_prints_marker_and_reraises(tmp_path):
    env = {
        "RUNBOOK_OOM_DUMP_DIR": str(tmp_path),
        "SLURM_PROCID": "3",
        "SLURM_JOB_ID": "42",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "PATH": "/usr/bin:/bin",
    }
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "torch.OutOfMemoryError: CUDA out of memory" in r.stderr
    dumps = list(tmp_path.glob("oom-dump-42-rank3-*.json"))
    assert len(dumps) == 1  # watch() and the excepthook: one dump
    d = json.loads(dumps[0].read_text())
    assert d["rank"] == 3 and d["exception"] == "OutOfMemoryError" and d["cuda"] is False
    assert d["memory_allocated"] is None and d["mem_get_info"] is None  # no CUDA: null, not 0
    assert d["allocator"]["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert d["params"] == 1000 * 1000 + 1000
    assert d["fixed_training_mib"] == pytest.approx(1001000 * 18 / 2**20)
    report = scan(r.stderr)
    kinds = [(i.kind, i.rank) for i in report.instrument]
    assert kinds == [("start", 3), ("oom-dump", 3)]
    assert report.instrument[1].fields["path"] == str(dumps[0])
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in report.instrument[0].line
    assert report.first_failure.kind == "oom"
    # The parameter count rides on the start line: the fit reads it from the log alone.
    assert report.params_of(3) == 1001000 == report.params_of(None)
    assert report.params_of(7) == 1001000  # another rank of the same data-parallel model
