"""Benchmark: the first true-OOM rung on real launch scripts (issue 16).

For every case of tests/data/plan (real scripts of public training repositories and the configs
they name; sources in tests/data/plan/SOURCES.md), `runbook plan --rung halve_micro_batch`
against the plan a careful engineer would make (tests/data/plan/expect.json): a correct plan, a
correct refusal (the rung cannot apply, and the reason names what is missing), or wrong (a
refusal where a plan was due, other values, or a plan where a refusal was due). The target of
the issue: at least 80% correct plans among the scripts where the rung applies, every other one
refused with a reason, no wrong edit.

    python3 bench/plan_corpus.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.planning.offline import plan_script  # noqa: E402
from runbook.site import SiteConfig  # noqa: E402

DATA = REPO / "tests" / "data" / "plan"


def judge(case: str, want: dict, knobs) -> tuple[str, str]:
    d = DATA / case
    doc = plan_script((d / want["script"]).read_text(), want["script"], d, knobs)
    r = next(x for x in doc["rungs"] if x["id"] == "halve_micro_batch")
    if "refused" in want:
        if r["applicable"]:
            return "wrong", f"planned {r['values_after']} where a refusal was due"
        ok = want["refused"] in r["reason"]
        return ("refused" if ok else "wrong"), r["reason"][:100]
    if not r["applicable"]:
        return "wrong", f"refused: {r['reason'][:100]}"
    if r["values_after"] != want["values_after"]:
        return "wrong", f"{r['values_after']} instead of {want['values_after']}"
    return "planned", str(r["values_after"])


def main() -> None:
    expect = json.loads((DATA / "expect.json").read_text())
    knobs = SiteConfig().knobs
    t = time.perf_counter()
    results = {c: judge(c, w, knobs) for c, w in sorted(expect.items()) if not c.startswith("_")}
    seconds = time.perf_counter() - t
    for case, (verdict, detail) in results.items():
        print(f"{case:<22} {verdict:<8} {detail}")
    due = [c for c, w in expect.items() if not c.startswith("_") and "refused" not in w]
    planned = sum(1 for c in due if results[c][0] == "planned")
    refused = sum(1 for v, _ in results.values() if v == "refused")
    wrong = sum(1 for v, _ in results.values() if v == "wrong")
    print(
        f"{len(results)} scripts: {planned}/{len(due)} correct plans where the rung applies "
        f"({100 * planned / max(len(due), 1):.0f}%), {refused} correct refusals, {wrong} wrong; "
        f"{seconds * 1000 / len(results):.0f} ms per script"
    )


if __name__ == "__main__":
    main()
