"""Memory series a job writes to files of its own, found and read where the job runs.

Lightning's DeviceStatsMonitor logs memory to the job's logger, not to its output: with a
CSVLogger that is `<save_dir>/<name>/version_N/metrics.csv` under the job's working folder,
with the TensorBoardLogger (Lightning's default whenever `tensorboard` is installed)
`.../version_N/events.out.tfevents.*` (runbook's host sees either over the shared filesystem,
as it sees configs and checkpoints). The search is bounded (depth, entries), follows no link,
and keeps only a file written while this run ran: another run's metrics are not this run's
evidence. The parsers are runbook.evidence.trend.from_lightning_csv (a pure function of the
text) and runbook.evidence.tfevents (of the event file's bytes).
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

from runbook.evidence import tfevents
from runbook.evidence.trend import Trend, from_lightning_csv, from_lightning_scalars, lightning_tag
from runbook.jobfiles import owner_read

NAME = "metrics.csv"
MAX_DEPTH = 5  # work_dir/lightning_logs/<name>/version_N/metrics.csv is depth 4
MAX_ENTRIES = 5000  # directory entries looked at in all: a huge dataset folder is not walked
SKIP = {".git", "__pycache__", "wandb", "checkpoints", "node_modules", ".cache", "data"}
HEAD_BYTES = 256 << 10  # the header line: ~250 columns of ~60 characters
TAIL_BYTES = 2 << 20  # the last rows: one per logged batch start and end
SLACK_S = 120  # clocks and the filesystem's mtime resolution


def _metrics_file(name: str) -> bool:
    return name == NAME or name.startswith(tfevents.NAME_PREFIX)


def find(work_dir: str, started: datetime | None, ended: datetime | None) -> Path | None:
    """The newest metrics.csv or TensorBoard event file under work_dir written while the run
    ran, or None."""
    if not work_dir or started is None:
        return None  # without the run's start, nothing proves a file is this run's
    lo = started.timestamp() - SLACK_S
    hi = ended.timestamp() + SLACK_S if ended is not None else float("inf")
    best: tuple[float, Path] | None = None
    seen = 0
    stack = [(Path(work_dir), 0)]
    while stack and seen < MAX_ENTRIES:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                break
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and e.name not in SKIP and not e.name.startswith("."):
                        stack.append((Path(e.path), depth + 1))
                elif _metrics_file(e.name) and e.is_file(follow_symlinks=False):
                    mtime = e.stat(follow_symlinks=False).st_mtime
                    if lo <= mtime <= hi and (best is None or mtime > best[0]):
                        best = (mtime, Path(e.path))
            except OSError:
                continue
    return best[1] if best else None


def read_head_and_tail(path: str | Path) -> str:
    """The file's first line and its last TAIL_BYTES (from a line start): bounded whatever the
    file's size. A link or anything but a regular file reads as empty."""
    try:
        fd = owner_read.open_checked(path)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return ""
        head = f.read(HEAD_BYTES).split(b"\n", 1)[0]
        if st.st_size <= HEAD_BYTES:
            f.seek(0)
            return f.read().decode("utf-8", "replace")
        f.seek(max(st.st_size - TAIL_BYTES, 0))
        tail = f.read(TAIL_BYTES).split(b"\n", 1)[-1]
        return (head + b"\n" + tail).decode("utf-8", "replace")


def series_of(work_dir: str, started: datetime | None, ended: datetime | None) -> Trend | None:
    """The memory trend from the job's own metrics file, with where it was read; or None."""
    path = find(work_dir, started, ended)
    if path is None:
        return None
    shown = os.path.relpath(path, work_dir) if work_dir else str(path)
    return read_series(path, shown)


def read_series(path: str | Path, shown: str) -> Trend | None:
    """The DeviceStatsMonitor trend of one metrics file, a CSVLogger's or a TensorBoard event
    file (by its name); None when it holds none. Follows no link."""
    if Path(path).name.startswith(tfevents.NAME_PREFIX):
        return from_lightning_scalars(tfevents.read(path, lightning_tag), shown)
    return from_lightning_csv(read_head_and_tail(path), shown)


def running_series(job, launch) -> list[Trend]:
    """The memory series of a running job: every rank's from its log (launch.trends), else the
    one its own metrics file holds (DeviceStatsMonitor, rank 0), else none: what the watch of
    running jobs (sweep, hook, runbook prevent) reads. A job whose telemetry is neither says
    nothing, and nothing is said of it."""
    if launch.trends:
        return list(launch.trends)
    try:
        found = series_of(job.work_dir or "", job.start, None)
    except OSError:
        return []
    return [found] if found is not None else []
