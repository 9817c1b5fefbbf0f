"""Memory series from a TensorBoard event file: Lightning's DeviceStatsMonitor through its
default logger (the TensorBoard one, whenever `tensorboard` is installed). The recorded file is
the real H100 leak's rows (tests/data/gpu/lightning_metrics.csv) written by Lightning 2.6.6's own
TensorBoardLogger and TensorBoard 2.21's writer (bench/record_tfevents.py); kept gzipped."""

from __future__ import annotations

import gzip
import os
import struct
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runbook.evidence import job_metrics, tfevents
from runbook.evidence.trend import from_lightning_csv, from_lightning_scalars, lightning_tag

GPU = Path(__file__).resolve().parents[1] / "data" / "gpu"
EVENTS = gzip.decompress((GPU / "lightning_tfevents.gz").read_bytes())
NAME = "events.out.tfevents.1795727138.vm.17784.0"


def _job_folder(tmp_path: Path, data: bytes = EVENTS, mtime: float | None = None) -> Path:
    path = tmp_path / "lightning_logs" / "version_0" / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_the_recorded_event_file_reads_as_the_same_leak_as_the_csv(tmp_path):
    got = tfevents.read(_job_folder(tmp_path), lightning_tag)
    assert len(got) == 174 and {tag.split("/")[-1] for _, tag, _ in got} == {
        "allocated_bytes.all.current",
        "allocated_bytes.all.peak",
        "num_alloc_retries",
    }
    t = from_lightning_scalars(got, "lightning_logs/version_0/" + NAME)
    csv = from_lightning_csv((GPU / "lightning_metrics.csv").read_text())
    assert t is not None and csv is not None
    assert (t.series, t.rank, t.kind, t.points, t.steps) == (
        "lightning",
        0,
        "leak",
        csv.points,
        csv.steps,
    )
    # TensorBoard keeps a scalar as a 32-bit float: byte counts to ~1 part in 16 million.
    assert all(abs(a - b) <= b * 1e-6 for a, b in zip(t.values_mib, csv.values_mib, strict=True))
    assert round(t.values_mib[-1]) == 74721 and t.retries == 0
    assert t.evidence[-1].startswith(f"lightning_logs/version_0/{NAME}: step 579 allocated")


def test_a_file_cut_by_a_killed_job_keeps_the_records_before_the_cut():
    whole = tfevents.scalars(EVENTS, lightning_tag)
    for cut in (len(EVENTS) // 3, len(EVENTS) // 2 + 7):
        part = tfevents.scalars(EVENTS[:cut], lightning_tag)
        assert part == whole[: len(part)] and 0 < len(part) < len(whole)
    # Cut inside the last record (another metric's): every wanted scalar before it is there.
    assert tfevents.scalars(EVENTS[:-3], lightning_tag) == whole
    assert tfevents.scalars(b"", lightning_tag) == []


def _record(payload: bytes) -> bytes:
    return struct.pack("<Q", len(payload)) + b"\0" * 4 + payload + b"\0" * 4


def _ld(field: int, body: bytes) -> bytes:
    return bytes([field << 3 | 2, len(body)]) + body


def test_a_tensor_style_scalar_and_an_unwanted_tag():
    """Writers that log a scalar as a tensor (TensorProto.float_val), and a tag the trend does
    not read, next to a step number: encoded by hand from the wire format."""
    tag = b"DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current"
    tensor = _ld(8, bytes([5 << 3 | 5]) + struct.pack("<f", 1024.0))  # float_val = 1024.0
    value = _ld(1, _ld(1, tag) + tensor)
    other = _ld(1, _ld(1, b"train_loss") + bytes([2 << 3 | 5]) + struct.pack("<f", 0.5))
    event = bytes([2 << 3, 42]) + _ld(5, value + other)  # step = 42
    assert tfevents.scalars(_record(event), lightning_tag) == [(42, tag.decode(), 1024.0)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_any_bytes_never_raise(data):
    tfevents.scalars(data, lightning_tag)
    tfevents.scalars(EVENTS[:200] + data, lambda tag: True)


def test_a_huge_length_is_skipped_not_allocated(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(struct.pack("<Q", 1 << 62) + b"\0" * 20 + EVENTS)
    assert tfevents.read(path, lightning_tag) == []  # nothing after a length past the end
    assert tfevents.scalars(path.read_bytes(), lightning_tag) == []
    link = tmp_path / "link"
    link.symlink_to(_job_folder(tmp_path))
    assert tfevents.read(link, lightning_tag) == []


def test_runbook_finds_this_run_s_event_file_in_the_job_folder(tmp_path):
    start = datetime(2026, 11, 26, 12, 0, 0)
    mine = _job_folder(tmp_path, mtime=(start + timedelta(minutes=5)).timestamp())
    old = tmp_path / "lightning_logs" / "version_9" / NAME
    old.parent.mkdir(parents=True)
    old.write_bytes(EVENTS)
    os.utime(old, ((start - timedelta(days=1)).timestamp(),) * 2)
    assert job_metrics.find(str(tmp_path), start, None) == mine
    t = job_metrics.series_of(str(tmp_path), start, None)
    assert t is not None and t.kind == "leak" and t.evidence[0].startswith("lightning_logs/")


def test_diagnose_metrics_reads_an_event_file(tmp_path):
    import json

    from click.testing import CliRunner

    from runbook.cli import cli

    path = _job_folder(tmp_path)
    log = str(GPU / "lightning_stats.log")
    r = CliRunner().invoke(cli, ["diagnose", "--log", log, "--metrics", str(path), "--json"])
    d = json.loads(r.output)
    assert (d["trend"]["series"], d["trend"]["kind"], d["cause"]) == ("lightning", "leak", "leak")


@pytest.mark.parametrize("value", [float("nan"), -1.0, float("inf"), 2.0**61])
def test_impossible_values_are_not_points(value):
    tag = "DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current"
    assert from_lightning_scalars([(1, tag, value)]) is None


def test_a_logger_prefix_before_the_callback_s_name_is_read_too():
    """TensorBoardLogger(prefix="train") writes "train-DeviceStatsMonitor....": the same key."""
    tag = b"train-DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current"
    events = b"".join(
        _record(bytes([2 << 3, step]) + _ld(5, _ld(1, _ld(1, tag) + bytes([2 << 3 | 5]) + v)))
        for step, v in ((9, struct.pack("<f", 2.0**30)), (19, struct.pack("<f", 2.0**31)))
    )
    got = tfevents.scalars(events, lightning_tag)
    assert [(s, x) for s, _, x in got] == [(9, 2.0**30), (19, 2.0**31)]
    t = from_lightning_scalars(got)
    assert t is not None and t.values_mib == [1024.0, 2048.0] and t.steps == [9, 19]
