"""Memory series from a file the job wrote: Lightning's DeviceStatsMonitor through a CSVLogger.
The parser on the file Lightning 2.6.6 left after a real leak's OOM on an H100
(tests/data/gpu/lightning_metrics.csv), and variants of it; the bounded search of the job's
folder for this run's file."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

from runbook.evidence import job_metrics, trend
from runbook.evidence.trend import from_lightning_csv

GPU = Path(__file__).resolve().parents[1] / "data" / "gpu"
REAL = (GPU / "lightning_metrics.csv").read_text()
AT = "DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current"


def test_real_lightning_file_after_a_leak_reads_as_a_leak_of_rank_0():
    t = from_lightning_csv(REAL, "lightning_logs/stats/version_0/metrics.csv")
    assert t is not None and (t.series, t.rank, t.kind) == ("lightning", 0, "leak")
    assert t.points == 58 and t.steps[:3] == [9, 19, 29] and t.steps[-1] == 579
    # 128 MiB of logits kept per step, logged every 10 steps: +1280 MiB a point.
    assert round(t.values_mib[1] - t.values_mib[0]) == 1280
    assert round(t.values_mib[-1]) == 74721 and round(t.peak_mib) == 75169
    assert t.retries == 0
    assert t.evidence[-1] == (
        "lightning_logs/stats/version_0/metrics.csv: step 579 allocated 74721.2 MiB "
        "(DeviceStatsMonitor, rank 0)"
    )


def _file(values_mib: list[float], prefix: str = "") -> str:
    head = f"{prefix}{AT},epoch,step,train_loss\n"
    return head + "".join(f"{int(v * 2**20)},0,{10 * i + 9},\n" for i, v in enumerate(values_mib))


def test_variants_a_prefix_a_cut_last_row_and_no_memory_columns():
    # A logger prefix before the callback's name (CSVLogger(prefix=...)); a crash mid-row.
    text = _file([1000, 2000, 3000, 4000, 5000, 6000], prefix="train-") + "7000000,0"
    t = from_lightning_csv(text)
    assert t is not None and t.points == 6 and t.kind == "leak"
    assert from_lightning_csv("epoch,step,train_loss\n0,9,0.5\n") is None  # no DeviceStats
    assert from_lightning_csv("") is None
    # Junk where numbers belong is skipped, never an exception.
    junk = f"{AT},step\n{'9' * 5000},9\nnan,19\n-5,29\n1e400,39\n"
    assert from_lightning_csv(junk) is None


def test_a_warm_up_in_lightning_s_columns_is_never_a_leak():
    t = from_lightning_csv(_file([1000, 3000, 5000, 5600, 5600, 5600, 5600, 5600, 5600, 5600]))
    assert t is not None and t.kind == "warmup"


def test_a_real_healthy_run_through_both_loggers_is_flat_and_its_peaks_are_kept(tmp_path):
    """Lightning 2.6.6 on an H200, DeviceStatsMonitor every 10 steps for 300 steps, nothing
    kept across steps (tests/data/gpu/lightning_warmup.log): AdamW's state exists before the
    first logged row (step 9), so both files read flat, never a leak; the steps' peaks ride
    along, so a failing step that needs no more than any before is no spike either."""
    import gzip

    events = tmp_path / "events.out.tfevents.1795732876.vm.474.0"
    events.write_bytes(gzip.decompress((GPU / "lightning_warmup_tfevents.gz").read_bytes()))
    for path in (GPU / "lightning_warmup_metrics.csv", events):
        t = job_metrics.read_series(path, path.name)
        assert t is not None and (t.kind, t.points, t.steps[0], t.steps[-1]) == (
            "flat",
            30,
            9,
            299,
        )
        assert round(t.values_mib[0]) == 2113 and round(t.max_peak_mib) == 2625
        assert trend.at_oom(t, 1.2 * t.max_peak_mib).kind == "flat"
        assert trend.at_oom(t, 1.3 * t.max_peak_mib).kind == "spike"


def _write(path: Path, text: str, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def test_find_keeps_this_run_s_newest_file_and_nothing_else(tmp_path):
    start = datetime(2026, 11, 26, 12, 0, 0)
    during = (start + timedelta(minutes=30)).timestamp()
    before = (start - timedelta(days=2)).timestamp()
    _write(tmp_path / "lightning_logs" / "old" / "version_0" / "metrics.csv", "x", before)
    mine = _write(tmp_path / "lightning_logs" / "run" / "version_3" / "metrics.csv", "x", during)
    _write(tmp_path / "lightning_logs" / "run" / "version_2" / "metrics.csv", "x", during - 60)
    # A link named metrics.csv (a job can plant one to any file) is never read or followed.
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "metrics.csv").symlink_to(mine)
    (tmp_path / "linked").symlink_to(tmp_path / "lightning_logs")
    os.utime(tmp_path / "logs" / "metrics.csv", (during + 5, during + 5), follow_symlinks=False)
    deep = tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "metrics.csv"
    _write(deep, "x", during + 10)  # below MAX_DEPTH
    _write(tmp_path / ".hidden" / "metrics.csv", "x", during + 10)
    assert job_metrics.find(str(tmp_path), start, None) == mine
    assert job_metrics.find(str(tmp_path), start, start + timedelta(minutes=10)) is None
    assert job_metrics.find(str(tmp_path), None, None) is None  # no start: nothing is proof
    assert job_metrics.find(str(tmp_path / "nowhere"), start, None) is None


def test_a_big_file_is_read_as_its_header_and_its_last_rows(tmp_path):
    rows = 200_000
    text = _file([1000 + i for i in range(rows)])
    path = tmp_path / "metrics.csv"
    path.write_text(text)
    assert path.stat().st_size > job_metrics.TAIL_BYTES
    got = job_metrics.read_head_and_tail(path)
    assert len(got) <= job_metrics.HEAD_BYTES + job_metrics.TAIL_BYTES
    t = from_lightning_csv(got)
    assert t is not None and t.steps[-1] == 10 * (rows - 1) + 9 and t.points == trend.MAX_POINTS
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    assert job_metrics.read_head_and_tail(link) == ""


def test_diagnose_metrics_follows_the_on_call_s_own_link_and_says_when_a_file_has_no_series(
    tmp_path,
):
    import json

    from click.testing import CliRunner

    from runbook.cli import cli

    link = tmp_path / "metrics.csv"
    link.symlink_to(GPU / "lightning_metrics.csv")
    log = str(GPU / "lightning_stats.log")
    r = CliRunner().invoke(cli, ["diagnose", "--log", log, "--metrics", str(link), "--json"])
    d = json.loads(r.output)
    assert (d["trend"]["series"], d["trend"]["kind"], d["cause"]) == ("lightning", "leak", "leak")
    plain = tmp_path / "other.csv"
    plain.write_text("epoch,step,train_loss\n0,9,0.5\n")
    r = CliRunner().invoke(cli, ["diagnose", "--log", log, "--metrics", str(plain)])
    assert "no DeviceStatsMonitor memory series (expected a CSVLogger metrics.csv" in r.output
    assert r.exit_code == 0
