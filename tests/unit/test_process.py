"""The command line that ran (issue 63, item 1): the node-side script reads a real process's
/proc (its argv with the shell's expansions done, its folder, its environment), and the parse of
its output picks the failing rank's process. `scontrol listpids` is the one part replaced here
(a script printing its header and the real process's PID): the cluster test reads it from Slurm."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from runbook.asking import process
from runbook.evidence.collect import program_asker
from runbook.identity import Account, Actor
from runbook.site import SiteConfig
from runbook.slurm.client import JobInfo


def _read(tmp_path, *pids: int) -> list[process.Process]:
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    rows = "".join(f"echo '{pid} 7 0 0 0'\n" for pid in pids)
    (fake / "scontrol").write_text(f"#!/bin/sh\necho 'PID JOBID STEPID LOCALID GLOBALID'\n"
                                   f"{rows}echo '1 7 0 1 1'\n")  # fmt: skip
    (fake / "scontrol").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    r = subprocess.run(["sh", "-c", process.SCRIPT, "runbook-procs", "7"], env=env,
                       capture_output=True, text=True, check=True)  # fmt: skip
    return process.parse(r.stdout)


def test_a_ranks_own_argv_folder_and_environment_are_read_from_proc(tmp_path):
    work = tmp_path / "job dir"
    work.mkdir()
    (work / "train.py").write_text("import time\ntime.sleep(30)\n")
    args = '--config recipe.yaml $OPTIONAL_ARGS "a b" "x\ny"'  # the shell splits and expands
    env = {"PATH": "/usr/bin:/bin", "OPTIONAL_ARGS": "--per_device_train_batch_size 8 --lr 1e-5",
           "RANK": "3", "ODD": "line1\nline2=x"}  # fmt: skip
    p = subprocess.Popen(["sh", "-c", f"exec {sys.executable} -u train.py {args}"], cwd=work,
                         env=env)  # fmt: skip
    try:
        time.sleep(0.3)
        procs = _read(tmp_path, p.pid)
    finally:
        p.kill()
        p.wait()
    assert [x.pid for x in procs] == [p.pid]  # pid 1 is no Python: skipped
    got = procs[0]
    assert got.cwd == str(work) and got.env["RANK"] == "3" and got.env["ODD"] == "line1\nline2=x"
    assert got.argv[1:] == ["-u", "train.py", "--config", "recipe.yaml",
                            "--per_device_train_batch_size", "8", "--lr", "1e-5", "a b", "x\ny"]  # fmt: skip
    assert got.program() == (["train.py"], got.argv[3:])
    assert process.rank_process(procs, "train.py", 3) is got
    assert process.rank_process(procs, "other.py") is got  # what ran wins over a misread entry


def test_a_launchers_agent_is_not_the_program():
    agent = process.Process(1, "/usr/bin/python3.11", "/w",
                            ["/v/bin/python", "/v/bin/torchrun", "--nproc-per-node=2", "train.py"], {})  # fmt: skip
    worker = process.Process(2, "/usr/bin/python3.11", "/w",
                             ["/v/bin/python", "-X", "dev", "-u", "-m", "pkg.train", "--bs", "8"],
                             {"RANK": "1"})  # fmt: skip
    assert not agent.runs("train.py")
    assert worker.runs("pkg/train.py") and worker.program() == (["-m", "pkg.train"], ["--bs", "8"])
    assert process.rank_process([agent, worker], "pkg/train.py", 0) is worker


def test_a_record_cut_short_or_forged_is_dropped():
    text = "@@pid 12\n@@exe !!notbase64\n@@cwd L3c=\n@@argv \n@@env \n@@pid 13\n@@exe eA==\n"
    got = process.parse(text)  # 12: bad base64 reads as empty; 13: cut short
    assert [p.pid for p in got] == [12] and got[0].argv == [] and got[0].program() is None


def test_the_asker_runs_with_the_processes_words_folder_and_environment(tmp_path):
    me = Account("me", os.getuid(), os.getgid())
    actor = Actor("self", me, me)
    site = SiteConfig()
    import dataclasses

    site = dataclasses.replace(site, identity=dataclasses.replace(site.identity, ask_program=True))
    job = JobInfo(job_id="7", name="t", user="me", state="RUNNING", work_dir="/nonexistent")
    proc = process.Process(5, sys.executable, str(tmp_path), [sys.executable, "train.py", "--b", "4"],
                           {"PATH": "/usr/bin:/bin", "MINE": "1"})  # fmt: skip
    prog = type("P", (), {"entry": "train.py"})
    python, run, how, ran = program_asker(site, actor, job, None, "", prog, [proc], 0)
    assert python == sys.executable and ran == (["train.py"], ["--b", "4"])
    assert "pid 5" in how and "read on its node before the cancel" in how
    rc, out, _, _ = run([python, "-c", "import os; print(os.getcwd(), os.environ['MINE'])"])
    assert rc == 0 and out.split() == [str(tmp_path), "1"]


def test_the_jobs_own_arguments_are_read_exactly_from_its_batch_scripts_process(tmp_path):
    spool = tmp_path / "job00007"
    spool.mkdir()
    (spool / "slurm_script").write_text("#!/bin/bash\nsleep 30\n")
    # Slurm keeps the sbatch line space-joined: "--micro-batch-size 8" would come back as two.
    p = subprocess.Popen(["/bin/bash", str(spool / "slurm_script"), "--micro-batch-size 8", "b"])
    try:
        time.sleep(0.3)
        procs = _read(tmp_path, p.pid)
    finally:
        p.kill()
        p.wait()
    assert process.batch_args(procs) == ["--micro-batch-size 8", "b"]
    assert process.rank_process(procs, "slurm_script") is None  # a shell runs no Python program
    assert process.batch_args([]) is None


def test_the_processes_own_program_wins_over_a_misread_entry():
    # The batch script's reading took a `.py` path of an export line for the entry; the ranks run
    # run.py: the process says what ran.
    agent = process.Process(
        1, "/usr/bin/python3", "/w", ["/v/bin/python3", "/v/bin/torchrun", "x.py"], {}
    )
    rank = process.Process(2, "/usr/bin/python3", "/w", ["/v/bin/python3", "run.py", "-b", "8"],
                           {"RANK": "0"})  # fmt: skip
    assert agent.entry() is None and rank.entry() == "run.py"
    assert process.rank_process([agent, rank], "/home/a/train.py", 0) is rank
    assert process.rank_process([agent], "train.py") is None
