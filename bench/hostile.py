"""Benchmark: hostile and unusual inputs through `runbook diagnose` and `runbook hook` (stdin), each
in a fresh process: wall seconds, peak RSS, exit code and whether a traceback was printed.

Targets: every row under 2 s and 100 MiB RSS, no traceback, exit 0 or 3 (input not understood).
The rows are the table of the "bounded inputs" issue; a baseline row (a normal small log) is
measured in the same run.

    python3 bench/hostile.py [--only NAME] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process "
    "has 78.12 GiB memory in use. Of the allocated memory 75.00 GiB is allocated by PyTorch, and "
    "1.50 GiB is reserved by PyTorch but unallocated."
)
D = "9" * 5000  # over Python's 4300-digit int-string limit


def _wide_sacct(size: int) -> str:
    header = "JobID " + " ".join(f"{'C' + str(i):>3}" for i in range(199))
    rule = "------ " + " ".join("---" for _ in range(199))
    row = f"{12:<6} " + " ".join(f"{'x':>3}" for _ in range(198))
    return "\n".join([header, rule] + [row] * (size // (len(row) + 1))) + "\n"


def rows(tmp: Path) -> dict[str, tuple[list[str], bytes | None]]:
    """name -> (argv after `runbook`, stdin bytes)."""

    def f(name: str, data: bytes | str) -> str:
        p = tmp / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return str(p)

    small = (REPO / "examples" / "logs" / "torchrun-oom-rank3.log").read_text()
    out: dict[str, tuple[list[str], bytes | None]] = {
        "baseline: small real log": (["diagnose", "--log", f("small.log", small)], None),
        "rank prefix of 5000 digits": (
            ["diagnose", "--log", f("r.log", f"[rank{D}]: {OOM}\n")],
            None,
        ),
        "watchdog rank of 5000 digits": (
            [
                "diagnose",
                "--log",
                f("w.log", f"[Rank {D}] Watchdog caught collective operation timeout\n"),
            ],
            None,
        ),
        "exit code of 5000 digits": (
            [
                "diagnose",
                "--log",
                f("e.log", f"srun: error: gpu-01: task 3: Exited with exit code {D}\n"),
            ],
            None,
        ),
        "srun task of 5000 digits": (
            ["diagnose", "--log", f("t.log", f"srun: error: gpu-01: task {D}: Killed\n")],
            None,
        ),
        "xid of 5000 digits": (
            ["diagnose", "--dmesg", f("x.txt", f"NVRM: Xid (PCI:0000:3b:00): {D}, pid=1\n")],
            None,
        ),
        "pid of 5000 digits": (
            [
                "diagnose",
                "--compute-apps",
                f("p.csv", f"pid, used_gpu_memory [MiB]\n{D}, 100 MiB\n"),
            ],
            None,
        ),
        "hostlist of 5000 digits": (
            [
                "diagnose",
                "--slurm",
                f("h.txt", f"JobId=1 JobName=x JobState=FAILED NodeList=gpu-[1-{D}] NumTasks=4\n"),
            ],
            None,
        ),
        "webhook job id of 5000 digits": (["hook"], b'{"job_id": ' + D.encode() + b"}"),
        "[Rank 100000000] Watchdog": (
            [
                "diagnose",
                "--json",
                "--log",
                f(
                    "wd.log",
                    "[Rank 100000000] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n",
                ),
            ],
            None,
        ),
        "srun tasks 0-99999 x20": (
            [
                "diagnose",
                "--log",
                f("s.log", "srun: error: n: tasks " + ",".join(["0-99999"] * 20) + ": Killed\n"),
            ],
            None,
        ),
        "OOM line then 16k digits": (
            ["diagnose", "--log", f("o.log", OOM + " " + "1" * 16000 + "\n")],
            None,
        ),
        "compute-apps cell of 40k digits": (
            [
                "diagnose",
                "--compute-apps",
                f("c.csv", "pid, used_gpu_memory [MiB]\n12, " + "4" * 40000 + "\n"),
            ],
            None,
        ),
        "scontrol word of 40k characters": (
            [
                "diagnose",
                "--slurm",
                f("sc.txt", "JobId=1 JobName=" + "a" * 40000 + " JobState=FAILED\n"),
            ],
            None,
        ),
        "nvidia-smi -q line with 40k spaces": (
            [
                "diagnose",
                "--gpu-health",
                f(
                    "q.txt",
                    "==============NVSMI LOG==============\nGPU 00000000:3B:00.0\n    ECC Errors\n        Volatile\n            DRAM Uncorrectable"
                    + " " * 40000
                    + ": 0\n",
                ),
            ],
            None,
        ),
        # 8 MiB (the cap for structured inputs) of a 200-column sacct table whose rows leave
        # their last cell empty: each row's shift is fitted, not read off its last cell.
        "8 MiB sacct table of 200 narrow columns": (
            ["diagnose", "--slurm", f("wide.txt", _wide_sacct(8 << 20))],
            None,
        ),
        "9 MiB dmesg with an Xid 79": (
            [
                "diagnose",
                "--json",
                "--dmesg",
                f(
                    "big-dmesg.txt",
                    "[ 1.0] usb 1-1: new device\n" * 340_000
                    + "[ 9.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n",
                ),
            ],
            None,
        ),
        # Every line exactly 80 columns, as a terminal cut them: the kernel log is read twice
        # (as cut, and as an editor's wrap), and the Xid on a cut line is read whole.
        "9 MiB dmesg cut at 80 columns": (
            [
                "diagnose",
                "--json",
                "--dmesg",
                f(
                    "cut-dmesg.txt",
                    (_CUT_LINE[:80] + "\n" + _CUT_LINE[80:] + "\n") * 78_000
                    + "[ 9.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n",
                ),
            ],
            None,
        ),
        "NUL bytes then an OOM": (
            ["diagnose", "--log", f("nul.log", b"\0" * 600 + b"\nstep 3\n" + OOM.encode() + b"\n")],
            None,
        ),
        "gzip-compressed log": (
            ["diagnose", "--log", f("g.log.gz", gzip.compress(small.encode()))],
            None,
        ),
        "a log on standard input (--log -)": (["diagnose", "--log", "-"], small.encode()),
        "hook body nested 200k deep": (["hook"], b"[" * 200_000 + b"]" * 200_000),
        "hook alerts of strings": (["hook"], b'{"alerts": ["x"]}'),
    }
    big = os.environ.get("RUNBOOK_BENCH_BIG")
    if big:  # the 200 MB rows take a while to write: opt in
        out["200 MB of matching lines"] = (
            ["diagnose", "--log", f("m.log", ("CUDA error: x\n" * 14_000_000))],
            None,
        )
        out["200 MB tqdm line of \\r redraws"] = (
            [
                "diagnose",
                "--log",
                f(
                    "tq.log",
                    ("\r 10%|#   | 1/10 [00:01<00:09] Error" * 5_000_000) + "\n" + OOM + "\n",
                ),
            ],
            None,
        )
    return out


# A 120-column kernel line; the row above cuts it at 80 columns, as a terminal does.
_CUT_LINE = (
    "[ 1.0] usb 1-1: new high-speed USB device number 2 using xhci_hcd, and the hub "
    "reports port 3 status 0x503 change 0x1 ok"
)

# What a row must print besides staying in bounds: the evidence that must survive the input.
EXPECT = {
    # The example's 765 MiB pool is 0.9% of the card: a true OOM whose first rung also sets the
    # allocator (#15's thin-pool rule), no longer fragmentation.
    "baseline: small real log": "verdict: true_oom",
    "9 MiB dmesg with an Xid 79": '"xid": 79',
    "9 MiB dmesg cut at 80 columns": '"xid": 79',
    "NUL bytes then an OOM": "verdict: true_oom",
    "gzip-compressed log": "verdict: true_oom",
    "a log on standard input (--log -)": "verdict: true_oom",
    "OOM line then 16k digits": "verdict: true_oom",
    "[Rank 100000000] Watchdog": "beyond the job's rank cap",
    "200 MB tqdm line of \\r redraws": "verdict: true_oom",
}


def _limit() -> None:
    # A row that runs away must not take the machine with it: 4 GiB of address space, 120 s CPU.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (120, 120))


def measure(argv: list[str], stdin: bytes | None) -> dict:
    """One fresh process; its own peak RSS from wait4 (not a running maximum over children). The
    figure is an upper bound: a forked child's peak counts this bench's own memory (~20 MiB)
    until exec."""
    with (
        tempfile.TemporaryFile() as fin,
        tempfile.TemporaryFile() as ferr,
        tempfile.TemporaryFile() as fout,
    ):
        fin.write(stdin or b"")
        fin.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "runbook", *argv],
            stdin=fin,
            stdout=fout,
            stderr=ferr,
            cwd=REPO,
            preexec_fn=_limit,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        ferr.seek(0)
        err = ferr.read().decode("utf-8", "replace")
        fout.seek(0)
        out = fout.read(4 << 20).decode("utf-8", "replace")
    return {
        "seconds": round(secs, 3),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "exit": proc.returncode,
        "traceback": "Traceback" in err,
        "stderr": err.strip()[-300:],
        "stdout": out,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for name, (argv, stdin) in rows(Path(d)).items():
            if a.only and a.only not in name:
                continue
            results[name] = m = measure(argv, stdin)
            want = EXPECT.get(name)
            m["expected"] = want is None or want in m["stdout"]
            del m["stdout"]
    if a.json:
        print(json.dumps(results, indent=2))
        return
    base = results.get("baseline: small real log", {}).get("seconds")
    ok = True
    for name, m in results.items():
        bad = (
            m["seconds"] > 2
            or m["peak_rss_mib"] > 100
            or m["traceback"]
            or m["exit"] not in (0, 3)
            or not m["expected"]
        )
        ok &= not bad
        ratio = f"{m['seconds'] / base:5.1f}x" if base else ""
        print(
            f"{'FAIL' if bad else 'ok  '} {name:<38}{m['seconds']:7.2f}s {ratio} "
            f"{m['peak_rss_mib']:7.1f} MiB  exit {m['exit']}"
            f"{'  TRACEBACK' if m['traceback'] else ''}"
            f"{'' if m['expected'] else '  MISSING: ' + EXPECT[name]}"
        )
    print(
        "all rows within 2 s and 100 MiB, no traceback, evidence kept" if ok else "some rows FAIL"
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
