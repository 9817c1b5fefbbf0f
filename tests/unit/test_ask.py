"""Asking the job's program in an incident (issue 54, item 2): which interpreter is the job's,
and how it is run (as the owner's `sh`, in the job's folder, with the job's recorded
environment only, no GPU). The runner is exercised with real processes."""

from __future__ import annotations

import dataclasses
import sys

from runbook.evidence.collect import interpreter, program_asker
from runbook.identity import Account, Actor
from runbook.site import SiteConfig
from runbook.slurm.client import JobInfo, Submission


def test_the_interpreter_the_training_command_names_wins_over_the_environment():
    script = "export PYTHONPATH=$PWD\nsrun -l /shared/venv/bin/python3 -m pkg.train --steps 3\n"
    seen = {"/shared/venv/bin/python3", "/usr/bin/python3"}
    env = {"PATH": "/usr/bin:/bin"}
    assert (
        interpreter(env, script, "pkg/train.py", exists=seen.__contains__)
        == "/shared/venv/bin/python3"
    )
    assert (
        interpreter(env, "python3 train.py\n", "train.py", exists=seen.__contains__)
        == "/usr/bin/python3"
    )
    conda = {"CONDA_PREFIX": "/opt/envs/t", "PATH": "/usr/bin"}
    assert (
        interpreter(conda, "", None, exists=lambda p: p.startswith("/opt"))
        == "/opt/envs/t/bin/python3"
    )
    # Named by full path but not visible from here: not asked, never another Python instead.
    assert (
        interpreter(env, script, "pkg/train.py", exists=lambda p: p == "/usr/bin/python3") is None
    )
    assert interpreter({"PATH": "relative:bin"}, "", None, exists=lambda p: True) is None


def _site(on: bool):
    site = SiteConfig()
    return dataclasses.replace(site, identity=dataclasses.replace(site.identity, ask_program=on))


def test_the_program_runs_in_the_job_s_folder_with_its_recorded_environment_and_no_gpu(tmp_path):
    me = Account("me", 1000, 1000)
    actor = Actor("self", me, me)
    job = JobInfo(job_id="7", name="t", user="me", state="FAILED", work_dir=str(tmp_path))
    env = {"PATH": "/usr/bin:/bin", "TRAINER_V2": "0", "CUDA_VISIBLE_DEVICES": "0,1"}
    sub = Submission("sbatch train.sbatch", env)
    prog = type("P", (), {"entry": "train.py"})
    script = f"srun {sys.executable} train.py\n"
    assert program_asker(_site(False), actor, job, sub, script, prog) is None  # the site's choice
    python, run, how, ran = program_asker(_site(True), actor, job, sub, script, prog)
    assert ran is None  # no process read: the script's own words
    assert python == sys.executable and how == "as me"
    probe = (
        "import os; print(os.getcwd(), os.environ.get('TRAINER_V2'), "
        "repr(os.environ['CUDA_VISIBLE_DEVICES']), 'HOME' in os.environ)"
    )
    rc, out, err, _ = run([python, "-c", probe])
    assert rc == 0, err
    assert out.split() == [str(tmp_path), "0", "''", "False"], out


def test_without_the_job_s_environment_only_a_named_interpreter_is_asked_with_path_alone(tmp_path):
    me = Account("me", 1000, 1000)
    actor = Actor("self", me, me)
    job = JobInfo(job_id="7", name="t", user="me", state="FAILED", work_dir=str(tmp_path))
    prog = type("P", (), {"entry": "train.py"})
    unrecorded = Submission("sbatch x", None)
    # Slurm 22.05 shows --env-vars to an administrator only: a bare `python3` is not guessed.
    assert program_asker(_site(True), actor, job, unrecorded, "python3 train.py\n", prog) is None
    script = f"srun {sys.executable} train.py\n"
    python, run, how, _ = program_asker(_site(True), actor, job, unrecorded, script, prog)
    assert python == sys.executable and "with PATH only" in how, how
    rc, out, _, _ = run([python, "-c", "import os; print(' '.join(sorted(os.environ)))"])
    seen = set(out.split()) - {"LC_CTYPE"}  # the C library may add it on its own
    assert rc == 0 and seen == {"CUDA_VISIBLE_DEVICES", "PATH", "PYTHONDONTWRITEBYTECODE"}, out


def test_runbook_s_environment_standing_in_for_another_owner_s_carries_the_owner_s_identity():
    from runbook.planning.environment import for_owner, rerun_environment

    mine = {"HOME": "/home/rbsvc", "USER": "rbsvc", "LOGNAME": "rbsvc", "PATH": "/usr/bin",
            "SUDO_USER": "oncall", "XDG_RUNTIME_DIR": "/run/user/990", "RUNBOOK_TOKEN": "x"}  # fmt: skip
    env = rerun_environment(
        "sbatch train.sbatch", None, {}, for_owner(mine, "alice", "/home/alice")
    )
    got = env.file_env
    assert got == {"HOME": "/home/alice", "USER": "alice", "LOGNAME": "alice", "PATH": "/usr/bin"}
    assert "HOME" not in for_owner(mine, "ghost", None)  # no home known: none, never runbook's


def test_a_hydra_app_is_asked_its_job_config_replayed_from_a_recorded_real_answer():
    """The question is the plan's own command line with `--cfg job`; the answer is what Hydra
    1.3.8 printed for it (tests/data/ask/README.md), replayed through the real judge."""
    from pathlib import Path

    from runbook.jobfiles.program import program_options
    from runbook.planning import ask
    from runbook.planning.offline import plan_script

    d = Path(__file__).resolve().parents[1] / "data" / "ask" / "hydra-app"
    text = (d / "job.sbatch").read_text()
    program = program_options(text, d)
    assert program.hydra == "train.py:5"
    recorded = (d / "cfg-job.recorded.yaml").read_text()
    seen: list[list[str]] = []

    def replay(argv):
        seen.append(argv)
        return 0, recorded, "", 0.3

    doc = plan_script(text, "job.sbatch", d, SiteConfig().knobs, only="halve_micro_batch",
                      ask=("python", replay))  # fmt: skip
    r = doc["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4}, r
    # Its parser asked parse-only first (runbook.asking): the recorded answer is no parse, so the
    # plan is the static reading's, checked by the question below.
    assert seen[0][1] == "-c" and seen[0][3:] == ["train.py", "--config-path=conf",
                                                  "--config-name=train", "trainer.devices=8"]  # fmt: skip
    assert seen[1:] == [["python", "train.py", "--config-path=conf", "--config-name=train",
                         "model.micro_batch_size=4", "trainer.devices=8", "--cfg", "job"]]  # fmt: skip
    assert r["checks"][-1].endswith("has model.micro_batch_size 4, as planned"), r["checks"]
    # The same answer to a plan that set 2 disagrees, and says both.
    q = ask.question(
        text,
        text.replace("--config-name=train", "--config-name=train model.micro_batch_size=2"),
        {},
        program,
    )
    assert q is not None and "it prints model.micro_batch_size 4 (the plan: 2)" in (
        q.judge(recorded) or ""
    )


def test_a_hydra_app_s_own_decorator_chooses_the_config_replayed_from_a_recorded_real_answer():
    """No --config-path/--config-name on the job's line: the entry's @hydra.main declares them;
    the override goes after the entry file, and Hydra's recorded answer agrees."""
    from pathlib import Path

    from runbook.planning.offline import plan_script

    d = Path(__file__).resolve().parents[1] / "data" / "ask" / "hydra-app"
    text = (d / "job-decorator.sbatch").read_text()
    recorded = (d / "cfg-job-decorator.recorded.yaml").read_text()
    seen: list[list[str]] = []

    def replay(argv):
        seen.append(argv)
        return 0, recorded, "", 0.2

    doc = plan_script(text, "job-decorator.sbatch", d, SiteConfig().knobs,
                      only="halve_micro_batch", ask=("python", replay))  # fmt: skip
    r = doc["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4}, r
    assert r["lands"] == [
        "Hydra override model.micro_batch_size=4 after train.py (conf/train.yaml left as it is)"
    ]
    assert seen[0][1] == "-c"  # its parser asked parse-only first: the recorded answer is none
    assert seen[1:] == [
        ["python", "train.py", "model.micro_batch_size=4", "trainer.devices=8", "--cfg", "job"]
    ]
    assert r["checks"][-1].endswith("has model.micro_batch_size 4, as planned"), r["checks"]
