"""Every rung's plan on every job script the project holds, one file per script: the safety net of
a refactor of the rungs that must not change a plan (byte-identical before and after).

    python3 bench/plan_snapshot.py OUT_DIR      # write the snapshot of this checkout
    diff -r BEFORE_DIR AFTER_DIR               # the check: no output

Scripts: the launch scripts of tests/data/plan (with the configs and programs beside them),
tests/data/sbatch's scripts, the examples' and the tests' templates rendered as runbook renders
them (so the template path of every rung is planned too, and shrink_world on 2 and 4 nodes).
Each script: `plan_script` with every rung the registry knows (`runbook plan --rung`), and the
incident's walk (planning.ladder.plan) for every verdict of the playbook, plain and with each
cause's preference, with and without a thin pool's allocator.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook import cause as causes  # noqa: E402
from runbook import playbook, rungs  # noqa: E402
from runbook.errors import RunbookError  # noqa: E402
from runbook.planning import ladder  # noqa: E402
from runbook.planning.offline import plan_script  # noqa: E402
from runbook.planning.sbatch_patch import render  # noqa: E402
from runbook.site import SiteConfig  # noqa: E402

TEMPLATES = [
    REPO / "examples" / "train_oom" / "train.sbatch.j2",
    REPO / "tests/data/sbatch/train.sbatch.j2",
]
_DEMO = {
    "name": "demo",
    "program": "train.py",
    "steps": 20,
    "card_mib": 24000,
    "param_mib": 2000,
    "act_mib_per_sample": 900,
}
VARIABLES = [
    {**_DEMO, "nodes": 2, "ranks_per_node": 2, "micro_batch": 8, "grad_accum": 2, "mem_mib": 4000},
    {
        **_DEMO,
        "nodes": 4,
        "ranks_per_node": 1,
        "micro_batch": 6,
        "grad_accum": 3,
        "eval_batch": 4,
        "mem_mib": 3000,
    },
    {
        **_DEMO,
        "nodes": 1,
        "ranks_per_node": 1,
        "micro_batch": 1,
        "grad_accum": 1,
        "global_batch": 64,
        "mem_mib": 2000,
        "alloc_conf": "",
    },
]


def _scripts(tmp: Path):
    for case in sorted((REPO / "tests" / "data" / "plan").iterdir()):
        if case.is_dir():
            for s in sorted(case.glob("*.s*")):
                if s.is_file() and s.suffix in (".sh", ".slurm", ".sbatch"):
                    yield f"plan-{case.name}-{s.name}", s.read_text(), case
    for s in sorted((REPO / "tests" / "data" / "sbatch").glob("*.sbatch")):
        yield f"sbatch-{s.name}", s.read_text(), s.parent
    for t in TEMPLATES:
        if not t.exists():
            continue
        for i, v in enumerate(VARIABLES):
            v = {**v, "workdir": str(tmp)}
            try:
                text = render(str(t), v)
            except RunbookError as e:
                yield f"template-{t.parent.name}-{i}", f"# {e}\n", tmp
                continue
            yield f"template-{t.parent.name}-{i}", text, tmp


_CAUSE_NAMES = (
    "leak",
    "eval_batch",
    "eval_predictions",
    "optimizer_state",
    "checkpoint_map_location",
    "static_sizing",
)
_CAUSES = [None] + [causes.Cause(name, ["a test's reason"]) for name in _CAUSE_NAMES]


def _walks(script: str, knobs, pb) -> list:
    out = []
    for verdict in sorted(pb.ladder):
        for c in _CAUSES:
            for thin in (False, True):
                for nodes, capacity in ((None, None), (4, 3)):
                    try:
                        p = ladder.plan(
                            verdict,
                            pb.ladder,
                            script=script,
                            knobs=knobs,
                            tried=[],
                            node="node-1",
                            with_allocator=thin,
                            nodes=nodes,
                            capacity=capacity,
                            cause=c,
                            causes=pb.causes,
                        )
                        view = {
                            "rung": p.rung,
                            "why": p.why,
                            "needs_human": p.needs_human,
                            "passed_over": p.passed_over,
                            "exclude": p.exclude,
                            "drain": p.drain,
                            "world": p.world,
                            "allocator": p.allocator,
                            "new": p.patch.new if p.patch else None,
                            "changes": p.patch.changes if p.patch else None,
                            "checks": p.patch.checks if p.patch else None,
                        }
                    except RunbookError as e:
                        view = {"error": str(e)}
                    out.append([verdict, c.name if c else None, thin, nodes, view])
    return out


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    knobs = SiteConfig().knobs
    pb = playbook.load()
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        for name, text, workdir in _scripts(Path(tmp)):
            doc = {"rungs": {}, "walks": _walks(text, knobs, pb)}
            for rid in sorted(rungs.REGISTRY):
                try:
                    doc["rungs"][rid] = plan_script(text, "job.sbatch", workdir, knobs, only=rid)[
                        "rungs"
                    ]
                except RunbookError as e:
                    doc["rungs"][rid] = {"error": str(e)}
            blob = json.dumps(doc, indent=1, sort_keys=True, default=str)
            (out / f"{name}.json").write_text(blob.replace(tmp, "TMP").replace(str(REPO), "REPO"))
            n += 1
    print(f"{n} scripts written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "plan_snapshot"))
