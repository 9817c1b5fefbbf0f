"""Benchmark figure (issue 30, item 7): the fit's predicted peak against the peak a real GPU
measured, on bench/gpu_record.py's recordings (tests/data/gpu: an H100, a 216.7 M-parameter
transformer, micro-batches 1 to 80 ran, 96, 112 and 128 ran out).

For each micro-batch that ran out, `runbook diagnose --log fit-m<N>.log --micro-batch N --json`
(the CLI, as an on-call runs it) without the parameter count and with it (`--params`, the
count the job printed), then for the micro-batch the fit chose: its predicted peak, and the peak
measured at that micro-batch: PyTorch's largest allocation peak of a step (runbook.instrument's
`peak=`) plus what the failure's process held outside PyTorch, or, where that micro-batch was
not run, the line between the two measured micro-batches around it (said so: `interpolated`).
Under-predicted: the fit said it fits and the recordings say it ran out.

    python3 bench/gpu_fit.py [DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_MEM = re.compile(r"RUNBOOK_INSTRUMENT mem .*\bpeak=(\d+) reserved=(\d+)")
_PARAMS = re.compile(r"^params=(\d+) ")


def measured(folder: Path) -> dict[int, dict]:
    """{micro-batch: {"peak_mib", "reserved_mib", "oom", "params"}} from the fit-m<N>.log files."""
    out = {}
    for path in folder.glob("fit-m*.log"):
        m = int(path.stem.split("-m", 1)[1])
        text = path.read_text()
        points = [(int(a), int(b)) for a, b in _MEM.findall(text)]
        params = next((int(p.group(1)) for p in map(_PARAMS.match, text.splitlines()) if p), None)
        out[m] = {
            "peak_mib": max(a for a, _ in points) / 2**20 if points else None,
            "reserved_mib": max(b for _, b in points) / 2**20 if points else None,
            "oom": "OutOfMemoryError" in text,
            "params": params,
        }
    return dict(sorted(out.items()))


def _measured_at(runs: dict[int, dict], m: int) -> tuple[float | None, str]:
    """The allocation peak at micro-batch m: measured, or on the line between the measured
    micro-batches around it; None where m is past the last one that ran."""
    ran = {k: v["peak_mib"] for k, v in runs.items() if not v["oom"] and v["peak_mib"]}
    if m in ran:
        return ran[m], "measured"
    below = max((k for k in ran if k < m), default=None)
    above = min((k for k in ran if k > m), default=None)
    if below is None or above is None:
        return None, "not run"
    share = (m - below) / (above - below)
    return ran[below] + share * (ran[above] - ran[below]), f"interpolated {below}..{above}"


def _diagnose(folder: Path, m: int, params: int | None) -> dict:
    argv = [sys.executable, "-m", "runbook", "diagnose", "--log", str(folder / f"fit-m{m}.log")]
    argv += ["--micro-batch", str(m), "--json"] + (["--params", str(params)] if params else [])
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(done.stdout)


def figures(folder: Path) -> list[dict]:
    runs = measured(folder)
    fitting = [k for k, v in runs.items() if not v["oom"]]
    failed_at = min((k for k, v in runs.items() if v["oom"]), default=None)
    rows = []
    for m, run in runs.items():
        if not run["oom"]:
            continue
        for params in (None, run["params"]):
            d = _diagnose(folder, m, params)
            fit = d["fit"] or {}
            chosen = fit.get("micro_batch")
            oom = d["oom"] or {}
            outside = (oom.get("process_mib") or 0.0) - (oom.get("reserved_mib") or 0.0)
            at, how = _measured_at(runs, chosen) if chosen else (None, "none chosen")
            real = at + max(outside, 0.0) if at is not None else None
            predicted = fit.get("predicted_peak_mib")
            rows.append(
                {
                    "from_micro_batch": m,
                    "params_given": params is not None,
                    "source": fit.get("source"),
                    "range": fit.get("range"),
                    "chosen": chosen,
                    "largest_exact_that_ran": max((k for k in fitting if m % k == 0), default=None),
                    "predicted_mib": predicted,
                    "measured_mib": round(real, 1) if real is not None else None,
                    "measured_how": how,
                    "error": round((real - predicted) / predicted, 4)
                    if real is not None and predicted
                    else None,
                    "under_predicted": bool(chosen and failed_at and chosen >= failed_at),
                    "card_mib": fit.get("card_mib"),
                }
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=REPO / "tests" / "data" / "gpu")
    ap.add_argument("--json", action="store_true", help="one JSON document")
    a = ap.parse_args()
    runs, rows = measured(a.folder), figures(a.folder)
    if a.json:
        print(json.dumps({"runs": runs, "fits": rows}, indent=1))
        return 0
    print("micro-batch  allocation peak  reserved peak   (measured, MiB)")
    for m, r in runs.items():
        peak = f"{r['peak_mib']:.0f}" if r["peak_mib"] else "-"
        reserved = f"{r['reserved_mib']:.0f}" if r["reserved_mib"] else "-"
        print(f"{m:>11}  {peak:>15}  {reserved:>13}" + ("   ran out" if r["oom"] else ""))
    print()
    print("from  params  source                  chose  predicted  measured  error   how")
    for r in rows:
        err = f"{r['error']:+.1%}" if r["error"] is not None else "-"
        print(
            f"{r['from_micro_batch']:>4}  {'yes' if r['params_given'] else 'no':>6}  "
            f"{(r['source'] or '-'):<22}  {str(r['chosen'] or '-'):>5}  "
            f"{(r['predicted_mib'] or 0):>9.0f}  {(r['measured_mib'] or 0):>8.0f}  {err:>6}  "
            f"{r['measured_how']}" + ("  UNDER-PREDICTED" if r["under_predicted"] else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
