"""A rerun that dies at start because its program refuses runbook's change (issue 54, item 4):
`verify` names the change and asks a person. The refusals are the parsers' own words: argparse's
and click's produced here by running the real parser in a fresh interpreter; fire's (0.7.1) and
Hydra's (hydra-core 1.3.8) as they printed them for an unknown flag and an unknown override in a
throwaway venv (`fire.Fire(main)` given `--batch_size 4`; `app.py trainer.batch=4`);
HfArgumentParser's is the ValueError transformers raises for arguments left unused."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pytest

from runbook.evidence.launcher_log import scan
from runbook.slurm.client import JobInfo
from runbook.verify import judge, refusal

PLAN = {
    "rung": "halve_micro_batch",
    "failed_step": 40,
    "diff": "--- a/job.sbatch\n+++ b/job.sbatch\n-srun python train.py --model m\n"
    "+srun python train.py --per_device_train_batch_size 4 --model m\n",
}


def _argparse_refusal() -> str:
    """What a real argparse prints when given a flag it does not define."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import argparse; p = argparse.ArgumentParser(prog='train.py'); "
            "p.add_argument('--model'); p.parse_args()",
            "--per_device_train_batch_size",
            "4",
            "--model",
            "m",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    return r.stderr


def _rerun(state: str) -> JobInfo:
    return JobInfo(job_id="91", state=state, submit=datetime(2026, 11, 28, 10), start=None)


def test_argparse_refusing_the_added_flag_is_named_and_asks_a_person():
    log = "".join(f"{r}: {ln}\n" for r in (0, 1) for ln in _argparse_refusal().splitlines())
    assert refusal(log.splitlines())[0] == "argparse"
    v = judge(PLAN, _rerun("FAILED"), scan(log), [], r"step (\d+)", lines=log.splitlines())
    assert v["state"] == "refused", v
    said = " ".join(v["details"])
    assert "unrecognized arguments: --per_device_train_batch_size 4" in said
    assert (
        "--per_device_train_batch_size came from runbook's change (rung halve_micro_batch)" in said
    )


def test_a_refused_argument_runbook_did_not_add_is_not_blamed_on_the_change():
    plan = {**PLAN, "diff": "+srun python train.py --model m --grad-accum 2\n"}
    log = _argparse_refusal()
    v = judge(plan, _rerun("FAILED"), scan(log), [], r"step (\d+)", lines=log.splitlines())
    assert v["state"] == "refused" and "not one runbook's change added" in " ".join(v["details"])


def test_a_rerun_still_running_or_completed_is_not_judged_refused():
    log = _argparse_refusal()
    for state in ("RUNNING", "COMPLETED"):
        v = judge(PLAN, _rerun(state), scan(log), [], r"step (\d+)", lines=log.splitlines())
        assert v["state"] != "refused", (state, v)


@pytest.mark.parametrize(
    "line,parser",
    [
        (
            "ValueError: Some specified arguments are not used by the HfArgumentParser: "
            "['--micro_batch', '4']",
            "HfArgumentParser",
        ),
        ("Could not override 'trainer.batch'.", "Hydra"),
        ("Key 'batch' is not in struct", "Hydra"),
        ("ERROR: Could not consume arg: --batch_size", "fire"),
    ],
)
def test_each_parsers_refusal_is_read(line, parser):
    assert refusal(["3: " + line])[0] == parser


def test_click_refusing_an_option():
    click = pytest.importorskip("click")
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import click\n@click.command()\n@click.option('--model')\ndef m(model): pass\nm()",
            "--batch-size",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert click and r.returncode == 2
    assert refusal(r.stderr.splitlines()) == ("click", "No such option '--batch-size'.")
