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


class _Counters:
    """torch.cuda's peak counters as the caching allocator keeps them: a peak since the last
    reset_peak_memory_stats(), which resets it to what is held now."""

    def __init__(self):
        self.allocated = self.reserved = self.peak_allocated = self.peak_reserved = 0

    def run_step(self, held: int, peak: int, reserved: int) -> None:
        self.peak_allocated = max(self.peak_allocated, peak)
        self.peak_reserved = max(self.peak_reserved, reserved)
        self.allocated, self.reserved = held, reserved

    def reset(self) -> None:
        self.peak_allocated, self.peak_reserved = self.allocated, self.reserved


def test_the_exit_peak_is_the_run_s_not_the_one_since_the_last_step_line(monkeypatch, capsys):
    """With the per-step line on, step() resets PyTorch's peak counters; the exit line (what
    verify compares with the fit) must still say the run's peak. On a real H100 it said 5.8 GB
    after steps that peaked at 42 GB (tests/data/gpu/fit-cotenant-m48.log)."""
    import torch

    from runbook import instrument

    c = _Counters()
    cuda = torch.cuda
    monkeypatch.setattr(instrument, "_SEEN_PEAKS", {"allocated": 0, "reserved": 0})
    for name, fn in {
        "is_available": lambda: True,
        "current_device": lambda: 0,
        "memory_stats": lambda *a: {"num_alloc_retries": 0},
        "memory_allocated": lambda *a: c.allocated,
        "memory_reserved": lambda *a: c.reserved,
        "max_memory_allocated": lambda *a: c.peak_allocated,
        "max_memory_reserved": lambda *a: c.peak_reserved,
        "reset_peak_memory_stats": lambda *a: c.reset(),
        "mem_get_info": lambda *a: (10 * 2**30, 80 * 2**30),
        "memory_summary": lambda *a: "",
        "get_device_properties": lambda *a: type("P", (), {"total_memory": 80 * 2**30})(),
    }.items():
        monkeypatch.setattr(cuda, name, fn)
    for step, peak in enumerate((40_352_871_424, 42_122_048_512), start=1):
        c.run_step(held=5_816_664_576, peak=peak, reserved=47_167_045_632)
        instrument.step(step, every=1)
    instrument._peak_line()
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "max_memory_allocated=42122048512" in last, err
    assert "max_memory_reserved=47167045632" in last
    assert "peak=42122048512" in err  # the step line's own peak is still the step's
