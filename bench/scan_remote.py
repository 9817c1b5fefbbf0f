"""Benchmark: scanning a 512-rank, >= 1 GiB launcher log over SSH on a test-cluster node.

Targets (issue #3): bytes pulled <= 1 MiB whatever the log size; wall time <= 1.5x one
`LC_ALL=C grep -c` pass over the same file on the same host, measured in the same run.

Two baselines are measured, both over the same SSH connection, interleaved with the scan:
- `grep -c -F` with runbook's own strings: one counting pass that finds the same lines; the ratio
  against it is what runbook's remote pipeline (find, -n -H -B/-A context, the cap, the transfer)
  costs on top of reading the file once. This is the target ratio.
- `grep -c "out of memory"`: a single fixed string, which GNU grep searches at memchr speed; any
  multi-string search is several times slower than this, so it is printed for reference only.

    python3 bench/scan_remote.py [--size-gib 1.0] [--ranks 512] [--repeat 3]

Needs the test cluster (tests/cluster/cluster.sh up). The log is generated once under the
cluster's shared jobs folder: realistic progress lines from every rank, and at 70 % of the file a
real recorded OOM message (corpus oom-095) on one rank followed by the NCCL watchdog timeouts of
all the others (corpus launch-llamafactory-6269 format) and a torchrun Root Cause block.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.evidence.launcher_log import scan  # noqa: E402
from runbook.evidence.log_filter import (  # noqa: E402
    PATTERNS,
    parse_grep_output,
    remote_grep_many_argv,
    split_locations,
)
from runbook.site import load_site  # noqa: E402
from runbook.transport.ssh import SshSettings, SshTransport  # noqa: E402

STATE = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
CORPUS = Path(os.environ.get("RUNBOOK_CORPUS", REPO.parent / "shared" / "corpus"))
OOM_RANK = 137


def corpus_text(rel: str, rid: str) -> str:
    for line in (CORPUS / rel).read_text().splitlines():
        rec = json.loads(line)
        if rec["id"] == rid:
            return rec["text"]
    raise KeyError(rid)


def generate(path: Path, size: int, ranks: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    oom = corpus_text("oom_messages.jsonl", "oom-095")
    rng = random.Random(7)
    tmp = path.with_suffix(".tmp")
    step, written, injected = 0, 0, False
    with tmp.open("w") as f:
        while written < size:
            step += 1
            chunk = []
            for r in range(ranks):
                chunk.append(
                    f"[rank{r}]: 2024-12-06 18:{step // 600 % 60:02d}:{step // 10 % 60:02d} "
                    f"step {step:7d} | loss {2 + rng.random():.4f} | lr 3.0000e-04 | "
                    f"grad_norm {rng.random() * 3:.3f} | tokens/s {rng.randint(38000, 42000)} | "
                    f"mem allocated 70.{rng.randint(10, 99)} GiB\n"
                )
            if not injected and written >= 0.7 * size:
                injected = True
                chunk.append(
                    f"[rank{OOM_RANK}]: " + oom.replace("\n", f"\n[rank{OOM_RANK}]: ") + "\n"
                )
                for r in range(ranks):
                    if r != OOM_RANK:
                        chunk.append(
                            f"[rank{r}]:[E1206 18:54:12.715298746 ProcessGroupNCCL.cpp:607] "
                            f"[Rank {r}] "
                            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, "
                            "OpType=ALLREDUCE, NumelIn=544997376, NumelOut=544997376, "
                            "Timeout(ms)=600000) ran for 600061 milliseconds before timing out.\n"
                        )
            text = "".join(chunk)
            f.write(text)
            written += len(text)
    tmp.replace(path)
    os.chmod(path, 0o644)


def timed(t: SshTransport, argv: list[str]) -> tuple[float, object]:
    start = time.perf_counter()
    r = t.run(argv, timeout=600)
    return time.perf_counter() - start, r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-gib", type=float, default=1.0)
    ap.add_argument("--ranks", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--node", default="gpu-01")
    args = ap.parse_args()

    folder = STATE / "jobs" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)
    log = folder / f"launcher-{args.ranks}r-{args.size_gib:g}g.out"
    t0 = time.perf_counter()
    generate(log, int(args.size_gib * (1 << 30)), args.ranks)
    print(
        f"log: {log.stat().st_size / (1 << 30):.2f} GiB, {args.ranks} ranks "
        f"(generated/reused in {time.perf_counter() - t0:.1f}s)"
    )

    t = SshTransport(args.node, SshSettings.from_site(load_site("devcluster", environ={})))
    # Warm the node's page cache for every command alike (read there, nothing crosses SSH).
    t.run(["sh", "-c", 'cat -- "$1" >/dev/null', "sh", str(log)], timeout=600)
    same_argv = [
        "sh",
        "-c",
        'LC_ALL=C grep -c -F -e "$2" -- "$1"',
        "sh",
        str(log),
        "\n".join(PATTERNS),
    ]
    single_argv = ["sh", "-c", 'LC_ALL=C grep -c "out of memory" -- "$1"', "sh", str(log)]
    scan_argv = remote_grep_many_argv([(str(folder), log.name)])
    times: dict[str, list[float]] = {"same": [], "single": [], "scan": []}
    pulled = 0
    for _ in range(args.repeat):  # interleaved, so drift hits all alike
        for name, argv in (("same", same_argv), ("single", single_argv), ("scan", scan_argv)):
            dt, r = timed(t, argv)
            times[name].append(round(dt, 3))
            if name == "scan":
                pulled, out = len(r.stdout.encode()), r.stdout
    t.close()

    report = scan(next(iter(parse_grep_output(split_locations(out)[0]).values())).text())
    ff = report.first_failure
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["scan"] / med["same"]
    print(f"baseline grep -c -F, runbook's strings:  median {med['same']:.3f}s {times['same']}")
    print(f"reference grep -c 'out of memory':       median {med['single']:.3f}s {times['single']}")
    print(f"runbook remote scan (find|grep|head):    median {med['scan']:.3f}s {times['scan']}")
    print(f"ratio scan / one counting pass: {ratio:.2f}x (target <= 1.5x)")
    print(f"ratio scan / single-string grep -c: {med['scan'] / med['single']:.2f}x (reference)")
    print(f"bytes pulled: {pulled} ({pulled / (1 << 20):.3f} MiB, target <= 1 MiB)")
    print(
        f"first failure: {ff.kind} rank {ff.ranks}; {len(report.timed_out_ranks)} ranks timed out"
    )
    ok = ratio <= 1.5 and pulled <= (1 << 20) and ff.ranks == [OOM_RANK]
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
