"""Benchmark: runbook's plan on real repositories' launch jobs it was not built on (issue 54,
item 7). The keys (bench/plan_real.json) are committed; the repositories' files are not: each
job's folder is extracted at its commit into an ignored cache (bench/out/plan_real) from a
local mirror of the repository (`--mirrors DIR`: DIR/OWNER+NAME/repo, a bare git directory, as
the tool library's fetch leaves it), or cloned from GitHub with `--clone`.

A job is the command its repository's documents give, run from the folder they give, written
as a job script into the cache beside the repository's own files. Scored as bench/plan_corpus.py
scores: `planned` (the values an engineer would set), `refused` for the true reason, or `wrong`.

    python3 bench/plan_real.py [--mirrors ../.mirror] [--clone] [--only CASE] [--ask PYTHON]

With `--ask PYTHON` (an interpreter of your own, with whatever the repositories need that you
could install), each plan is also checked against the program's own answer (runbook plan
--ask): agreed, disagreed (the rung refused), no answer (the program did not start), or not
asked (nothing the program can answer for).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.plan_corpus import judge  # noqa: E402
from runbook.site import SiteConfig  # noqa: E402

KEYS = REPO / "bench" / "plan_real.json"
CACHE = REPO / "bench" / "out" / "plan_real"


def _git_dir(key: dict, mirrors: Path, clone: bool) -> Path | None:
    owner, name = key["repo"].split("/")
    mirror = mirrors / f"{owner}+{name}" / "repo"
    if mirror.is_dir():
        return mirror
    if not clone:
        return None
    target = CACHE / "clones" / f"{owner}+{name}.git"
    if not target.exists():
        url = f"https://github.com/{key['repo']}.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none", url, str(target)],
                       check=True)  # fmt: skip
    return target


# What a plan may read: sources, scripts, configs. Data, weights and pictures stay out (a mirror
# may not even hold them: it lists its largest files without their contents).
_KEPT = (
    ".py",
    ".sh",
    ".slurm",
    ".sbatch",
    ".yaml",
    ".yml",
    ".json",
    ".toml",
    ".cfg",
    ".ini",
    ".txt",
)
_MAX_BYTES = 1 << 20


def _extract(git: Path, key: dict, root: Path) -> None:
    ls = ["git", "--git-dir", str(git), "ls-tree", "-r", "-l", key["commit"]]
    if key["tree"]:
        ls.append(key["tree"])
    for line in subprocess.run(ls, check=True, capture_output=True, text=True).stdout.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, obj, size = meta.split()
        if kind != "blob" or not path.endswith(_KEPT) or not size.isdigit():
            continue
        if int(size) > _MAX_BYTES or mode == "120000":  # big files and links are not read
            continue
        blob = subprocess.run(["git", "--git-dir", str(git), "cat-file", "blob", obj],
                              capture_output=True)  # fmt: skip
        if blob.returncode != 0:
            continue  # listed, not held
        out = root / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob.stdout)
        if mode == "100755":
            out.chmod(0o755)


def materialize(case: str, key: dict, mirrors: Path, clone: bool) -> Path | None:
    """The job's folder of the repository at its commit, and the job script written into it."""
    root = CACHE / case
    if not (root / ".extracted").exists():
        git = _git_dir(key, mirrors, clone)
        if git is None:
            return None
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        _extract(git, key, root)
        (root / ".extracted").write_text(key["commit"])
    cwd = root / key["cwd"]
    (cwd / "runbook_job.sh").write_text(f"#!/bin/bash\n{key['job']}\n")
    return cwd


def _kind(expect: dict, verdict: str, detail: str) -> tuple[str, str]:
    """judge's verdict split as the issue counts: a refusal where a plan was due (`missed`) or
    for another reason than the true one (`reason`) is no wrong edit; a plan where a refusal was
    due, or other values, is (`wrong`)."""
    if verdict != "wrong":
        return verdict, detail
    if "refused" not in expect and detail.startswith("refused:"):
        return "missed", detail[len("refused: ") :]
    if "refused" in expect and not detail.startswith("planned "):
        return "reason", detail
    return "wrong", detail


def _asked(python: str, keys: dict, results: dict, knobs) -> None:
    """Each planned job's plan checked against its program's own answer (planning.ask)."""
    import os

    from runbook.planning.offline import plan_script

    tally: dict[str, list[str]] = {}
    for case, (verdict, _) in results.items():
        if verdict != "planned":
            continue
        cwd = CACHE / case / keys[case]["cwd"]
        env = {"PATH": os.environ.get("PATH", ""), "CUDA_VISIBLE_DEVICES": "",
               "PYTHONDONTWRITEBYTECODE": "1", "HOME": os.environ.get("HOME", "/")}  # fmt: skip

        def run(argv, cwd=cwd, env=env):
            t0 = time.perf_counter()
            try:
                r = subprocess.run([python, *argv[1:]], cwd=cwd, env=env, capture_output=True,
                                   text=True, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
            except subprocess.TimeoutExpired:
                return 124, "", "timed out", 60.0
            return r.returncode, r.stdout, r.stderr, time.perf_counter() - t0

        text = (cwd / "runbook_job.sh").read_text()
        doc = plan_script(text, "runbook_job.sh", cwd, knobs, only="halve_micro_batch",
                          ask=(python, run))  # fmt: skip
        r = doc["rungs"][0]
        said = [c for c in r.get("checks", []) if c.startswith("asked the program")]
        kind = (
            "disagreed" if not r["applicable"] else
            "not asked" if not said else
            "no answer" if "no answer" in said[0] or "could not be run" in said[0] else "agreed"
        )  # fmt: skip
        tally.setdefault(kind, []).append(case)
        detail = (said[0] if said else r.get("reason", ""))[:160]
        print(f"  ask {case:<24} {kind:<10} {detail}")
    print("  asked: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(tally.items())))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=REPO.parent / ".mirror")
    ap.add_argument("--clone", action="store_true", help="clone what no mirror holds")
    ap.add_argument("--only", action="append")
    ap.add_argument("--ask", metavar="PYTHON", help="check each plan against its program")
    a = ap.parse_args()
    keys = {k: v for k, v in json.loads(KEYS.read_text()).items() if not k.startswith("_")}
    knobs = SiteConfig().knobs
    results: dict[str, tuple[str, str]] = {}
    t = time.perf_counter()
    for case, key in sorted(keys.items()):
        if a.only and case not in a.only:
            continue
        cwd = materialize(case, key, a.mirrors, a.clone)
        if cwd is None:
            results[case] = ("missing", f"no mirror of {key['repo']} (--mirrors, or --clone)")
            continue
        want = {"script": "runbook_job.sh", **key["expect"]}
        results[case] = (
            judge(cwd.parent, cwd.name, want, knobs)
            if key["cwd"]
            else judge(cwd.parent, cwd.name, want, knobs)
        )
    seconds = time.perf_counter() - t
    results = {c: _kind(keys[c]["expect"], v, d) for c, (v, d) in results.items()}
    if a.ask:
        _asked(a.ask, keys, results, knobs)
    for case, (verdict, detail) in results.items():
        print(f"{case:<24} {verdict:<8} {keys[case]['family']}: {detail}")
    scored = {c: v for c, (v, _) in results.items() if v != "missing"}
    n = {
        k: sum(v == k for v in scored.values())
        for k in ("planned", "refused", "missed", "reason", "wrong")
    }
    due = sum("refused" not in keys[c]["expect"] for c in scored)
    right = n["planned"] + n["refused"]
    for split in ("tune", "measure"):
        part = {c: v for c, v in scored.items() if keys[c].get("split", "tune") == split}
        ok = sum(v in ("planned", "refused") for v in part.values())
        wrong_here = sum(v == "wrong" for v in part.values())
        print(f"  {split}: {ok}/{len(part)} right, {wrong_here} wrong edits")
    print(
        f"{len(scored)} real jobs: {right} right ({100 * right / max(len(scored), 1):.0f}%): "
        f"{n['planned']}/{due} planned where a plan was due, {n['refused']} refused for the true "
        f"reason; {n['missed']} refused where a plan was due, {n['reason']} refused for another "
        f"reason; {n['wrong']} wrong edits; {len(results) - len(scored)} missing; "
        f"{seconds * 1000 / max(len(scored), 1):.0f} ms per job"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
