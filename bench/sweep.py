"""Benchmark: `runbook sweep` over 50, 100 and 200 failed jobs on the test cluster.

Targets (issue #8): one accounting query per sweep and one SSH exec per host, whatever the number
of jobs; time growing no faster than the number of jobs. Reported against two baselines measured in
the same run over the same jobs and logs:
  floor - the least a script could do: one `sacct` of the window, then one ssh per host running
          `grep -F` with runbook's patterns over that host's logs (no parsing, no verdicts);
  naive - the shell loop on-call writes: per job `scontrol show job`, then `ssh <host> grep -F`.

    bash tests/cluster/cluster.sh up && python3 bench/sweep.py [--sizes 50,100,200]
        [--backends cli,pyslurm]

With --backends, the same sweep runs once per Slurm backend over the same jobs (`[slurm] backend`
through RUNBOOK_SLURM_BACKEND), each timed, with the slurmctld RPCs it made (`sdiag`'s counts by
message type, before and after; the read of sdiag itself taken off).

Jobs are short `--wrap` jobs in the `debug` partition that print a recorded real log from the
corpus (OOMs of each kind, host OOM kills, NCCL timeouts, time limits) and exit 1; the sizes are
cumulative (the second sweep sees the first batch too), each sweep with a fresh state folder so
nothing is skipped as already handled. The policy lets nothing act, so the sweep only triages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.evidence.log_filter import PATTERNS  # noqa: E402
from runbook.site import load_site  # noqa: E402
from tests.conftest import corpus_records  # noqa: E402

STATE = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))


def run(*argv: str, check: bool = True, timeout: float = 900) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}... failed ({r.returncode}): {r.stderr[-500:]}")
    return r


def texts() -> list[str]:
    recs = corpus_records("oom_messages.jsonl") + corpus_records("ops/launcher_logs.jsonl")
    return [r["text"] for r in recs]


def submit(work: Path, n: int, start: int, pool: list[str]) -> list[str]:
    jobs = []
    for i in range(start, start + n):
        (work / f"case{i}.txt").write_text(pool[i % len(pool)] + "\n")
        out = run(
            "sbatch",
            "--parsable",
            "-p",
            "debug",
            "-N1",
            f"--chdir={work}",
            f"--job-name=bench{i}",
            "--output=%x-%j.out",
            "--wrap",
            f"cat case{i}.txt; exit 1",
        ).stdout
        jobs.append(out.strip().split(";")[0])
    return jobs


def wait_failed(jobs: list[str], timeout: float = 600) -> None:
    want, deadline = set(jobs), time.time() + timeout
    while True:
        out = run("sacct", "-n", "-X", "-P", "-o", "JobID,State", "-j", ",".join(jobs)).stdout
        done = {ln.split("|")[0] for ln in out.splitlines() if ln.split("|")[-1] == "FAILED"}
        if want <= done:
            return
        if time.time() > deadline:
            raise SystemExit(f"{len(want - done)} bench jobs did not fail in {timeout:.0f}s")
        time.sleep(1)


def wait_in_window(jobs: list[str], since_s: int, timeout: float = 120) -> float:
    """Accounting answers `-j` with FAILED a second or two before the window query (`-s -S -E`)
    lists the job (measured on slurmdbd 22.05): wait for the window, as the next cron sweep
    would, and report how long that took."""
    t, want = time.time(), set(jobs)
    while True:
        fmt = "%Y-%m-%dT%H:%M:%S"
        out = run(
            "sacct",
            "-a",
            "-n",
            "-X",
            "-P",
            "-r",
            "debug",
            "-s",
            "FAILED",
            "-S",
            time.strftime(fmt, time.localtime(time.time() - since_s)),
            "-E",
            time.strftime(fmt),
            "-o",
            "JobID",
        ).stdout
        if want <= set(out.split()):
            return time.time() - t
        if time.time() - t > timeout:
            raise SystemExit(f"bench jobs missing from the accounting window after {timeout}s")
        time.sleep(0.2)


def site_for(tmp: Path) -> str:
    text = (REPO / "site_config/devcluster.toml").read_text()
    text = text.replace('partitions = ["gpu"]', 'partitions = ["debug"]')
    text = text.replace("/var/tmp/runbook-devcluster/runbook-state", str(tmp / "state"))
    text += "\n[policy]\nunattended_verdicts = []\n"
    p = tmp / "site.toml"
    p.write_text(text)
    return str(p)


def rpc_total() -> int:
    """slurmctld's RPC count over all message types so far (sdiag)."""
    out = run("sdiag").stdout
    part = out.split("by message type")[-1].split("by user")[0]
    return sum(int(n) for n in re.findall(r"count:(\d+)", part))


def runbook_sweep(site: str, since: str, backend: str = "cli") -> tuple[float, dict]:
    env = {**os.environ, "RUNBOOK_SLURM_BACKEND": backend}
    t = time.perf_counter()
    r = subprocess.run(
        ["runbook", "--site", site, "sweep", "--since", since, "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    wall = time.perf_counter() - t
    if r.returncode not in (0, 4):
        raise SystemExit(f"runbook sweep exited {r.returncode}: {r.stderr[-800:]}")
    return wall, json.loads(r.stdout)


def ssh_argv(site) -> list[str]:
    return [
        "ssh",
        "-i",
        site.ssh.identity_file,
        "-l",
        site.ssh.user,
        "-o",
        f"UserKnownHostsFile={site.ssh.known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
    ]


def grep_cmd(paths: list[str]) -> str:
    pats = " ".join(f"-e {shlex.quote(p)}" for p in PATTERNS)
    return f"grep -F -H {pats} -- {' '.join(shlex.quote(p) for p in paths)} || true"


def floor(site, since_s: int) -> float:
    t = time.perf_counter()
    fmt = "%Y-%m-%dT%H:%M:%S"
    start, end = (
        time.strftime(fmt, time.localtime(time.time() - since_s)),
        time.strftime(fmt, time.localtime(time.time() + 1)),
    )
    out = run(
        "sacct",
        "-a",
        "-n",
        "-X",
        "-P",
        "-r",
        "debug",
        "-s",
        "FAILED",
        "-S",
        start,
        "-E",
        end,
        "-o",
        "JobID,NodeList,WorkDir,JobName",
    ).stdout
    by_host: dict[str, list[str]] = {}
    for ln in out.splitlines():
        jid, host, wd, name = ln.split("|")[:4]
        if not os.path.exists(f"{wd}/{name}-{jid}.out"):
            continue  # a job of some other test, with another output pattern
        by_host.setdefault(host, []).append(f"{wd}/{name}-{jid}.out")
    for host, paths in by_host.items():
        addr = site.ssh.addresses.get(host, host)
        if not run(*ssh_argv(site), addr, grep_cmd(paths), check=False).stdout:
            raise SystemExit(f"floor baseline: grep on {host} found nothing; the baseline is void")
    return time.perf_counter() - t


def naive(site, jobs: list[str]) -> float:
    t = time.perf_counter()
    for j in jobs:
        info = run("scontrol", "-o", "show", "job", j).stdout
        fields = dict(kv.split("=", 1) for kv in info.split() if "=" in kv)
        host = fields.get("BatchHost") or fields.get("NodeList", "")
        addr = site.ssh.addresses.get(host, host)
        run(*ssh_argv(site), addr, grep_cmd([fields["StdOut"]]), check=False)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="50,100,200")
    ap.add_argument("--backends", default="cli", help="cli, pyslurm or both (cli,pyslurm)")
    args = ap.parse_args()
    backends = args.backends.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    site = load_site("devcluster", environ={})
    work = Path(tempfile.mkdtemp(prefix="bench-sweep-", dir=STATE / "jobs"))
    os.chmod(work, 0o755)
    pool, jobs, t_start = texts(), [], time.time()
    rows = []
    for size in sizes:
        jobs += submit(work, size - len(jobs), len(jobs), pool)
        wait_failed(jobs)
        since_s = int(time.time() - t_start) + 60
        lag = wait_in_window(jobs, since_s)
        for backend in backends[1:]:
            tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-site-"))
            before = rpc_total()
            b_wall, b_out = runbook_sweep(site_for(tmp), f"{since_s}s", backend)
            rpcs = rpc_total() - before - 1
            print(
                f"{len(jobs):4d} jobs, backend {backend}: sweep {b_wall:6.2f}s, "
                f"{rpcs} slurmctld RPCs, triaged {b_out['stats']['jobs_triaged']}",
                flush=True,
            )
        tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-site-"))
        before = rpc_total()
        wall, out = runbook_sweep(site_for(tmp), f"{since_s}s", backends[0])
        print(
            f"{len(jobs):4d} jobs, backend {backends[0]}: sweep {wall:6.2f}s, "
            f"{rpc_total() - before - 1} slurmctld RPCs",
            flush=True,
        )
        triaged = {ln["job_id"] for ln in out["jobs"]}
        missing = set(jobs) - triaged
        if missing:
            raise SystemExit(f"sweep missed {len(missing)} bench jobs, e.g. {sorted(missing)[:3]}")
        f, nv = floor(site, since_s), naive(site, jobs)
        execs = out["stats"]["ssh_execs_per_host"]
        st = out["stats"]
        rows.append(
            dict(
                jobs=len(jobs),
                window_lag_s=round(lag, 2),
                triaged=st["jobs_triaged"],
                sweep_s=wall,
                floor_s=f,
                naive_s=nv,
                accounting_queries=st["accounting_queries"],
                script_queries=st["script_queries"],
                max_execs_per_host=max(execs.values()),
                hosts=len(execs),
            )
        )
        r = rows[-1]
        r["jobs_per_s"] = round(r["triaged"] / wall, 1)
        print(
            f"{r['jobs']:4d} jobs (triaged {r['triaged']}): sweep {wall:6.2f}s "
            f"({r['jobs_per_s']:.0f} jobs/s)  "
            f"floor {f:6.2f}s ({wall / f:4.2f}x)  naive loop {nv:6.2f}s ({wall / nv:4.2f}x)  "
            f"accounting queries {r['accounting_queries']} (+{r['script_queries']} for scripts), "
            f"execs/host <= "
            f"{r['max_execs_per_host']} on {r['hosts']} hosts (accounting window lag {lag:.1f}s)",
            flush=True,
        )
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print(
            f"growth {a['jobs']} -> {b['jobs']} jobs ({b['jobs'] / a['jobs']:.1f}x): sweep "
            f"{b['sweep_s'] / a['sweep_s']:.2f}x, floor {b['floor_s'] / a['floor_s']:.2f}x, "
            f"naive {b['naive_s'] / a['naive_s']:.2f}x"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
