"""Benchmark: the micro-batch fix on programs written here on real parser libraries (issue 63),
each judged by what the program itself parsed, never by runbook's own plan.

Each folder of tests/data/parsers holds a small program on one parser library, its configs and
its job script (`job.sbatch`); the program prints `RUNS micro=M accum=A` once its parser has
handed it the configuration it would train with. For each job, `runbook plan --rung
halve_micro_batch` runs through the CLI (with `--ask PYTHON`, and without it: the static
reading), and the training command of the script it writes is then run plainly (no hook) with
the real library:

- right: the program's own micro-batch is smaller and micro x accumulation is unchanged;
- wrong: a plan was made and the program runs anything else (the global batch changed, the
  micro-batch unchanged, the program no longer starts);
- refused: no plan.

    python3 bench/parser_fix.py [--python PYTHON] [--only NAME] [--json]

PYTHON: an interpreter with the libraries (tests/data/parsers/README.md lists them); default
this one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAMS = REPO / "tests" / "data" / "parsers"
VERDICTS = ("right", "wrong", "refused", "unknown")
_RUNS = re.compile(r"^RUNS micro=(\d+) accum=(\d+)", re.M)


def _training_words(script: str) -> list[str]:
    """The training command's words from its entry on (`train.py ...`, `-m pkg.train ...`),
    whichever launcher runs it (srun python, torchrun, accelerate launch)."""
    for line in script.replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        words = shlex.split(line.split(">")[0])
        for i, w in enumerate(words):
            if w.endswith(".py") or (w == "-m" and i + 1 < len(words) and words[0] != "python"):
                return words[i:]
    return []


def runs(
    folder: Path, script: str, python: str, files: dict | None = None
) -> tuple[int, int] | str:
    """(micro, accum) the program prints when its script's training command runs, or why not.
    `files`: the config copies the plan writes beside the script (name -> text)."""
    words = _training_words(script)
    if not words:
        return "no training command"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as tmp:  # a copy: what a program writes (Hydra) goes there
        job = Path(tmp) / "job"
        shutil.copytree(folder, job)
        for name, text in (files or {}).items():
            (job / name).write_text(text)
        r = subprocess.run([python, *words], cwd=job, env=env, capture_output=True, text=True,
                           timeout=300, check=False)  # fmt: skip
    m = _RUNS.search(r.stdout)
    return (int(m[1]), int(m[2])) if m else f"exit {r.returncode}: {r.stderr.strip()[-200:]}"


def plan(folder: Path, python: str, ask: bool) -> tuple[dict | None, str, float]:
    """(the files the plan writes, name -> text, or None; the reason or the checks; seconds)
    from `runbook plan`."""
    argv = [sys.executable, "-m", "runbook", "plan", "job.sbatch", "--rung", "halve_micro_batch",
            "--json"] + (["--ask", python] if ask else [])  # fmt: skip
    t0 = time.monotonic()
    r = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=900, check=False)
    secs = time.monotonic() - t0
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        return None, f"runbook plan printed no JSON (exit {r.returncode}): {r.stderr[-300:]}", secs
    rung = doc["rungs"][0]
    if not rung["applicable"]:
        return None, rung["reason"], secs
    files = {c["new_file"]: _apply(folder / c["file"], c["diff"]) for c in rung["changes"]}
    return files, "; ".join(rung["checks"]), secs


def _apply(path: Path, diff: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "f"
        copy.write_text(path.read_text())
        subprocess.run(["patch", "-s", str(copy)], input=diff, text=True, check=True)
        return copy.read_text()


def judge(folder: Path, python: str, ask: bool) -> dict:
    old = (folder / "job.sbatch").read_text()
    before = runs(folder, old, python)
    files, said, secs = plan(folder, python, ask)
    row = {"program": folder.name, "asked": ask, "seconds": round(secs, 1), "said": said[:400]}
    if files is None:
        return {**row, "verdict": "refused"}
    after = runs(folder, files.get("job.sbatch", old), python, files)
    row |= {"before": before, "after": after}
    if isinstance(before, str):  # the job itself does not start here: nothing to judge by
        return {**row, "verdict": "unknown"}
    if isinstance(after, str):
        return {**row, "verdict": "wrong"}
    (m0, a0), (m1, a1) = before, after
    ok = m1 < m0 and m0 * a0 == m1 * a1
    return {**row, "verdict": "right" if ok else "wrong"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    folders = sorted(p for p in PROGRAMS.iterdir() if (p / "job.sbatch").is_file())
    folders = [f for f in folders if a.only in (None, f.name)]
    rows = [judge(f, a.python, ask) for f in folders for ask in (True, False)]
    if a.json:
        print(json.dumps(rows, indent=1))
    for ask in (True, False):
        mine = [r for r in rows if r["asked"] is ask]
        count = {v: sum(r["verdict"] == v for r in mine) for v in VERDICTS}
        secs = sorted(r["seconds"] for r in mine)
        print(f"{'with --ask' if ask else 'static   '}: {count['right']}/{len(mine)} right, "
              f"{count['wrong']} wrong, {count['refused']} refused, {count['unknown']} unknown; plan "
              f"median "
              f"{secs[len(secs) // 2]:.1f} s, max {secs[-1]:.1f} s")  # fmt: skip
        for r in mine:
            if r["verdict"] != "right" and not a.json:
                print(f"  {r['program']}: {r['verdict']}: {r['said'][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
