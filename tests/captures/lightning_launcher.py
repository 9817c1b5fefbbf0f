"""Real logs of Lightning's own launcher, captured here on the CPU.

`Trainer(strategy="ddp")` started as a plain `python train.py` launches the other ranks itself
(its subprocess script launcher) and watches them: when one exits non-zero it prints
`[rank: N] Child process with PID P terminated with code C. Forcefully terminating all other
processes to avoid zombies` and SIGKILLs the rest, the main process included. No public thread
holds that line with its repository and path (the search index names neither), so these
captures are the corpus's Lightning records: the real launcher, a real PyTorch, the real gloo
process group, a real failure (tests/captures/lightning_job.py), one bash line as an sbatch
script would run it. What is a stand-in, and said so in each record's note: the CPU instead of
a GPU (gloo instead of NCCL), and HOLD, the other ranks staying in the failing step where NCCL
ranks would be blocked in their next collective.

    python3 -m tests.captures.lightning_launcher      # needs lightning (scripts/test installs it)
        rewrites tests/data/corpus/captured_lightning.jsonl; tests/data/corpus/build.py then
        adds its records to ops/launcher_logs.jsonl

Each answer key comes from the scenario (which rank was made to fail, and how), never from the
parser under test. Paths of the capturing machine are replaced by neutral ones (PATHS below).
tests/integration/test_lightning_launcher.py runs the live scenarios again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JOB = Path(__file__).resolve().parent / "lightning_job.py"
OUT = REPO / "tests" / "data" / "corpus" / "captured_lightning.jsonl"
SOURCE = (
    "https://github.com/Lightning-AI/pytorch-lightning/blob/master/src/lightning/fabric/"
    "strategies/launchers/subprocess_script.py"
)
TIMEOUT_S = 180


@dataclass(frozen=True)
class Scenario:
    name: str
    devices: int
    fail_rank: int
    how: str  # alloc | kill (lightning_job.py)
    hold_s: int
    live: bool  # also run by the integration test (kept to the quick ones)
    note: str

    def answer(self) -> dict:
        host_alloc = self.how == "alloc"
        return {
            "launcher": "lightning (subprocess script launcher, strategy=ddp)",
            "failing_ranks": [self.fail_rank],
            "host": None,
            "first_failure_time": None,
            "is_oom": (
                "host-memory OOM (the CPU allocator refused the rank's request), not CUDA"
                if host_alloc
                else False
            ),
            **({} if host_alloc else {"kind": "signal"}),
            "note": self.note,
        }


SCENARIOS = [
    Scenario(
        "hold-2-alloc-rank1",
        2,
        1,
        "alloc",
        20,
        True,
        "2 ranks; rank 1's host allocation is refused; rank 0 stays in the step, so the launcher's "
        "watcher names rank 1 and SIGKILLs the main process (bash's 'Killed' line)",
    ),
    Scenario(
        "hold-4-kill-rank2",
        4,
        2,
        "kill",
        20,
        True,
        "4 ranks; rank 2 dies of SIGKILL with no traceback, as under the kernel's OOM killer; the "
        "watcher prints code -9 and kills the rest",
    ),
    Scenario(
        "hold-4-alloc-rank3",
        4,
        3,
        "alloc",
        20,
        False,
        "4 ranks; the last rank's host allocation is refused; its traceback then the watcher's line",
    ),
    Scenario(
        "gloo-2-alloc-rank1",
        2,
        1,
        "alloc",
        0,
        False,
        "2 ranks, no hold: gloo tells rank 0 at once that its peer closed the connection; the main "
        "process exits before the watcher looks, so only the two tracebacks name ranks",
    ),
    Scenario(
        "gloo-4-alloc-rank2",
        4,
        2,
        "alloc",
        0,
        False,
        "4 ranks, no hold: ranks 0, 1 and 3 fail on gloo's closed connection right after rank 2's "
        "refused allocation; their errors are consequences",
    ),
    Scenario(
        "hold-2-alloc-rank0",
        2,
        0,
        "alloc",
        20,
        False,
        "2 ranks; the main process (rank 0) fails itself: no watcher line, its traceback names it",
    ),
]


def lightning_python() -> str | None:
    """A Python that imports lightning and torch: this one, or $RUNBOOK_LIGHTNING_PYTHON."""
    py = os.environ.get("RUNBOOK_LIGHTNING_PYTHON") or sys.executable
    probe = subprocess.run(
        [py, "-c", "import lightning, torch"], capture_output=True, text=True, timeout=120
    )
    return py if probe.returncode == 0 else None


def versions(py: str) -> dict[str, str]:
    code = "import lightning, torch, sys; print(lightning.__version__, torch.__version__)"
    out = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120).stdout
    lightning, torch = out.split()
    return {"lightning": lightning, "torch": torch}


def _paths(py: str, workdir: Path) -> list[tuple[str, str]]:
    """This machine's prefixes in the output, longest first, with neutral ones in their place."""
    code = "import sysconfig, sys; print(sysconfig.get_paths()['purelib']); print(sys.prefix)"
    purelib, prefix = subprocess.run(
        [py, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout.split()
    pairs = {
        str(workdir): "/home/user/job",
        purelib: "/opt/venv/lib/python3/site-packages",
        prefix: "/opt/venv",
        sysconfig.get_paths()["purelib"]: "/usr/lib/python3/site-packages",
        sys.prefix: "/usr",
    }
    return sorted(pairs.items(), key=lambda kv: -len(kv[0]))


def run(py: str, sc: Scenario) -> str:
    with tempfile.TemporaryDirectory(prefix="lightning-capture-") as tmp:
        work = Path(tmp)
        shutil.copy(JOB, work / "train.py")
        # As an sbatch script runs it: bash names a child killed by a signal ("line 2: PID
        # Killed  python train.py").
        (work / "run.sh").write_text("#!/bin/bash\npython train.py\n")
        # `python` on PATH runs the chosen interpreter under its own path (a symlink would lose
        # a venv's site-packages).
        (work / "bin").mkdir()
        wrapper = work / "bin" / "python"
        wrapper.write_text(f'#!/bin/sh\nexec "{py}" "$@"\n')
        wrapper.chmod(0o755)
        env = {
            **os.environ,
            "PATH": f"{work / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "DEVICES": str(sc.devices),
            "FAIL_RANK": str(sc.fail_rank),
            "HOW": sc.how,
            "HOLD": str(sc.hold_s),
        }
        env.pop("SLURM_JOB_ID", None)
        done = subprocess.run(
            ["bash", "run.sh"],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT_S,
        )
        text = done.stdout
        for mine, neutral in _paths(py, work):
            text = text.replace(mine, neutral)
        return text


def capture(
    py: str, scenarios: list[Scenario] = SCENARIOS, progress=lambda name: None
) -> list[dict]:
    made = versions(py)
    records = []
    for sc in scenarios:
        progress(sc.name)
        records.append(
            {
                "id": f"own-launch-lightning-{sc.name}",
                "source_kind": "captured",
                "source_url": SOURCE,
                # Captured after launcher_log.py was changed to read them (the CPU allocator's
                # refusal): none is kept apart for measuring.
                "split": "tune",
                "text": run(py, sc),
                "answer": {
                    **sc.answer(),
                    "captured_with": f"lightning {made['lightning']}, torch {made['torch']}, CPU",
                },
            }
        )
    return records


def main() -> int:
    py = lightning_python()
    if py is None:
        print(
            "lightning is not importable: `pip install lightning` beside torch (scripts/test does), "
            "or point RUNBOOK_LIGHTNING_PYTHON at a Python that has it",
            file=sys.stderr,
        )
        return 2
    records = capture(py, progress=lambda name: print(f"capturing {name} ...", file=sys.stderr))
    with OUT.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{OUT.relative_to(REPO)}: {len(records)} records", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
