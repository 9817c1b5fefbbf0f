"""Node-health parsers on every real record of ../shared/corpus/ops/: Xid lines, nvidia-smi -q
ECC / row remap, compute processes; plus a real full 8-GPU nvidia-smi -q capture."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from runbook.evidence import nvsmi, xid
from runbook.evidence.gpu_health import health_from_sections, split_sections
from tests import corpus_checks
from tests.conftest import corpus_records

XIDS = corpus_records("ops/xid_dmesg.jsonl")
REMAP = corpus_records("ops/nvidia_smi_remap_ecc.jsonl")
APPS = corpus_records("ops/nvidia_smi_apps.jsonl")
DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


@pytest.mark.parametrize("rec", XIDS, ids=[r["id"] for r in XIDS])
def test_xid_record(rec):
    assert corpus_checks.xid(rec) == []


def test_stale_xids_are_dropped_by_time_fresh_ones_kept():
    rec = next(r for r in XIDS if r["id"] == "xid-akash-244-43-31-94")
    log = xid.parse(rec["text"])
    recent = xid.since(log, datetime(2024, 8, 1))
    assert [e.xid for e in recent.events] == [31, 94] and recent.stale_dropped == 2
    mono = xid.parse(next(r for r in XIDS if r["id"] == "xid-proton-9426-31")["text"])
    # seconds since boot say nothing absolute: kept, never silently dropped
    assert [e.xid for e in xid.since(mono, datetime(2030, 1, 1)).events] == [31]


def test_every_catalog_row_cites_nvidia():
    rows = xid.catalog()
    assert {"13", "31", "48", "63", "64", "74", "79", "94", "95", "119", "120", "154"} <= set(rows)
    for row in rows.values():
        assert row.category in {"hardware", "app", "unknown"}
        assert row.source and row.source.startswith("https://")


@pytest.mark.parametrize("rec", REMAP, ids=[r["id"] for r in REMAP])
def test_remap_ecc_record(rec):
    assert corpus_checks.remap(rec) == []


def test_real_full_multi_gpu_capture():
    text = (DATA / "gpud-535.161.08-h100x8-first2.q.txt").read_text()
    health = nvsmi.parse_memory_health(text)
    assert health.driver == "535.161.08"
    assert [g.bus_id for g in health.gpus] == ["00000000:19:00.0", "00000000:3B:00.0"]
    assert health.row_remap() == {
        "pending": False,
        "failure": False,
        "correctable": 0,
        "uncorrectable": 0,
    }
    assert health.ecc() == {"volatile_uncorrectable": 0, "aggregate_uncorrectable": 0}
    assert all(g.retired_single_bit is None for g in health.gpus)  # N/A stays None


@pytest.mark.parametrize("rec", APPS, ids=[r["id"] for r in APPS])
def test_compute_apps_record(rec):
    assert corpus_checks.apps(rec) == []


def test_probe_sections_from_recorded_outputs():
    """The probe's stdout, assembled from real recorded outputs as a node would print them."""
    kernel = next(r for r in XIDS if r["id"] == "xid-akash-209-79-dmesgT")["text"]
    remap = next(r for r in REMAP if r["id"] == "remap-gpud-80-uncorrectable-pending")["text"]
    apps = next(r for r in APPS if r["id"] == "apps-nvitop-152-table-gi-ci-mixed-types")["text"]
    out = "\n".join(
        [
            "@@runbook kernel_log",
            kernel,
            "@@exit 0",
            "@@runbook ecc",
            remap,
            "@@exit 0",
            "@@runbook apps",
            apps,
            "@@exit 0",
            "@@runbook job_pids",
            "PID      JOBID    STEPID   LOCALID GLOBALID",
            "10734    42       0        0       0",
            "@@exit 0",
            "@@runbook owners",
            "user 10734 alice",
            "user 58661 bob",
            "cgroup 10734 job_42",
            "@@exit 0",
        ]
    )
    h = health_from_sections("gpu-07", split_sections(out))
    assert [e.xid for e in h.kernel.events] == [79]
    assert h.memory.row_remap()["pending"] is True
    assert h.job_pids == {10734}
    assert [a.pid for a in h.foreign_apps("42")] == [58661, 18243, 22720]
    assert h.owners[58661].user == "bob" and h.owners[10734].job == "job_42"
    assert len(h.gpu_fault_reasons()) == 2 and not h.unavailable


def test_failed_and_cut_sections_are_marked_unavailable_not_empty():
    out = (
        "@@runbook kernel_log\ndmesg: read kernel buffer failed: Operation not permitted\n"
        "@@exit 1\n@@runbook ecc\n    Remapped Rows\n        Pending : Y"
    )
    h = health_from_sections("gpu-01", split_sections(out))
    assert h.kernel is None and "exited 1" in h.unavailable["kernel_log"]
    assert h.memory is None and "cut short" in h.unavailable["ecc"]
    assert "apps" in h.unavailable
