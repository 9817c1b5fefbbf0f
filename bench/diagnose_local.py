"""Benchmark: `runbook diagnose --log` on a large local launcher log, against one `grep -c -F` pass
with the same fixed strings over the same file, measured in the same run.

Target (issue 45): <= 1.3x the grep pass at 256 MiB and 1 GiB, peak RSS <= 100 MiB at every
size. Above 64 MiB runbook reads the file with two greps over overlapping parts (two cores here),
so it can be under 1x. Each runbook run is a fresh process (Python start-up included, which dominates at 10 MB); the file is in the page cache
for both (one warm-up read first). The log is the same generated 512-rank log as
bench/scan_remote.py: progress lines of every rank, a real recorded OOM on one rank at 70 %, then
the NCCL watchdog timeouts of the others.

    python3 bench/diagnose_local.py [--sizes 10M,100M,1G] [--repeat 3] [--dir /var/tmp]
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
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from scan_remote import OOM_RANK, generate  # noqa: E402

from runbook.evidence.log_filter import PATTERNS  # noqa: E402

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_of(text: str) -> int:
    return int(float(text[:-1]) * UNITS[text[-1].upper()])


def warm(path: Path) -> None:
    """Into the page cache for both sides, without holding it: a forked child's peak RSS counts
    the parent's memory until exec, so the bench itself stays small."""
    with path.open("rb") as f:
        while f.read(1 << 20):
            pass


def run(argv: list[str]) -> tuple[float, float, bytes]:
    """(seconds, peak RSS MiB of the process and its children, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"}
    )
    out = proc.stdout.read()
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10M,100M,1G")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/var/tmp"))
    a = ap.parse_args()
    print(
        f"{'size':>6}{'grep -c -F':>12}{'runbook':>10}{'ratio':>8}{'peak RSS':>11}  first failure"
    )
    for text in a.sizes.split(","):
        size = size_of(text)
        path = Path(a.dir) / f"runbook-bench-diagnose-{text}.log"
        generate(path, size, 512)
        warm(path)
        grep = [
            run(["grep", "-c", "-F", "-e", "\n".join(PATTERNS), str(path)])[0]
            for _ in range(a.repeat)
        ]
        ours = [
            run([sys.executable, "-m", "runbook", "diagnose", "--json", "--log", str(path)])
            for _ in range(a.repeat)
        ]
        g, r = statistics.median(grep), statistics.median(t for t, _, _ in ours)
        rss = max(m for _, m, _ in ours)
        ff = json.loads(ours[-1][2])["first_failure"]
        ok = ff and ff["ranks"] == [OOM_RANK]
        print(
            f"{text:>6}{g:>11.2f}s{r:>9.2f}s{r / g:>7.2f}x{rss:>8.1f} MiB  "
            f"{ff['kind'] if ff else None} rank {ff['ranks'] if ff else None}"
            f"{'' if ok else f'  WRONG (expected rank {OOM_RANK})'}"
        )


if __name__ == "__main__":
    main()
