"""Benchmark: the first true-OOM rung on launch scripts in public repositories' shapes (issue 16).

For every case of tests/data/plan (scripts and the configs they name, written here in the shapes
of public training repositories' files, with their batch figures: tests/data/plan/SOURCES.md), `runbook plan --rung halve_micro_batch`
against the plan a careful engineer would make (tests/data/plan/expect.json): a correct plan, a
correct refusal (the rung cannot apply, and the reason names what is missing), or wrong (a
refusal where a plan was due, other values, or a plan where a refusal was due). The target of
the issue: at least 80% correct plans among the scripts where the rung applies, every other one
refused with a reason, no wrong edit.

    python3 bench/plan_corpus.py                 # repositories' shapes (tests/data/plan)
    python3 bench/plan_corpus.py --set families  # fixtures in real repositories' shapes,
                                                 # by where the knob lives (tests/data/plan_families)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.planning.offline import plan_script  # noqa: E402
from runbook.site import SiteConfig  # noqa: E402

SETS = {
    "real": REPO / "tests" / "data" / "plan",
    "families": REPO / "tests" / "data" / "plan_families",
}


def judge(data: Path, case: str, want: dict, knobs) -> tuple[str, str]:
    """`planned` (the change an engineer would make, where they would make it), `refused` (with
    the reason due), or `wrong`. A case's `rung` (default halve_micro_batch) is the one judged;
    `first_refused`: halve_micro_batch must be refused first with that reason (micro-batch 1);
    `adds`: what the patched script must hold; `copy`: the config copy the plan writes."""
    d = data / case
    doc = plan_script(
        (d / want["script"]).read_text(), want["script"], d, knobs, args=want.get("args")
    )
    by_id = {x["id"]: x for x in doc["rungs"]}
    if "first_refused" in want:
        first = by_id["halve_micro_batch"]
        if first["applicable"] or want["first_refused"] not in first["reason"]:
            return "wrong", f"halve_micro_batch: {first.get('reason') or first['values_after']}"
    r = by_id[want.get("rung", "halve_micro_batch")]
    if "refused" in want:
        if r["applicable"]:
            return "wrong", f"planned {r['values_after']} where a refusal was due"
        ok = want["refused"] in r["reason"]
        return ("refused" if ok else "wrong"), r["reason"][:100]
    if not r["applicable"]:
        return "wrong", f"refused: {r['reason'][:100]}"
    if "values_after" in want and r["values_after"] != want["values_after"]:
        return "wrong", f"{r['values_after']} instead of {want['values_after']}"
    script_diff = r["changes"][0]["diff"]
    if want.get("adds") and want["adds"] not in script_diff:
        return "wrong", f"the script does not get {want['adds']!r}"
    copies = [c["new_file"] for c in r["changes"][1:]]
    if want.get("copy") and copies != [want["copy"]]:
        return "wrong", f"copies {copies} instead of {want['copy']}"
    return "planned", str(r["values_after"] or want.get("adds"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(SETS), default="real")
    data = SETS[ap.parse_args().set]
    expect = json.loads((data / "expect.json").read_text())
    knobs = SiteConfig().knobs
    t = time.perf_counter()
    results = {
        c: judge(data, c, w, knobs) for c, w in sorted(expect.items()) if not c.startswith("_")
    }
    seconds = time.perf_counter() - t
    for case, (verdict, detail) in results.items():
        family = expect[case].get("family", "")
        print(f"{case:<22} {verdict:<8} {family + ': ' if family else ''}{detail}")
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
