"""Node-health parsers on every real record of ../shared/corpus/ops/: Xid lines, nvidia-smi -q
ECC / row remap, compute processes; plus a real full 8-GPU nvidia-smi -q capture."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from runbook.evidence import nvsmi, xid
from runbook.evidence.gpu_health import health_from_sections, split_sections
from tests.conftest import corpus_records

XIDS = corpus_records("ops/xid_dmesg.jsonl")
REMAP = corpus_records("ops/nvidia_smi_remap_ecc.jsonl")
APPS = corpus_records("ops/nvidia_smi_apps.jsonl")
DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


def _as_list(v):
    return [] if v is None else ([v] if not isinstance(v, list) else v)


@pytest.mark.parametrize("rec", XIDS, ids=[r["id"] for r in XIDS])
def test_xid_record(rec):
    a = rec["answer"]
    log = xid.parse(rec["text"])
    assert log.xids == a["xids"]
    pcis = list(dict.fromkeys(e.pci for e in log.events if e.pci))
    assert pcis == _as_list(a.get("pci"))
    pids = list(dict.fromkeys(e.pid for e in log.events if e.pid is not None))
    assert pids == _as_list(a.get("pid"))
    assert log.category() == a["category"]
    for ev, want in zip(log.events, a.get("events") or [], strict=False):
        assert (ev.xid, ev.category) == (want["xid"], want["category"])
        if "recovery_action" in want:
            assert ev.recovery_action == want["recovery_action"]
        if "nvlink_link" in want:
            assert ev.nvlink_link == want["nvlink_link"]
        if "process_name" in want:
            assert ev.process_name == want["process_name"]
    if "caused_by_xids" in a:
        assert sorted({e.caused_by_xid for e in log.events}) == sorted(a["caused_by_xids"])
    if "mig_gpu_instance" in a:
        assert log.events[0].mig_gpu_instance == a["mig_gpu_instance"]
    if "gpu_uuid" in a:
        assert a["gpu_uuid"] in log.gpu_uuids.values()
    for pci, uuid in (a.get("gpu_uuids") or {}).items():
        assert log.gpu_uuids[pci] == uuid
    if "driver" in a:
        assert log.driver == a["driver"]
    if a.get("equivalent_xid"):
        assert [e.xid for e in log.events] == [a["equivalent_xid"]]


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
    summary = nvsmi.parse_memory_health(rec["text"]).summary()
    for key, want in rec["answer"]["summary"].items():
        assert summary[key] == want, key


def test_real_full_multi_gpu_capture():
    text = (DATA / "gpud-535.161.08-h100x8-first2.q.txt").read_text()
    health = nvsmi.parse_memory_health(text)
    assert health.driver == "535.161.08"
    assert [g.bus_id for g in health.gpus] == ["00000000:19:00.0", "00000000:3B:00.0"]
    assert health.row_remap() == {"pending": False, "failure": False, "correctable": 0,
                                  "uncorrectable": 0}  # fmt: skip
    assert health.ecc() == {"volatile_uncorrectable": 0, "aggregate_uncorrectable": 0}
    assert all(g.retired_single_bit is None for g in health.gpus)  # N/A stays None


@pytest.mark.parametrize("rec", APPS, ids=[r["id"] for r in APPS])
def test_compute_apps_record(rec):
    apps = nvsmi.parse_compute_apps(rec["text"])
    pairs = [[a.pid, a.used_mib] for a in apps if a.pid is not None and a.used_mib is not None]
    assert pairs == rec["answer"]["pid_used_mib"]
    for app, want in zip(apps, rec["answer"].get("processes") or [], strict=False):
        assert str(want["gpu"]) == app.gpu
    if "per_gpu_count" in rec["answer"]:
        counts: dict[str, int] = {}
        for a in apps:
            counts[a.gpu] = counts.get(a.gpu, 0) + 1
        assert counts == rec["answer"]["per_gpu_count"]


def test_probe_sections_from_recorded_outputs():
    """The probe's stdout, assembled from real recorded outputs as a node would print them."""
    kernel = next(r for r in XIDS if r["id"] == "xid-akash-209-79-dmesgT")["text"]
    remap = next(r for r in REMAP if r["id"] == "remap-gpud-80-uncorrectable-pending")["text"]
    apps = next(r for r in APPS if r["id"] == "apps-nvitop-152-table-gi-ci-mixed-types")["text"]
    out = "\n".join([
        "@@runbook kernel_log", kernel, "@@exit 0",
        "@@runbook ecc", remap, "@@exit 0",
        "@@runbook apps", apps, "@@exit 0",
        "@@runbook job_pids", "PID      JOBID    STEPID   LOCALID GLOBALID",
        "10734    42       0        0       0", "@@exit 0",
        "@@runbook owners", "user 10734 alice", "user 58661 bob", "cgroup 10734 job_42",
        "@@exit 0",
    ])  # fmt: skip
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
