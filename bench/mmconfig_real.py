"""Benchmark: runbook's reading of OpenMMLab Python configs (jobfiles.mmconfig) against mmengine's
own `Config.fromfile`, on real repositories' configs (issue 54: the value in force is what the
program ends with). The configs are those bench/plan_real.py extracts into its ignored cache
(run it first); mmengine runs in a venv of your own (`--python`: its interpreter), never in
runbook's. A sample of each repository's configs (not its _base_ files) is read both ways:
train_dataloader.batch_size and optim_wrapper.accumulative_counts.

    python3 bench/mmconfig_real.py --python /path/to/venv/bin/python [--per-repo 150]

Scored: agree (the same two values), unknown (runbook read no value where mmengine did: a
refusal, never a wrong edit), unread (runbook read nothing of the file), wrong (runbook read a
value mmengine does not end with: a wrong edit). mmengine's own failures are left out."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.jobfiles import mmconfig  # noqa: E402

CACHE = REPO / "bench" / "out" / "plan_real"
CASES = ("mmpretrain-resnet50", "mmpose-hrnet-w32", "mmaction2-tsn-autoscale")
KEYS = ("train_dataloader.batch_size", "optim_wrapper.accumulative_counts")

# Run in the venv with mmengine: prints {file: [batch, accumulation] or ["error", name]}.
THEIRS = f"""
import json, os, sys
KEYS = {KEYS!r}
from mmengine.config import Config
out = {{}}
for f in sys.argv[2:]:
    try:
        c = Config.fromfile(os.path.join(sys.argv[1], f))
        got = []
        for key in KEYS:
            first, *rest = key.split(".")
            v = c.get(first)
            for part in rest:
                v = v.get(part) if isinstance(v, dict) else None
            got.append(v)
        out[f] = got
    except Exception as e:
        out[f] = ["error", type(e).__name__]
print(json.dumps(out))
"""


def _score(root: Path, files: list[str], theirs: dict) -> dict:
    def read(name: str) -> str | None:
        try:
            return (root / name).read_text()
        except (OSError, UnicodeDecodeError):
            return None

    n = {"agree": 0, "unknown": 0, "unread": 0, "wrong": 0, "their_errors": 0}
    wrong = []
    for f in files:
        if theirs[f][:1] == ["error"]:
            n["their_errors"] += 1
            continue
        c = mmconfig.read(f, read)
        if isinstance(c.values, mmconfig.Unknown):
            n["unread"] += 1
            continue
        ours = [mmconfig.get(c.values, k)[0] for k in KEYS]
        if ours == theirs[f]:
            n["agree"] += 1
        elif any(isinstance(o, mmconfig.Unknown) for o in ours) and all(
            isinstance(o, mmconfig.Unknown) or o == t for o, t in zip(ours, theirs[f], strict=True)
        ):
            n["unknown"] += 1
        else:
            n["wrong"] += 1
            wrong.append((f, [repr(o) for o in ours], theirs[f]))
    return {**n, "wrong_files": wrong}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="an interpreter with mmengine installed")
    ap.add_argument("--per-repo", type=int, default=150)
    a = ap.parse_args()
    total: dict = {}
    for case in CASES:
        root = CACHE / case
        if not (root / "configs").is_dir():
            print(f"{case}: not extracted; run python3 bench/plan_real.py --only {case} first")
            return 2
        files = sorted(
            str(p.relative_to(root))
            for p in (root / "configs").rglob("*.py")
            if "_base_" not in p.parts
        )
        random.Random(1).shuffle(files)
        files = files[: a.per_repo]
        run = subprocess.run([a.python, "-c", THEIRS, str(root), *files],
                             capture_output=True, text=True, check=True)  # fmt: skip
        got = _score(root, files, json.loads(run.stdout.splitlines()[-1]))
        print(f"{case}: " + ", ".join(f"{k} {v}" for k, v in got.items() if k != "wrong_files"))
        for w in got.pop("wrong_files"):
            print(f"  wrong: {w}")
        total = {k: total.get(k, 0) + v for k, v in got.items()}
    print("all: " + ", ".join(f"{k} {v}" for k, v in total.items()))
    return 1 if total.get("wrong") else 0


if __name__ == "__main__":
    raise SystemExit(main())
