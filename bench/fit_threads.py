"""Benchmark figure (issue 30, item 6): the fit against what real threads saw. Each record of
tests/data/fit_threads/records.py is a public thread's OOM message at a known batch size, with
the smaller batch sizes the thread says ran and still ran out. Each is replayed through the CLI
as an on-call runs it (`runbook diagnose --log F --micro-batch N [--grad-accum A] --json`).

Per record: the micro-batch runbook would resubmit with (`chosen`), whether it says that one
fits or falls back to halving without a prediction (`halved`), the candidates it says fit;
`under` (a batch it says fits that the thread saw run out: must be none) and `below_half` (a
batch the thread saw run that is more than twice the chosen one: must be none).

    python3 bench/fit_threads.py [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "tests" / "data" / "fit_threads" / "records.py"


def threads() -> list[dict]:
    spec = importlib.util.spec_from_file_location("fit_thread_records", RECORDS)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.THREADS


def replay(t: dict) -> dict:
    """One record through `runbook diagnose`: its row of the table."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "oom.log"
        log.write_text(t["text"] + "\n")
        argv = [sys.executable, "-m", "runbook", "diagnose", "--log", str(log), "--json"]
        argv += ["--micro-batch", str(t["micro_batch"])]
        argv += ["--grad-accum", str(t["grad_accum"])] if t.get("grad_accum") else []
        done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False)
    d = json.loads(done.stdout)
    fit = d.get("fit") or {}
    chosen = fit.get("micro_batch")
    said_fit = [c["micro_batch"] for c in fit.get("candidates", []) if c["fits"]]
    return {
        "id": t["id"],
        "url": t["url"],
        "verdict": d.get("verdict"),
        "from_micro_batch": t["micro_batch"],
        "chosen": chosen,
        "halved": fit.get("halved"),
        "source": fit.get("source"),
        "said_fit": said_fit,
        "works": t["works"],
        "fails": t["fails"],
        "under": [m for m in t["fails"] if m in said_fit],
        "below_half": [w for w in t["works"] if chosen and 2 * chosen < w],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON document")
    a = ap.parse_args()
    rows = [replay(t) for t in threads()]
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        "record                 from  chose  halved  says fits      ran     ran out  under  <half"
    )
    for r in rows:
        print(
            f"{r['id'][4:]:<22} {r['from_micro_batch']:>4}  {str(r['chosen'] or '-'):>5}  "
            f"{str(bool(r['halved'])):>6}  {str(r['said_fit'][:4]):<13} {str(r['works']):<7} "
            f"{str(r['fails']):<8} {len(r['under']):>5}  {len(r['below_half']):>5}"
        )
    fitted = [r for r in rows if r["chosen"]]
    print(
        f"\n{len(rows)} threads, {len(fitted)} fitted; under-predictions "
        f"{sum(len(r['under']) for r in rows)}, below half of a batch that ran "
        f"{sum(len(r['below_half']) for r in rows)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
