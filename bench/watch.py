"""Benchmark: the sweep's watch of running jobs, period after period (issue 65).

Each period reads every running job's log through the real read (`collect.read_logs_many`, the
node-side shell the sweep runs on a batch host, here run on this host: `[logs] read_on =
"local"`), holding between periods what the sweep holds (the offsets and series lines it saves
in its state). Logs of JOBS jobs of SIZE MiB each (four ranks' memory lines among a training's
other lines) are written on a local file system; period 1 reads them as they are, then each log
grows by GROW percent and period 2 reads again; then the same at 10x the size with the same new
lines (GROW percent of the first size). Reported per period: wall time, CPU (this process and its children), the bytes the read
took from the log files (the new bytes, plus a large chunk's tail window read again and two
256-byte checksums), and the same against a floor measured in the same run over the same new bytes: one
`grep -c -F` with runbook's patterns per log, from its old size (`tail -c +N | grep -c`), in one
shell for all of them.

    python3 bench/watch.py [--jobs 1000] [--size-mib 4] [--grow 1] [--out bench/out/watch.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.evidence import collect  # noqa: E402
from runbook.evidence.log_filter import PATTERNS, TAIL_WINDOW  # noqa: E402
from runbook.site import LogsSection, SiteConfig  # noqa: E402
from runbook.slurm.client import JobInfo  # noqa: E402

RANKS = 4


def lines_of(step: int) -> list[str]:
    """One training step's output: a progress line, some chatter, each rank's memory line."""
    out = [f"step {step} loss {2.0 / (1 + step % 97):.4f} lr 3.0e-04 tokens/s 51234"]
    out += [f"[rank{r}]: data: fetched shard batch {step} in 3.2 ms" for r in range(RANKS)]
    for r in range(RANKS):
        b = (20000 + (step % 5) * 10 + (r == 2) * step // 50) * 2**20
        out.append(
            f"[rank{r}]: RUNBOOK_INSTRUMENT mem rank={r} step={step} allocated={b} peak={b} "
            f"reserved={b} retries=0 total={81920 * 2**20}"
        )
    return out


def grow(path: Path, nbytes: int, step: int) -> int:
    """Append whole steps until `nbytes` more are written; the next step number."""
    written = 0
    with open(path, "a") as f:
        while written < nbytes:
            text = "\n".join(lines_of(step)) + "\n"
            f.write(text)
            written += len(text)
            step += 1
    return step


def cpu() -> float:
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def period(site, jobs: list[JobInfo], held: dict) -> tuple[dict, dict]:
    t0, c0 = time.monotonic(), cpu()
    got, errors = collect.read_logs_many(site, [(j, "") for j in jobs], None, held=held)
    wall, used = time.monotonic() - t0, cpu() - c0
    assert not errors, next(iter(errors.values()))
    chunk = sum(logs.bytes_read for logs in got.values())
    files = sum(len(logs.watched) for logs in got.values())
    # A chunk of at most TAIL_WINDOW bytes is read once (grep and the tail); a larger one's tail
    # window is read again.
    tails = sum(TAIL_WINDOW if logs.bytes_read > TAIL_WINDOW else 0 for logs in got.values())
    nxt = {
        jid: collect.Held(
            offsets={i: (e, n if n is not None else -1) for i, e, n in logs.watched.values()},
            series=logs.series,
        )
        for jid, logs in got.items()
    }
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(used, 3),
        "new_bytes": chunk,
        "bytes_from_logs": chunk + tails + files * 512,
        "trends": sum(len(logs.launch.trends) for logs in got.values()),
    }, nxt


def floor(paths: list[Path], starts: dict[Path, int]) -> dict:
    """One `grep -c -F` over each log's new bytes, all in one shell: the least a watch can do."""
    pats = "\n".join(PATTERNS)
    script = " ".join(
        f'tail -c +{starts[p] + 1} -- {shlex.quote(str(p))} | LC_ALL=C grep -c -F -e "$1" >/dev/null;'
        for p in paths
    )
    t0, c0 = time.monotonic(), cpu()
    subprocess.run(["sh", "-c", script, "floor", pats], check=False)
    return {"wall_s": round(time.monotonic() - t0, 3), "cpu_s": round(cpu() - c0, 3)}


def round_of(root: Path, jobs_n: int, size: int, new: int) -> dict:
    site = dataclasses.replace(SiteConfig(), logs=LogsSection(read_on="local"))
    paths, jobs, steps = [], [], {}
    for i in range(jobs_n):
        d = root / f"job{i}"
        d.mkdir()
        p = d / f"slurm-{1000 + i}.out"
        steps[p] = grow(p, size, 0)
        paths.append(p)
        jobs.append(JobInfo(job_id=str(1000 + i), state="RUNNING", stdout=str(p), work_dir=str(d)))
    first, held = period(site, jobs, {j.job_id: collect.Held() for j in jobs})
    starts = {p: p.stat().st_size for p in paths}
    for p in paths:
        grow(p, new, steps[p])
    second, _ = period(site, jobs, held)
    return {
        "log_mib": round(size / 2**20, 1),
        "first": first,
        "second": second,
        "floor_second": floor(paths, starts),
        "grown_bytes": sum(p.stat().st_size - starts[p] for p in paths),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--size-mib", type=float, default=4.0)
    ap.add_argument(
        "--grow", type=float, default=1.0, help="percent each log grows between periods"
    )
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rounds = []
    new = int(a.size_mib * 2**20 * a.grow / 100)  # the same new bytes in both rounds
    for size in (a.size_mib, a.size_mib * 10):
        with tempfile.TemporaryDirectory(prefix="watch-") as tmp:
            r = round_of(Path(tmp), a.jobs, int(size * 2**20), new)
        s, f = r["second"], r["floor_second"]
        r["second_vs_floor_wall"] = round(s["wall_s"] / f["wall_s"], 2) if f["wall_s"] else None
        r["second_bytes_vs_new"] = round(s["bytes_from_logs"] / r["grown_bytes"], 2)
        rounds.append(r)
        print(
            f"{a.jobs} jobs x {r['log_mib']} MiB: period 1 {r['first']['wall_s']} s "
            f"({r['first']['new_bytes'] >> 20} MiB read); period 2 after {new >> 10} KiB more: "
            f"{s['wall_s']} s, {s['cpu_s']} CPU-s, {s['bytes_from_logs'] >> 10} KiB from the logs "
            f"({r['second_bytes_vs_new']}x the {r['grown_bytes'] >> 10} KiB new); floor "
            f"{f['wall_s']} s ({r['second_vs_floor_wall']}x)",
            flush=True,
        )
    doc = {"jobs": a.jobs, "grow_pct": a.grow, "ranks": RANKS, "rounds": rounds}
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
