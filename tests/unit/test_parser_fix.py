"""`runbook plan --ask` decides the micro-batch fix with the job's own parser and proves it there
(issue 63), through the CLI, on programs of tests/data/parsers run with their real libraries; the
patched job is then run plainly and judged by what the program itself prints it trains with."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data"
ENV = {"CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}


def _plan(folder: Path, tmp_path: Path) -> tuple[dict, Path]:
    job = tmp_path / folder.name
    shutil.copytree(folder, job)
    r = subprocess.run([sys.executable, "-m", "runbook", "plan", "job.sbatch", "--rung",
                        "halve_micro_batch", "--json", "--ask", sys.executable], cwd=job,
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert r.stdout, r.stderr
    return json.loads(r.stdout)["rungs"][0], job


def _runs(job: Path, script: str) -> tuple[int, int]:
    line = next(ln for ln in script.splitlines() if ln.startswith("srun python "))
    import shlex

    r = subprocess.run([sys.executable, *shlex.split(line)[2:]], cwd=job, env=ENV,
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    m = re.search(r"^RUNS micro=(\d+) accum=(\d+)", r.stdout, re.M)
    assert m, r.stderr[-2000:]
    return int(m[1]), int(m[2])


def _patched(job: Path, diff: str) -> str:
    subprocess.run(["patch", "-s", "job.sbatch"], input=diff, cwd=job, text=True, check=True)
    return (job / "job.sbatch").read_text()


@pytest.mark.parametrize(
    "name,module",
    [("argparse_short", None), ("hydra_override", "hydra"), ("lightning_cli", "jsonargparse"),
     ("tyro_dc", "tyro"), ("derived_accum", None)],
)  # fmt: skip
def test_the_rerun_program_itself_runs_half_the_micro_batch_at_the_same_global_batch(
    name, module, tmp_path
):
    if module:
        pytest.importorskip(module)
    rung, job = _plan(DATA / "parsers" / name, tmp_path)
    assert rung["applicable"], rung
    # asked parse-only: nothing written into the job's folder (Hydra's outputs/, bytecode)
    assert not list(job.rglob("__pycache__")) and not (job / "outputs").exists()
    m0, a0 = _runs(job, (job / "job.sbatch").read_text())
    m1, a1 = _runs(job, _patched(job, rung["changes"][0]["diff"]))
    assert (m1, m1 * a1) == (m0 // 2, m0 * a0)
    assert "nothing else of its" in rung["checks"][0]  # the two parsed configurations compared


def test_two_batch_sizes_are_refused_naming_both(tmp_path):
    rung, _ = _plan(DATA / "parsers_refused" / "ambiguous", tmp_path)
    assert not rung["applicable"]
    assert (
        "more than one value could be the micro-batch (model_batch=8, data_batch=16)"
        in rung["reason"]
    )


def test_no_accumulation_and_no_global_batch_is_refused_for_that_reason(tmp_path):
    rung, _ = _plan(DATA / "parsers_refused" / "no_accum", tmp_path)
    assert not rung["applicable"]
    assert "neither an accumulation nor a global batch" in rung["reason"]


def test_an_evaluations_oom_halves_the_evaluations_own_batch_as_its_parser_reads_it(tmp_path):
    job = tmp_path / "argparse_short"
    shutil.copytree(DATA / "parsers" / "argparse_short", job)
    r = subprocess.run([sys.executable, "-m", "runbook", "plan", "job.sbatch", "--rung",
                        "halve_eval_batch", "--json", "--ask", sys.executable], cwd=job,
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    rung = json.loads(r.stdout)["rungs"][0]
    assert rung["applicable"] and rung["values_after"] == {"eval_batch": 32}, rung
    assert "eval_batch_size 64 -> 32; nothing else of its 4 values changed" in rung["checks"][0]
    assert (
        rung["checks"][1]
        == "the training batch (micro-batch, accumulation, global batch) is not touched"
    )
    script = _patched(job, rung["changes"][0]["diff"])
    line = next(ln for ln in script.splitlines() if ln.startswith("srun python "))
    import shlex

    out = subprocess.run([sys.executable, *shlex.split(line)[2:]], cwd=job, env=ENV,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "RUNS micro=16 accum=2 data=data/chat.jsonl eval=32" in out  # what the program runs


def test_an_evaluation_without_a_batch_of_its_own_never_gets_the_training_batch_halved(tmp_path):
    pytest.importorskip("tyro")
    job = tmp_path / "tyro_dc"
    shutil.copytree(DATA / "parsers" / "tyro_dc", job)
    r = subprocess.run([sys.executable, "-m", "runbook", "plan", "job.sbatch", "--rung",
                        "halve_eval_batch", "--json", "--ask", sys.executable], cwd=job,
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    rung = json.loads(r.stdout)["rungs"][0]
    assert not rung["applicable"], rung
    assert "no parsed value is named as the evaluation's own batch" in rung["reason"], rung
