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

Then the same for bench/gpu_families.py's recordings (DIR/families): per model family, the
fit from an OOM at twice the largest micro-batch that ran, against that largest.

    python3 bench/gpu_fit.py [DIR] [--json]
"""

from __future__ import annotations

import argparse
import functools
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


_BOUNDARY = re.compile(r"RUNBOOK_INSTRUMENT mem .*\ballocated=(\d+) peak=(\d+)")


def _fresh_runs(folder: Path, family: str) -> dict[int, dict]:
    """{micro-batch: {"ran", "peak_mib", "boundary_mib"}} of a family's fresh runs."""
    out = {}
    for path in folder.glob(f"fit-{family}-m*.log"):
        text = path.read_text()
        points = [(int(a), int(b)) for a, b in _BOUNDARY.findall(text)]
        out[int(path.stem.rsplit("-m", 1)[1])] = {
            "ran": "OutOfMemoryError" not in text,
            "peak_mib": max(b for _, b in points) / 2**20 if points else None,
            "boundary_mib": points[-1][0] / 2**20 if points else None,
        }
    return dict(sorted(out.items()))


def _real(runs: dict, largest: int, outside: float, m: int) -> float:
    """The real peak at m, with what was outside PyTorch at the failure: measured where m ran,
    else on the line from the step boundary's allocation to the largest's peak (a lower bound:
    the gradients are not held at the boundary)."""
    if m in runs and runs[m]["ran"]:
        return runs[m]["peak_mib"] + outside
    top = runs[largest]
    base = top["boundary_mib"]
    return base + m * (top["peak_mib"] - base) / largest + outside


def families(folder: Path, grad_accums=(None, 6)) -> list[dict]:
    """bench/gpu_families.py's recordings: per family, the largest micro-batch that ran two steps
    in a fresh process, and the fit from each OOM well past it (at 1.3x and 2x: `runbook
    diagnose`, with no accumulation and with each of `grad_accums`): its choice, its predicted peak, the real peak
    at the choice (`_real`), the largest candidate whose real peak is under the fit's limit,
    and the largest micro-batch the fit's line says fits the card (no margin, no divisor)."""
    rows = []
    for search in sorted(folder.glob("search-*.json")):
        found = json.loads(search.read_text())
        family = found["family"]
        runs = _fresh_runs(folder, family)
        largest = max((m for m, r in runs.items() if r["ran"]), default=None)
        if largest is None:
            continue
        # The OOMs well past the edge (1.3x and 2x the largest that ran), not those just past it
        over = [m for m, r in runs.items() if not r["ran"] and m > 1.1 * largest]
        for failed, accum in ((m, a) for m in over for a in grad_accums):
            argv = ["--log", str(folder / f"fit-{family}-m{failed}.log"), "--json"]
            argv += ["--micro-batch", str(failed)] + (["--grad-accum", str(accum)] if accum else [])
            d = _cli(argv)
            fit = d["fit"]
            real = functools.partial(_real, runs, largest, fit["outside_mib"])
            per = (fit["needed_mib"] - fit["fixed_mib"][1]) / failed
            room = fit["card_mib"] - fit["fixed_mib"][1]
            chosen = fit["micro_batch"]
            rows.append(
                {
                    "family": family,
                    "params": found["params"],
                    "largest_in_place": found["largest_ran"],
                    "largest_ran": largest,
                    "smallest_out": min((m for m, r in runs.items() if not r["ran"]), default=None),
                    "from_micro_batch": failed,
                    "overshoot": round(failed / largest, 2),
                    "halved": fit["halved"],
                    "halving": max(
                        (
                            c["micro_batch"]
                            for c in fit["candidates"]
                            if 2 * c["micro_batch"] <= failed
                        ),
                        default=None,
                    ),
                    "grad_accum": accum,
                    "where": d["phase"]["where"],
                    "step_factor": fit["step_factor"],
                    "chosen": chosen,
                    "predicted_mib": fit["predicted_peak_mib"],
                    "real_mib": round(real(chosen), 1) if chosen else None,
                    "real_at_largest_mib": round(real(largest), 1),
                    "limit_mib": fit["limit_mib"],
                    "best_under_limit": max(
                        (
                            c["micro_batch"]
                            for c in fit["candidates"]
                            if c["micro_batch"] <= largest
                            and real(c["micro_batch"]) <= fit["limit_mib"]
                        ),
                        default=None,
                    ),
                    "line_fits_card": int(room / (per * fit["step_factor"])),
                    "line_fits_card_unscaled": int(room / per),
                }
            )
    return rows


def _cli(argv: list[str]) -> dict:
    argv = [sys.executable, "-m", "runbook", "diagnose", *argv]
    return json.loads(subprocess.run(argv, capture_output=True, text=True, cwd=REPO).stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=REPO / "tests" / "data" / "gpu")
    ap.add_argument("--json", action="store_true", help="one JSON document")
    a = ap.parse_args()
    runs, rows = measured(a.folder), figures(a.folder)
    fams = families(a.folder / "families")
    if a.json:
        print(json.dumps({"runs": runs, "fits": rows, "families": fams}, indent=1))
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
    print()
    print("family       ran  from  accum  factor  chose  predicted   real  best  line (unscaled)")
    for r in sorted(fams, key=lambda r: (r["family"], r["from_micro_batch"])):
        print(
            f"{r['family']:<11} {r['largest_ran']:>4}  {r['from_micro_batch']:>4}  "
            f"{str(r['grad_accum'] or '-'):>5}  {r['step_factor']:>6}  {str(r['chosen']):>5}  "
            f"{r['predicted_mib'] or 0:>9.0f}  {r['real_mib'] or 0:>6.0f}  "
            f"{str(r['best_under_limit']):>4}  {r['line_fits_card']} "
            f"({r['line_fits_card_unscaled']})"
            + ("  RUNS OUT" if r["chosen"] and r["chosen"] > r["largest_ran"] else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
