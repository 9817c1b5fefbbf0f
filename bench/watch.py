"""Benchmark: the sweep's watch of running jobs, period after period (issue 65).

Each period reads every running job's log through the real read (`collect.read_logs_many`, the
node-side shell the sweep runs on a batch host, here run on this host: `[logs] read_on =
"local"`, PER_HOST jobs a host), holding between periods what the sweep holds (the offsets and series lines it saves
in its state). Logs of JOBS jobs of SIZE MiB each (four ranks' memory lines among a training's
other lines) are written on a local file system; period 1 reads them as they are, then each log
grows by GROW percent and period 2 reads again; then the same at 10x the size with the same new
lines (GROW percent of the first size). Reported per period: wall time, CPU (this process and its children), the bytes the read
took from the log files (the new bytes, plus a large chunk's tail window read again and two
256-byte checksums), and the same against a floor measured in the same run over the same new bytes: one
`grep -c -F` with runbook's patterns per log, from its old size (`tail -c +N | grep -c`), in one
shell for all of them. Then (local runs) one job fails: its incident's read with what the watch
held, against a read of its whole log.

    python3 bench/watch.py [--jobs 1000] [--size-mib 4] [--grow 1] [--out bench/out/watch.json]
    bash tests/cluster/cluster.sh up && python3 bench/watch.py --cluster --jobs 12 --size-mib 32

With --cluster, the two periods are `runbook sweep` runs on the test cluster over running jobs
(cluster_round); the bytes are the sweep's own count of what its read took (its JSON's
`watch_bytes_read`), the floor one ssh per host.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
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


PER_HOST = 10  # jobs one host holds: a node of 8 GPUs runs a handful of jobs at most


def period(site, jobs: list[JobInfo], held: dict) -> tuple[dict, dict]:
    """One period over every job, PER_HOST at a time (one read of a host's jobs each: a real
    sweep reads its hosts in parallel, `[ssh] max_parallel` at once; here one after another)."""
    t0, c0 = time.monotonic(), cpu()
    got: dict = {}
    for k in range(0, len(jobs), PER_HOST):
        some = jobs[k : k + PER_HOST]
        part, errors = collect.read_logs_many(
            site, [(j, "") for j in some], None, held={j.job_id: held[j.job_id] for j in some}
        )
        assert not errors, next(iter(errors.values()))
        got.update(part)
    wall, used = time.monotonic() - t0, cpu() - c0
    chunk = sum(logs.bytes_read for logs in got.values())
    files = sum(len(logs.watched) for logs in got.values())
    # A chunk of at most TAIL_WINDOW bytes is read once (grep and the tail); a larger one's tail
    # window is read again.
    tails = sum(TAIL_WINDOW if logs.bytes_read > TAIL_WINDOW else 0 for logs in got.values())
    nxt = {
        jid: collect.Held(
            offsets={i: (e, n if n is not None else -1) for i, e, n in logs.watched.values()},
            series=logs.series,
            excerpt=logs.excerpts,
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
    second, held = period(site, jobs, held)
    return {
        "log_mib": round(size / 2**20, 1),
        "first": first,
        "second": second,
        "floor_second": floor(paths, starts),
        "grown_bytes": sum(p.stat().st_size - starts[p] for p in paths),
        "incident": incident(site, jobs[0], paths[0], held[jobs[0].job_id], steps[paths[0]]),
    }


OOM = """Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss = model(batch).loss
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.10 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.07 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.37 GiB is reserved by PyTorch but unallocated.
"""


def incident(site, job: JobInfo, path: Path, held, step: int) -> dict:
    """The job then fails (rank 2's OOM after a few more steps): its incident's read of the log
    with what the watch held (collect.read_logs, as `runbook oom` and the hook read it) against
    a read of the whole log, each timed, and the first failure each finds."""
    grow(path, 64 << 10, step)
    with path.open("a") as f:
        f.write("".join(f"[rank2]: {ln}\n" for ln in OOM.splitlines()))
    ended = dataclasses.replace(job, state="FAILED")
    out = {"held_state_bytes": len(json.dumps(held.excerpt))}  # what the state holds for it
    for name, h in (("from_held", held), ("whole", None)):
        t0, c0 = time.monotonic(), cpu()
        logs = collect.read_logs(site, ended, "", None, held=h)
        ff = logs.launch.first_failure
        out[name] = {
            "wall_s": round(time.monotonic() - t0, 3),
            "cpu_s": round(cpu() - c0, 3),
            # the whole read's grep goes through the file; the held one's through what is new
            "bytes_from_log": logs.bytes_read if name == "from_held" else path.stat().st_size,
            "first_failure": f"{ff.kind} rank {ff.ranks}" if ff else None,
        }
    return out


def cluster_round(jobs_n: int, size: int, new: int, partition: str) -> dict:
    """The same two periods through `runbook sweep` on the test cluster: jobs_n running jobs
    (`sleep` in `partition`: each round its own, so one round's ended jobs are not in the
    other's sweep) whose logs this bench writes (each job's Slurm output file,
    truncated by Slurm at the job's start, then written here as the job would), one state for
    both periods; the floor is one ssh per host running `tail -c +N | grep -c -F` over each log's
    new bytes."""
    sys.path.insert(0, str(REPO / "bench"))
    from sweep import runbook_sweep, site_for, ssh_argv  # the sweep bench's helpers

    from runbook.site import load_site

    tmp = Path(
        tempfile.mkdtemp(
            prefix="watch-",
            dir=os.environ.get("RUNBOOK_CLUSTER_JOBS", "/var/tmp/runbook-devcluster/jobs"),
        )
    )
    os.chmod(tmp, 0o755)
    jobs = []
    for _ in range(jobs_n):
        r = subprocess.run(
            ["sbatch", "--parsable", "-p", partition, "-c", "1", "-o", str(tmp / "slurm-%j.out"),
             "-D", str(tmp), "--wrap", "sleep 1800"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        jobs.append(r.stdout.strip().split(";")[0])
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            out = subprocess.run(["squeue", "-h", "-j", ",".join(jobs), "-o", "%i %T %N"],
                                 capture_output=True, text=True).stdout  # fmt: skip
            states = dict((ln.split()[0], ln.split()[1:]) for ln in out.splitlines())
            if all(states.get(j, [""])[0] == "RUNNING" for j in jobs):
                break
            time.sleep(1)
        paths = {j: tmp / f"slurm-{j}.out" for j in jobs}
        steps = {j: grow(p, size, 0) for j, p in paths.items()}
        site_path = site_for(tmp)
        text = (
            Path(site_path)
            .read_text()
            .replace('partitions = ["debug"]', f'partitions = ["{partition}"]')
        )
        Path(site_path).write_text(text)
        site = load_site(site_path, environ={})

        # Byte-compiled first, as pip does when it installs the wheel: an editable checkout under
        # PYTHONDONTWRITEBYTECODE would otherwise compile runbook's modules in every period.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "runbook")],
                       check=True, capture_output=True)  # fmt: skip

        def timed() -> dict:
            c0 = cpu()
            # Failed jobs come from a window: one minute keeps earlier runs' ended jobs out.
            wall, doc = runbook_sweep(site_path, "1m")
            return {"wall_s": round(wall, 3), "cpu_s": round(cpu() - c0, 3),
                    "new_bytes": doc["stats"].get("watch_bytes_read", 0),
                    "sweep_s": doc["stats"].get("seconds"),
                    "slurm_s": doc["stats"].get("slurm_seconds"),
                    "read_s": doc["stats"].get("read_seconds")}  # fmt: skip

        first = timed()
        starts = {j: p.stat().st_size for j, p in paths.items()}
        for j, p in paths.items():
            grow(p, new, steps[j])
        second = timed()
        pats = "\n".join(PATTERNS)
        by_host: dict[str, list[str]] = {}
        for j in jobs:
            by_host.setdefault(states[j][1], []).append(j)
        t0, c0 = time.monotonic(), cpu()
        for host, mine in by_host.items():
            script = " ".join(
                f"tail -c +{starts[j] + 1} -- {shlex.quote(str(paths[j]))} | "
                f'LC_ALL=C grep -c -F -e "$1" >/dev/null;'
                for j in mine
            )
            subprocess.run([*ssh_argv(site), site.ssh.addresses.get(host, host),
                            shlex.join(["sh", "-c", script, "floor", pats])], check=False)  # fmt: skip
        floor_s = {"wall_s": round(time.monotonic() - t0, 3), "cpu_s": round(cpu() - c0, 3)}
        return {
            "log_mib": round(size / 2**20, 1),
            "first": first,
            "second": second,
            "floor_second": floor_s,
            "grown_bytes": sum(p.stat().st_size - starts[j] for j, p in paths.items()),
        }
    finally:
        subprocess.run(["scancel", *jobs], check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--cluster", action="store_true", help="through runbook sweep on the test cluster"
    )
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--size-mib", type=float, default=4.0)
    ap.add_argument(
        "--grow", type=float, default=1.0, help="percent each log grows between periods"
    )
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rounds = []
    new = int(a.size_mib * 2**20 * a.grow / 100)  # the same new bytes in both rounds
    for size, partition in ((a.size_mib, "debug"), (a.size_mib * 10, "shared")):
        if a.cluster:
            r = cluster_round(a.jobs, int(size * 2**20), new, partition)
        else:
            with tempfile.TemporaryDirectory(prefix="watch-") as tmp:
                r = round_of(Path(tmp), a.jobs, int(size * 2**20), new)
        s, f = r["second"], r["floor_second"]
        s.setdefault("bytes_from_logs", s["new_bytes"])
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
        if "incident" in r:
            h, w = r["incident"]["from_held"], r["incident"]["whole"]
            print(
                f"  then one job fails: its incident's read with what the watch held "
                f"{h['wall_s']} s, {h['cpu_s']} CPU-s, {h['bytes_from_log'] >> 10} KiB of its log; "
                f"a whole read {w['wall_s']} s, {w['cpu_s']} CPU-s, {w['bytes_from_log'] >> 10} KiB "
                f"({round(w['wall_s'] / h['wall_s'], 1) if h['wall_s'] else '-'}x); first failure "
                f"{h['first_failure']} / {w['first_failure']}; the state held "
                f"{r['incident']['held_state_bytes']} bytes of its matching lines",
                flush=True,
            )
    doc = {"jobs": a.jobs, "grow_pct": a.grow, "ranks": RANKS, "rounds": rounds}
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
