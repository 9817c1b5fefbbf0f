"""Score the parsers and the classifier on whole corpora, by record kind, with the same checks the
corpus tests assert (tests/corpus_checks.py).

Columns: ../shared/corpus ("shared"), and runbook's own corpus (tests/data/corpus) split by each
record's fixed `split`: "tune" (the half the code was tuned on) and "measure" (the half kept for
measuring). The zoo's rows (tests/data/zoo) add "unseen" (frameworks recorded before the rules
of issue 64 were written, scored before and after) and "named" (the four frameworks issue 64
measured on its own logs, recorded here after those rules). A record counts when its check finds no mismatch. The verdict row scores labelled OOM
records whose message carries numbers: runbook's verdict from the message alone against what the
thread reported fixed it (DESIGN §3: evidence, not ground truth).

    python3 bench/corpus_score.py [--json] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import corpus_checks as cc  # noqa: E402
from tests.conftest import corpus_dir  # noqa: E402


def score(records: list[dict], check) -> tuple[int, int, list[str]]:
    misses = [r["id"] for r in records if check(r)]
    return len(records) - len(misses), len(records), misses


def phase_rows() -> dict[str, dict[str, list]]:
    """where / when / cause on the real tracebacks of tests/data/phase (all read while the frame
    table was written: a tune set), through `diagnose`'s own path (scan, classify). cause counts
    only records whose thread confirmed one."""
    from runbook.diagnosis import Evidence, classify
    from runbook.evidence.launcher_log import scan
    from runbook.playbook import load
    from tests.data.phase.records import RECORDS

    t = load().thresholds
    got = {}
    for r in RECORDS:
        d = classify(Evidence(launch=scan(r["text"])), t)
        p = d.phase.contract() if d.phase is not None else {"where": None, "when": None}
        got[r["id"]] = (p["where"], p["when"], d.cause.name if d.cause else "unknown")
    out: dict[str, dict[str, list]] = {}
    for k, key in enumerate(("where", "when", "cause")):
        recs = [r for r in RECORDS if key != "cause" or r["answer"]["cause"]]
        miss = [r["id"] for r in recs if got[r["id"]][k] != r["answer"][key]]
        cell = [len(recs) - len(miss), len(recs), miss]
        out[f"phase-{key}"] = {"shared": [0, 0, []], "own-tune": cell, "own-measure": [0, 0, []]}
    # The excerpts cut before the message (tests/data/phase/frames.py): where and when only.
    from runbook.evidence import phase
    from tests.data.phase.frames import FRAME_RECORDS

    for key in ("where", "when"):
        miss = []
        for r in FRAME_RECORDS:
            lines = r["text"].splitlines()
            p = phase.phase_of(lines, len(lines))
            if getattr(p, key) != r["answer"][key]:
                miss.append(r["id"])
        cell = [len(FRAME_RECORDS) - len(miss), len(FRAME_RECORDS), miss]
        out[f"frames-{key}"] = {"shared": [0, 0, []], "own-tune": cell, "own-measure": [0, 0, []]}
    out.update(zoo_rows())
    return out


def zoo_rows() -> dict[str, dict[str, list]]:
    """where / when / cause on the framework zoo (tests/data/zoo: real frameworks' logs, each
    ending in an OOM raised at a phase chosen when it was recorded; bench/zoo/README.md). A
    cause counts when it is one true of that phase (no false cause)."""
    from runbook.diagnosis import Evidence, classify
    from runbook.evidence.launcher_log import scan
    from runbook.playbook import load
    from tests.data.zoo.keys import records, source_of

    t = load().thresholds
    miss: dict[str, list[str]] = {"where": [], "when": [], "cause": []}
    recs = records()
    for r in recs:
        r["id"] = f"{r['split']}:{r['id']}"
        # Read as diagnose reads a job: its log, and its program's source (the batch line that
        # ran it names the file).
        d = classify(Evidence(launch=scan(r["text"]), source=source_of(r["framework"])), t)
        p = d.phase.contract() if d.phase is not None else {"where": None, "when": None}
        cause = d.cause.name if d.cause else "unknown"
        for key, ok in (
            ("where", p["where"] == r["answer"]["where"]),
            ("when", p["when"] == r["answer"]["when"]),
            ("cause", cause in r["answer"]["causes"]),
        ):
            if not ok:
                miss[key].append(r["id"])
    out = {}
    for key, m in miss.items():
        cells = {"shared": [0, 0, []]}
        for split in ("tune", "measure", "unseen", "named"):
            n = sum(r["split"] == split for r in recs)
            missed = [i for i in m if i.startswith(split + ":")]
            cells[f"own-{split}"] = [n - len(missed), n, missed]
        out[f"zoo-{key}"] = cells
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON document")
    ap.add_argument("--misses", action="store_true", help="list the records that fail")
    args = ap.parse_args()
    from runbook.evidence.oom_message import parse

    columns = {
        "shared": lambda r: True,
        "own-tune": lambda r: r.get("split") == "tune",
        "own-measure": lambda r: r.get("split") == "measure",
    }
    rows: dict[str, dict[str, list]] = {}
    for name, kind in cc.FILES.items():
        shared = cc.read(corpus_dir() / name)
        own = cc.read(cc.OWN / name)
        rows[kind] = {}
        for col, keep in columns.items():
            recs = shared if col == "shared" else [r for r in own if keep(r)]
            rows[kind][col] = list(score(recs, cc.CHECKS[kind]))
    rows["verdict"] = {}
    for col, keep in columns.items():
        base = corpus_dir() if col == "shared" else cc.OWN
        recs = [
            r
            for r in cc.labelled(cc.read(base / "oom_messages.jsonl"))
            if keep(r) and (m := parse(r["text"])) and m.tried_mib is not None
        ]
        rows["verdict"][col] = list(score(recs, cc.verdict))
    rows.update(phase_rows())
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    shown = None
    for kind, cols in rows.items():
        if list(cols) != shown:  # the zoo's rows have columns of their own (its splits)
            shown = list(cols)
            print(f"{'kind':<10}" + "".join(f"{c:>18}" for c in shown))
        cells = []
        for ok, n, _ in cols.values():
            cells.append(f"{ok}/{n} {100 * ok / n:5.1f}%" if n else "-")
        print(f"{kind:<10}" + "".join(f"{c:>18}" for c in cells))
        if args.misses:
            for col, (_, _, missed) in cols.items():
                if missed:
                    print(f"{'':<10}  {col} misses: {', '.join(missed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
