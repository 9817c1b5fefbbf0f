"""Benchmark: runbook's plan for a LightningCLI job against the program's own answer (issue 54,
items 2 and 3). The fixture program (tests/data/plan_families/lightning-cli, written here) runs
under a real Lightning with `--print_config`, once with the job's words and once with the
plan's, in a venv of your own (`--python`: its interpreter, with lightning installed; runbook's
own environment never imports it). The values the plan says are in force before, and sets
after, are compared with what LightningCLI prints.

    python3 bench/lightning_cli_real.py --python /path/to/venv/bin/python
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.jobfiles.lightning_cli import dig  # noqa: E402
from runbook.planning.offline import plan_script  # noqa: E402
from runbook.site import SiteConfig  # noqa: E402

CASE = REPO / "tests" / "data" / "plan_families" / "lightning-cli"
LINES = {
    "the config's values": "srun python train.py fit -c config.yaml --trainer.max_epochs 30",
    "the job's own word": "srun python train.py fit -c config.yaml --data.train_loader.batch_size=8",
}
MICRO = "data.init_args.train_loader.batch_size"
ACCUM = "trainer.accumulate_grad_batches"


def _printed(python: str, line: str) -> tuple[int | None, int | None]:
    words = shlex.split(line)
    words = words[words.index("train.py") + 1 :]
    run = subprocess.run([python, "train.py", *words, "--print_config"], cwd=CASE,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"LightningCLI refused {words}: {run.stderr.strip()[-400:]}")
    printed = yaml.safe_load(run.stdout)
    return dig(printed, MICRO), dig(printed, ACCUM)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="an interpreter with lightning installed")
    a = ap.parse_args()
    script = (CASE / "train.sbatch").read_text()
    old_line = LINES["the config's values"]
    wrong = 0
    for what, line in LINES.items():
        text = script.replace(old_line, line)
        r = plan_script(text, "train.sbatch", CASE, SiteConfig().knobs, only="halve_micro_batch")
        r = r["rungs"][0]
        if not r["applicable"]:
            print(f"{what}: refused: {r['reason']}")
            wrong += 1
            continue
        new_line = next(
            ln[1:] for ln in r["changes"][0]["diff"].splitlines() if ln.startswith("+srun")
        )
        before, after = _printed(a.python, line), _printed(a.python, new_line)
        said = r["values_after"]
        ok = after == (said["micro_batch"], said.get("grad_accum"))
        ok = ok and before[0] * before[1] == after[0] * after[1]  # type: ignore[operator]
        wrong += not ok
        print(f"{what}: LightningCLI prints {MICRO}, {ACCUM} {before} before and {after} with "
              f"the plan's words; the plan says {said}: {'agree' if ok else 'DISAGREE'}")  # fmt: skip
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
