"""Benchmark: how long `runbook --help` and `runbook diagnose` take to start, against
`python -c "import click"` (the floor any click program pays) measured in the same run.

Target: each at most 1.5x the floor. Each command runs as a fresh process, as a person or a pager
tool runs it; the figure is the median of --repeat runs after one warm-up (compiled .pyc files).

    python3 bench/startup.py [--repeat 15] [--python PATH] [--runbook PATH]

--python/--runbook measure an installed copy (a venv with the built wheel: no editable-install
finder on the import path, as users have it); without them, this interpreter and `-m runbook`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOG = REPO / "examples" / "logs" / "torchrun-oom-rank3.log"


def timed(argv: list[str], repeat: int) -> float:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runbook", default=None, help="the runbook executable of an install")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    runbook = [a.runbook] if a.runbook else [a.python, "-m", "runbook"]
    rows = {
        "python -c pass": timed([a.python, "-c", "pass"], a.repeat),
        "floor: import click": timed([a.python, "-c", "import click"], a.repeat),
        "runbook --help": timed([*runbook, "--help"], a.repeat),
        "runbook diagnose --log (small log)": timed(
            [*runbook, "diagnose", "--log", str(LOG)], a.repeat
        ),
    }
    floor = rows["floor: import click"]
    if a.json:
        print(json.dumps({k: {"seconds": v, "vs_floor": v / floor} for k, v in rows.items()}))
        return
    print(f"{'command':<38}{'median':>10}{'vs floor':>10}")
    for name, secs in rows.items():
        print(f"{name:<38}{secs * 1000:>8.0f}ms{secs / floor:>9.2f}x")
    worst = max(rows["runbook --help"], rows["runbook diagnose --log (small log)"]) / floor
    print(
        f"target <= 1.50x the floor: worst {worst:.2f}x -> {'met' if worst <= 1.5 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
