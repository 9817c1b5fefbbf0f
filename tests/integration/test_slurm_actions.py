"""Mutations on the real test cluster, all through the one executor."""

from __future__ import annotations

import getpass
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from runbook import lineage, state
from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.jobfiles.templates import parse_vars, render
from runbook.planning.sbatch_patch import patch
from runbook.site import SiteConfig, load_site
from runbook.slurm.factory import slurm_client
from tests.integration.slurm_helpers import (
    pyslurm_backend_or_skip,
    sacct_row,
    sbatch,
    sh,
    squeue_state,
    wait_until,
)

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[1] / "data" / "sbatch"
HOSTILE = 'x\'; touch PWNED; echo "$(id)" y'


KEY = b"test-lineage-key"
ME = getpass.getuser()
SIGN = {"secret": KEY, "runbook_user": ME}


@pytest.fixture
def client(cluster):
    return slurm_client(load_site("devcluster", environ={}))


@pytest.fixture
def db(tmp_path):
    return state.open_db(tmp_path / "runbook.db")


@pytest.fixture
def request_cleanup():
    jobs: list[str] = []
    yield jobs.append
    for j in jobs:
        sh("scancel", j, check=False)


@pytest.fixture
def workdir(cluster):
    d = Path(tempfile.mkdtemp(prefix="act ions; $(x) ", dir=cluster["RUNBOOK_CLUSTER_JOBS"]))
    os.chmod(d, 0o755)
    return d


def running_job(workdir: Path, name: str = "wedged") -> str:
    job = sbatch(
        "-N1",
        f"--job-name={name}",
        f"--chdir={workdir}",
        "--output=%x-%j.out",
        "--wrap",
        "sleep 300",
    )
    wait_until(lambda: squeue_state(job) == "RUNNING", 30, f"job {job} RUNNING")
    return job


def test_backend_contract(client):
    """Both backends load against the test cluster's Slurm 22.05 (pyslurm where its matching
    release is installed); their one contract is tests/integration/test_slurm_backends.py."""
    assert client.name == "cli" and client.version().startswith("22.05")
    assert pyslurm_backend_or_skip(client).version().startswith("22.05")


def test_scancel_twice_is_one_scancel_and_one_skipped_line(client, db, workdir, request_cleanup):
    job = running_job(workdir, HOSTILE)
    request_cleanup(job)
    first = Executor(db, incident="inc-a", actor="test").run(steps.cancel(client, job))
    assert first.status == "applied" and first.argv == ["scancel", job]
    wait_until(lambda: squeue_state(job) in ("", "COMPLETING", "CANCELLED"), 30, "cancel")
    second = Executor(db, incident="inc-b", actor="sweep").run(steps.cancel(client, job))
    assert second.status == "skipped" and "already done" in second.message
    fresh = state.open_db(Path(tempfile.mkdtemp()) / "other.db")  # another site's empty ledger
    third = Executor(fresh, incident="inc-c", actor="hook").run(steps.cancel(client, job))
    assert third.status == "skipped" and "no scancel needed" in third.message  # live state
    assert not (workdir / "PWNED").exists() and not Path("PWNED").exists()
    assert client.job(job).name == HOSTILE


RACER = r"""
import sys, time
from runbook import state
from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.site import load_site
from runbook.slurm.factory import slurm_client
db_path, job, holder, start_at = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
conn = state.open_db(db_path)
client = slurm_client(load_site("devcluster", environ={}))
while time.time() < start_at:
    time.sleep(0.001)
try:
    with state.job_lock(conn, job, holder) as lock:
        r = Executor(conn, incident=holder, actor=holder, lock=lock, lock_holder=holder).run(
            steps.cancel(client, job))
        time.sleep(1.0)
        print(r.status)
except state.LockBusy:
    print("busy")
"""


def test_two_processes_racing_on_one_job_one_acts(client, tmp_path, workdir, request_cleanup):
    job = running_job(workdir)
    request_cleanup(job)
    db_path = tmp_path / "shared.db"
    state.open_db(db_path).close()
    start_at = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(db_path), job, who, str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for who in ("hook", "sweep")
    ]
    outs = sorted(p.communicate(timeout=60)[0].strip() for p in procs)
    assert outs == ["applied", "busy"], outs
    conn = state.open_db(db_path)
    assert [r[0] for r in conn.execute("SELECT status FROM ledger")] == ["applied"]


def _fingerprint(workdir: Path, db_path: Path) -> tuple:
    # The running job's own output (*.out) is Slurm's to write, whenever its step starts: not
    # something a dry run could have changed.
    files = sorted(
        (p.name, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in workdir.iterdir()
        if p.is_file() and p.suffix != ".out"
    )
    return files, db_path.read_bytes() if db_path.exists() else None


def _newest_job_id() -> int:
    ids = sh("squeue", "-h", "-a", "-t", "all", "-o", "%i").split()
    ids += sh("sacct", "-X", "-n", "-a", "-o", "JobIDRaw").split()
    return max(int(i) for i in ids if i.isdigit())


def test_dry_run_changes_nothing(client, tmp_path, workdir):
    job = running_job(workdir)
    db_path = tmp_path / "dry.db"
    state.open_db(db_path).close()
    script = str(workdir / "job.v2.sbatch")
    before = _fingerprint(workdir, db_path)
    newest = _newest_job_id()
    ex = Executor(state.open_db(db_path), incident="dry", actor="test", dry_run=True)
    results = [
        ex.run(steps.cancel(client, job)),
        ex.run(steps.drain(client, "gpu-03", "runbook test: dry run", "dry")),
        ex.run(steps.write_file(script, "#!/bin/bash\necho hi\n")),
        ex.run(
            steps.submit(
                client, script, ["-N1"], {}, incident="dry", parent=job, rung="halve_micro_batch"
            )
        ),
    ]
    assert [r.status for r in results] == ["dry_run"] * 4
    assert results[0].argv == ["scancel", job]
    assert results[1].argv[:3] == ["scontrol", "update", "nodename=gpu-03"]
    try:
        assert _fingerprint(workdir, db_path) == before  # files and the database
        assert squeue_state(job) == "RUNNING" and client.node_state("gpu-03")[0] == "IDLE"
        time.sleep(0.5)
        assert _newest_job_id() == newest  # nothing submitted (squeue and sacct)
    finally:
        sh("scancel", job)


def test_drain_shows_in_sinfo_with_the_reason(client, db):
    reason = 'runbook test: Xid 79 "fallen off the bus"; $(id)'
    try:
        r = Executor(db, incident="inc-drain", actor="test").run(
            steps.drain(client, "gpu-03", reason, "inc-drain")
        )
        assert r.status == "applied"
        listed = sh("sinfo", "-R", "-h", "-o", "%n|%E")
        assert f"gpu-03|{reason}" in listed.splitlines()
        again = Executor(db, incident="inc-drain-2", actor="sweep").run(
            steps.drain(client, "gpu-03", reason, "inc-drain-2")
        )
        assert again.status == "skipped" and "already drained" in again.message
    finally:
        sh("scontrol", "update", "nodename=gpu-03", "state=resume")


def test_bad_node_name_is_refused_before_slurm(client):
    from runbook.errors import UsageError

    with pytest.raises(UsageError, match="not a node name"):
        client.drain_argv("gpu-01 state=resume", "x")


def test_template_submit_patch_resubmit_both_in_sacct(client, db, workdir, tmp_path):
    tpl = tmp_path / "echo.sbatch.j2"
    tpl.write_text((DATA / "train.sbatch.j2").read_text().replace("srun python", "srun echo"))
    v = parse_vars(
        ["nodes=1", "ranks_per_node=1", f"workdir={workdir}", "micro_batch=8", "grad_accum=2"]
    )
    text = render(str(tpl), v)
    ex = Executor(db, incident="inc-tpl", actor="test")
    first = workdir / "job.v1.sbatch"
    ex.run(steps.write_file(str(first), text))
    sub1 = ex.run(steps.submit(client, str(first), [f"--chdir={workdir}"], {}, incident="inc-tpl"))
    assert sub1.status == "applied"
    parent = sub1.value
    p = patch(text, "halve_micro_batch", SiteConfig().knobs)
    second = workdir / "job.v2.sbatch"
    ex.run(steps.write_file(str(second), p.new))
    env = {"RUNBOOK_RESUME_FROM": str(workdir / "step_10.pt")}
    resubmit = steps.submit(
        client,
        str(second),
        [f"--chdir={workdir}"],
        env,
        incident="inc-tpl",
        parent=parent,
        rung="halve_micro_batch",
        **SIGN,
    )
    sub2 = ex.run(resubmit)
    assert sub2.status == "applied"
    child = sub2.value
    assert first.read_text() == text  # the first version is never overwritten
    for j in (parent, child):
        wait_until(lambda j=j: (r := sacct_row(j)) and r["state"] == "COMPLETED", 60, f"job {j}")
    info = client.job(child)
    claim = lineage.read(child, info.comment, info.user, secret=KEY, runbook_user=ME)
    assert claim.trusted and {k: claim.fields[k] for k in ("incident", "parent", "rung")} == {
        "incident": "inc-tpl",
        "parent": parent,
        "rung": "halve_micro_batch",
    }
    printed = (workdir / f"job.v2.sbatch-{child}.out").read_text()
    assert "--micro-batch-size 4 --grad-accum 4" in printed
    again = ex.run(
        steps.submit(
            client,
            str(second),
            [],
            {},
            incident="inc-tpl-2",
            parent=parent,
            rung="halve_micro_batch",
            **SIGN,
        )
    )
    assert again.status == "skipped"
    fresh = Executor(state.open_db(Path(tempfile.mkdtemp()) / "f.db"), incident="x", actor="t")
    live = fresh.run(
        steps.submit(
            client,
            str(second),
            [],
            {},
            incident="x",
            parent=parent,
            rung="halve_micro_batch",
            **SIGN,
        )
    )
    assert live.status == "skipped" and child in live.message  # found through the signed comment


def test_a_forged_lineage_comment_does_not_stop_the_resubmission(client, tmp_path):
    """Anyone can write a comment: a held job whose comment claims to be runbook's rerun of a
    victim (unsigned, or signed with another key) is no reason to skip resubmitting it."""
    workdir = Path(tempfile.mkdtemp(dir=os.environ.get("RUNBOOK_CLUSTER_JOBS", "/tmp")))
    os.chmod(workdir, 0o755)
    victim = sbatch("-p", "debug", f"--chdir={workdir}", "--wrap", "exit 0")
    forged = [
        f"runbook:incident=x,parent={victim},rung=halve_micro_batch",
        lineage.tag(b"another site's key", "x", victim, "halve_micro_batch"),
    ]
    held = [
        sbatch("-p", "debug", "-H", f"--comment={c}", f"--chdir={workdir}", "--wrap", "true")
        for c in forged
    ]
    try:
        found = client.find_lineage(victim, "halve_micro_batch", datetime.now() - timedelta(1))
        assert {j for j, _, _ in found} >= set(held)  # Slurm shows them to anyone
        script = workdir / "rerun.sbatch"
        script.write_text("#!/bin/bash\ntrue\n")
        ex = Executor(state.open_db(tmp_path / "f.db"), incident="y", actor="t")
        r = ex.run(
            steps.submit(
                client,
                str(script),
                [f"--chdir={workdir}", "-p", "debug"],
                {},
                incident="y",
                parent=victim,
                rung="halve_micro_batch",
                **SIGN,
            )
        )
        assert r.status == "applied" and r.value not in held
        sh("scancel", r.value, check=False)
    finally:
        for j in held:
            sh("scancel", j, check=False)
