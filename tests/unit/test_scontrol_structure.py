"""`scontrol show job` read by its structure: names, paths and comments a user writes (spaces,
"=", text that looks like another field) stay in their own values. Recorded real outputs of
Slurm 22.05 (tests/data/slurm/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from runbook.slurm import text as slurm_text
from runbook.slurm.cli_backend import _from_scontrol
from runbook.slurm.text import scontrol_records

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
MULTI = (DATA / "scontrol-show-job-name-with-spaces.txt").read_text()
ONE = (DATA / "scontrol-o-show-job-name-with-spaces.txt").read_text()


def test_recorded_multi_line_form_keeps_every_user_value_whole():
    (f,) = scontrol_records(MULTI)
    job = _from_scontrol(f)
    assert job.name == "llama lr=3e-4 bs=8"
    assert job.stdout == f"/tmp/out dir x=1/llama lr=3e-4 bs=8-{job.job_id}.log"
    assert job.comment == "a b=c StdOut=/evil"  # the comment cannot pose as StdOut
    assert job.state and job.work_dir and job.nodes


def test_recorded_one_line_form_name_and_path():
    (f,) = scontrol_records(ONE)
    assert f["JobName"] == "llama lr=3e-4 bs=8" and f["UserId"].startswith("root(")
    assert f["JobState"] and f["StdIn"] == "/dev/null"
    assert f["Comment"] == "a b=c StdOut=/evil" and f["StdOut"].startswith("/tmp/out dir x=1/")


def test_several_jobs_and_pasted_excerpts():
    two = MULTI + "\n" + MULTI.replace("JobId=", "JobId=9", 1)
    assert len(scontrol_records(two)) == 2
    pasted = "\n".join(MULTI.splitlines()[1:])  # copied from below the first line
    assert slurm_text.parse(pasted).state == scontrol_records(MULTI)[0]["JobState"]


def test_job_name_posing_as_other_fields_in_the_multi_line_form():
    text = MULTI.replace("JobName=llama lr=3e-4 bs=8", "JobName=x UserId=evil JobState=COMPLETED")
    (f,) = scontrol_records(text)
    assert f["JobName"] == "x UserId=evil JobState=COMPLETED"
    assert f["UserId"].startswith("root(") and f["JobState"] != "COMPLETED"
