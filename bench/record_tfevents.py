"""Write the recorded Lightning run's DeviceStatsMonitor rows through Lightning's own
TensorBoardLogger: the event file a job would have had with Lightning's default logger (the
TensorBoard one, whenever `tensorboard` is installed) instead of the CSVLogger it ran with.

The values are the real H100 run's (tests/data/gpu/lightning_metrics.csv, a leak recorded by
bench/gpu_record.py's lightning_stats case); the file format is TensorBoard's own writer's.
Needs `lightning` and `tensorboard` (not test dependencies: the file is kept in tests/data/gpu).

    python3 bench/record_tfevents.py OUT_DIR
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CSV = REPO / "tests" / "data" / "gpu" / "lightning_metrics.csv"


def main() -> int:
    from lightning.pytorch.loggers import TensorBoardLogger

    out = Path(sys.argv[1])
    logger = TensorBoardLogger(save_dir=str(out), name="lightning_logs", version=0)
    with CSV.open(newline="") as f:
        for row in csv.DictReader(f):
            step = int(row.pop("step"))
            metrics = {k: float(v) for k, v in row.items() if v not in ("", None)}
            logger.log_metrics(metrics, step=step)
    logger.experiment.flush()
    logger.experiment.close()
    for path in sorted(out.rglob("events.out.tfevents.*")):
        print(path, path.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
