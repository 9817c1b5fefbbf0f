"""Benchmark: how long `runbook --help` and `runbook diagnose` take to start, against
`python -c "import click"` (the floor any click program pays) measured in the same run.

Target: each at most 1.5x the floor. Each command runs as a fresh process, as a person or a pager
tool runs it. The commands take turns within each round (floor, --help, diagnose, floor, ...) and
the ratio is taken per round, then the median over rounds: a machine whose speed drifts during the
run (a shared 2-core VM drifts by tens of ms) shifts a round's three commands alike.

Bytecode: `pip install` compiles .pyc files, so users start from them. An environment that sets
PYTHONDONTWRITEBYTECODE (some CI images do) would make every run of a checkout compile runbook's
sources again; the commands here run without it, after one warm-up that writes the .pyc files.
--no-bytecode measures that other case.

    python3 bench/startup.py [--repeat 15] [--python PATH] [--runbook PATH] [--no-bytecode]

--python/--runbook measure an installed copy (a venv with the built wheel: no editable-install
finder on the import path, as users have it); without them, this interpreter and `-m runbook`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOG = REPO / "examples" / "logs" / "torchrun-oom-rank3.log"
FLOOR = "floor: import click"


def once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="rounds (each runs every command once)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runbook", default=None, help="the runbook executable of an install")
    ap.add_argument("--no-bytecode", action="store_true", help="as with PYTHONDONTWRITEBYTECODE=1")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    runbook = [a.runbook] if a.runbook else [a.python, "-m", "runbook"]
    commands = {
        "python -c pass": [a.python, "-c", "pass"],
        FLOOR: [a.python, "-c", "import click"],
        "runbook --help": [*runbook, "--help"],
        "runbook diagnose --log (small log)": [*runbook, "diagnose", "--log", str(LOG)],
    }
    for argv in commands.values():  # warm-up: .pyc files written, files in the page cache
        once(argv, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    ratios: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(a.repeat):
        this_round = {name: once(argv, env) for name, argv in commands.items()}
        for name, secs in this_round.items():
            times[name].append(secs)
            ratios[name].append(secs / this_round[FLOOR])
    rows = {
        name: (statistics.median(times[name]), statistics.median(ratios[name])) for name in commands
    }
    if a.json:
        print(json.dumps({k: {"seconds": s, "vs_floor": r} for k, (s, r) in rows.items()}))
        return
    print(f"{'command':<38}{'median':>10}{'vs floor':>10}   (ratio: median of per-round ratios)")
    for name, (secs, ratio) in rows.items():
        print(f"{name:<38}{secs * 1000:>8.0f}ms{ratio:>9.2f}x")
    worst = max(rows["runbook --help"][1], rows["runbook diagnose --log (small log)"][1])
    print(
        f"target <= 1.50x the floor: worst {worst:.2f}x -> {'met' if worst <= 1.5 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
