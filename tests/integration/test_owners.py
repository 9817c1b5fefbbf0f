"""Jobs of ordinary users, handled as a site runs runbook (docs/install.md, Running for every
user), on the real test cluster: alice and bob are accounts of their own with home folders of
mode 700 (tests/cluster/cluster.sh write_users), neither runbook's account nor the SSH account
(oncall). Their job is the demo's real 2-node x 2-rank gloo job (examples/train_oom, its GPU
modelled) run from a Python every account may run (the cluster's venv).

Each test checks the outcome in Slurm and on disk, never in runbook's own JSON alone: the
rerun's UserId/GroupId from `scontrol show job`, the owner of the files it wrote from stat(2),
the job's state from squeue/sacct.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import uuid
from pathlib import Path

import pytest

from runbook.jobfiles.templates import render
from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.integration.test_job_shapes import _ended
from tests.integration.test_oom_scenarios import BASE, TEMPLATE

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def as_user(user: str, *argv: str, input: str | None = None, cwd: str | None = None, env=None):
    """`argv` run as `user` (runuser, as root), its result."""
    return subprocess.run(
        ["runuser", "-u", user, "--", *argv],
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd or "/",
        env=env,
    )


def write_as(user: str, path: Path, text: str, mode: str = "644") -> None:
    r = as_user(user, "sh", "-c", 'cat >"$1" && chmod "$2" "$1"', "sh", str(path), mode, input=text)
    assert r.returncode == 0, r.stderr


def scontrol_fields(job: str) -> dict[str, str]:
    out = sh("scontrol", "-o", "show", "job", job)
    return dict(re.findall(r"(\w+)=(\S*)", out))


class OwnerJob:
    """A job of `user` in a folder of theirs (under their home folder of mode 700, or under the
    cluster's shared jobs folder), written and submitted as them."""

    def __init__(self, cluster, user: str, name: str, *, private: bool = True, **overrides):
        self.cluster, self.user = cluster, user
        self.venv = Path(cluster["RUNBOOK_CLUSTER_VENV"])
        base = Path(pwd.getpwnam(user).pw_dir) if private else Path(cluster["RUNBOOK_CLUSTER_JOBS"])
        self.folder = base / f"{name}-{uuid.uuid4().hex[:8]}"
        r = as_user(user, "mkdir", "-m", "755", str(self.folder))
        assert r.returncode == 0, r.stderr
        program = self.folder / "train.py"
        write_as(user, program, (REPO / "examples" / "train_oom" / "train.py").read_text())
        self.vars = {**BASE, "name": name, "workdir": str(self.folder), "program": str(program)}
        self.vars.update(overrides)

    def script(self, *between: str, replace: tuple[str, str] | None = None) -> Path:
        """The job's sbatch script, as a person writes it, the venv's Python on its srun line;
        `between`: more #SBATCH lines after its own (a het job's later components)."""
        lines = render(str(TEMPLATE), self.vars).splitlines()
        heads = [ln for ln in lines if ln.startswith("#SBATCH")]
        rest = [ln for ln in lines if not ln.startswith(("#!", "#SBATCH", "# runbook:"))]
        body = "\n".join(["#!/bin/bash", *heads, *between, *rest])
        body = body.replace("srun -l python3", f"srun -l {self.venv}/bin/python3")
        if replace:
            assert replace[0] in body
            body = body.replace(*replace)
        path = self.folder / "train.sbatch"
        write_as(self.user, path, body + "\n")
        return path

    def submit(self, script: Path, nodelist: str = "gpu-[01-02]") -> str:
        r = as_user(
            self.user,
            "sbatch",
            "--parsable",
            "-p",
            "debug",
            f"--nodelist={nodelist}",
            str(script),
            cwd=str(self.folder),
        )
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().split(";")[0]

    def log(self, job: str) -> str:
        logs = list(self.folder.glob(f"*-{job}.out"))
        return logs[0].read_text(errors="replace") if logs else ""

    def wait_failure(self, job: str) -> None:
        wait_until(lambda: "Tried to allocate" in self.log(job), 120, f"job {job} to run out")

    def wait_done(self, job: str) -> str:
        row = wait_until(
            lambda: (r := sacct_row(job)) and r["state"] not in ("PENDING", "RUNNING", "") and r,
            180,
            f"job {job} to end",
        )
        log = self.log(job)
        assert row["state"] == "COMPLETED", f"rerun {job} ended {row}:\n{log[-3000:]}"
        return log


@pytest.fixture
def owner_job(cluster, scenario):
    """Makes OwnerJobs (the `scenario` fixture cancels what is left queued); removes their
    folders afterwards."""
    made: list[OwnerJob] = []

    def make(user: str, name: str, **kw) -> OwnerJob:
        j = OwnerJob(cluster, user, name, **kw)
        made.append(j)
        return j

    yield make
    for j in made:
        subprocess.run(["rm", "-rf", str(j.folder)], check=False)


def runbook(
    *args: str, user: str | None = None, env: dict | None = None, site=("--site", "devcluster")
):
    """`runbook ... --json` as root (the developers' install), or as `user` from the cluster's
    venv: (exit code, the JSON document, stdout + stderr)."""
    extra = {"PYTHONUNBUFFERED": "1", **(env or {})}
    if user is None:
        r = subprocess.run(
            ["runbook", *site, *args, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **extra},
        )
    else:
        venv = os.environ.get("RUNBOOK_CLUSTER_VENV", "/var/tmp/runbook-devcluster/venv")
        home = pwd.getpwnam(user).pw_dir
        r = as_user(
            user,
            "env",
            "-i",
            f"HOME={home}",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            *(f"{k}={v}" for k, v in extra.items()),
            f"{venv}/bin/runbook",
            *site,
            *args,
            "--json",
            cwd=home,
        )
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = {}
    return r.returncode, doc, r.stdout + r.stderr


def test_root_reruns_alices_job_as_alice_from_her_private_folder(owner_job):
    """runbook as root (the hook's and the sweep's account at a site), alice's job in her home
    folder of mode 700, its micro-batch a flag of her program: the logs are read as alice on
    the node, the job cancelled and its rerun submitted as alice (UserId and GroupId equal to
    the original's), the rerun's script written by alice into her own folder, and the rerun
    resumes, completes, and writes its checkpoints as alice."""
    j = owner_job("alice", "own", long_factor=2.5)  # micro-batch 8 runs out, 4 fits
    original = j.script()
    before = original.read_text()
    job = j.submit(original)
    j.wait_failure(job)
    first = scontrol_fields(job)
    assert first["UserId"].startswith("alice(")

    code, out, text = runbook("oom", "--job", job, "--yes")
    assert code == 0, text
    assert out["verdict"] == "true_oom" and out["new_job_id"], text
    new = out["new_job_id"]
    rerun = scontrol_fields(new)
    assert (rerun["UserId"], rerun["GroupId"]) == (first["UserId"], first["GroupId"]), rerun
    # The cancelled job, read back from Slurm's own accounting.
    assert wait_until(lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30)

    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["evidence"]["identity"]["owner"] == "alice"
    assert report["evidence"]["identity"]["mode"] == "runuser"
    assert report["plan"]["rung"] == "halve_micro_batch"
    # The rerun's script: alice's, in her folder, mode 700 folder; her own script untouched.
    own = j.folder / ".runbook" / out["incident"]
    script = own / "job.halve_micro_batch.sbatch"
    st_dir, st_script = own.stat(), script.stat()
    uid = pwd.getpwnam("alice").pw_uid
    assert st_dir.st_uid == uid and st_dir.st_mode & 0o777 == 0o700
    assert st_script.st_uid == uid and st_script.st_mode & 0o077 == 0
    assert rerun["Command"] == str(script)
    assert original.read_text() == before
    submit = next(a for a in report["actions"] if a["kind"] == "submit")
    assert submit["argv"][:4] == ["runuser", "-u", "alice", "--"], submit["argv"]

    log = j.wait_done(new)
    assert "resumed from" in log and "step_4.pt at step 4" in log
    assert "training finished at step 10" in log
    ckpts = sorted((j.folder / "checkpoints").glob("step_*.pt"))
    written_by_rerun = [c for c in ckpts if c.name in ("step_8.pt",)]
    assert written_by_rerun and all(c.stat().st_uid == uid for c in written_by_rerun), ckpts
    code, v, text = runbook("verify", "--incident", out["incident"])
    assert code == 0 and v["state"] == "passed", text


def test_the_service_account_acts_for_alice_through_sudo_and_her_config_copy_is_hers(
    owner_job, tmp_path
):
    """runbook as an unprivileged service account (rbsvc) with the sudoers grant a site writes
    ([identity] act_as = "sudo"; the line cluster.sh writes is the one `runbook config show`
    prints): alice's recipe file keeps her micro-batch, its copy with the halved value is
    written by alice in her folder (mode 600, hers), her recipe untouched, and the rerun, hers,
    completes."""
    j = owner_job("alice", "svc", long_factor=2.5)
    recipe = j.folder / "recipe.yaml"
    original = "per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\n"
    write_as("alice", recipe, original)
    script = j.script(replace=("--micro-batch-size 8 --grad-accum 2", "--config recipe.yaml"))
    job = j.submit(script)
    j.wait_failure(job)

    svc = "rbsvc"
    site = _service_site(svc, 'act_as = "sudo"')
    try:
        code, shown, text = runbook(
            "config", "show", user=svc, site=("--config", f"{site}/site.toml")
        )
        assert code == 0, text
        ident = shown["identity"]
        assert ident["acts_for_others"] is True and not ident["missing"], ident
        granted = (Path("/etc/sudoers.d") / "runbook-devcluster-owners").read_text()
        assert ident["sudoers_line"] in granted.splitlines(), (ident["sudoers_line"], granted)

        code, out, text = runbook(
            "oom", "--job", job, "--yes", user=svc, site=("--config", f"{site}/site.toml")
        )
        assert code == 0, text
        assert out["verdict"] == "true_oom" and out["new_job_id"], text
        rerun = scontrol_fields(out["new_job_id"])
        assert rerun["UserId"].startswith("alice(") and rerun["GroupId"].startswith("alice("), rerun
        # Slurm 22.05 shows a job's --env-vars to no job owner: runbook's environment stands in,
        # as alice's (accounting, read here as root, shows what the rerun was given).
        given = wait_until(
            lambda: sh("sacct", "-n", "--env-vars", "-j", out["new_job_id"]).count("=") > 2 and
            sh("sacct", "-n", "--env-vars", "-j", out["new_job_id"]), 60, "the rerun's environment"
        )  # fmt: skip
        for var in ("HOME=/home/alice", "USER=alice", "LOGNAME=alice"):
            assert f"\n{var}\n" in given, (var, given)
        assert "=rbsvc\n" not in given and "HOME=/home/rbsvc" not in given, given
        own = j.folder / ".runbook" / out["incident"]
        copy = own / "recipe.runbook-halve_micro_batch.yaml"
        uid = pwd.getpwnam("alice").pw_uid
        assert copy.stat().st_uid == uid and copy.stat().st_mode & 0o777 == 0o600
        assert copy.read_text() == original.replace(": 8", ": 4").replace(": 2", ": 4")
        assert recipe.read_text() == original
        assert f"--config {copy}" in (own / "job.halve_micro_batch.sbatch").read_text()
        log = j.wait_done(out["new_job_id"])
        assert "micro-batch 4 x grad-accum 4" in log and "training finished at step 10" in log
    finally:
        subprocess.run(["rm", "-rf", str(site)], check=False)


def test_runbook_as_another_user_or_without_read_rights_stops_before_any_change(owner_job):
    """An account that may not act as alice (bob, with runbook's defaults) is refused before
    any scancel, exit 4, with the sudoers line it needs; and where the SSH account may not
    read her private folder ([identity] node_reads = "check"), the logs are said unreadable
    with the grant, exit 4, never "no failure found", and nothing is cancelled either."""
    j = owner_job("alice", "refused", long_factor=2.5)
    job = j.submit(j.script())
    j.wait_failure(job)

    home = Path(pwd.getpwnam("bob").pw_dir)
    site = home / f"site-{uuid.uuid4().hex[:6]}"
    assert as_user("bob", "mkdir", "-m", "700", str(site)).returncode == 0
    state = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
    conf = (REPO / "site_config" / "devcluster.toml").read_text()
    conf = conf.replace(f'"{state}/runbook-state"', f'"{site}/state"')
    write_as("bob", site / "site.toml", conf, "600")
    try:
        code, out, text = runbook(
            "oom", "--job", job, "--yes", user="bob", site=("--config", f"{site}/site.toml")
        )
        assert code == 4, text
        assert "bob" in text and "alice" in text and "NOPASSWD:SETENV:" in text, text
        assert "sbatch" in text and "scancel" in text
        # bob set up as a sudo service, but outside the grant: sudo is asked first (sudo -n -l),
        # and he is refused before anything is read as alice, not at sudo's password prompt.
        code, out, text = runbook(
            "oom",
            "--job",
            job,
            "--yes",
            "--force",  # the refusal above is this job's incident already
            user="bob",
            site=("--config", f"{site}/site.toml"),
            env={"RUNBOOK_IDENTITY_ACT_AS": "sudo"},
        )
        assert code == 4, text
        assert "sudo does not let bob run" in text and "as alice without a password" in text, text
        assert "bob ALL=(%hpcusers) NOPASSWD:SETENV:" in text, text
        assert "a password is required" not in text and "STOPPED" not in text, text
    finally:
        subprocess.run(["rm", "-rf", str(site)], check=False)
    assert squeue_state(job) == "RUNNING"  # nothing was cancelled

    code, out, text = runbook(
        "oom", "--job", job, "--yes", env={"RUNBOOK_IDENTITY_NODE_READS": "check"}
    )
    assert code == 4, text
    # The folder the SSH account may not enter: her home, above the job's own folder.
    assert "permission denied" in text and "/home/alice on gpu-01 as oncall" in text, text
    assert 'node_reads = \\"sudo\\"' in text and "oncall ALL=(%hpcusers) NOPASSWD:" in text, text
    assert "no failure found" not in text
    assert squeue_state(job) == "RUNNING"
    assert not [a for a in out.get("actions", []) if a["kind"] == "cancel"]


def test_a_log_linked_to_a_file_its_owner_may_not_read_never_reaches_anything_runbook_writes(
    owner_job, tmp_path
):
    """alice's log replaced by a symbolic link to a file that the SSH account may read and
    alice may not (oncall's own, mode 600): with [identity] node_reads = "check" (the scan runs
    as oncall), none of that file's lines appear in runbook's output, its incident folder or
    its state, and the report names the link as left unread."""
    j = owner_job("alice", "link", private=False, long_factor=2.5)
    job = j.submit(j.script())
    j.wait_failure(job)
    sh("scancel", job)
    wait_until(lambda: squeue_state(job) == "", 60, f"job {job} to leave the queue")
    marker = f"SECRET-{uuid.uuid4().hex}"
    home = Path(pwd.getpwnam("oncall").pw_dir)
    secret = home / f"secret-{uuid.uuid4().hex[:6]}.log"
    write_as(
        "oncall",
        secret,
        f"[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 99.00 GiB {marker}\n"
        f"step 9 {marker}\n",
        "600",
    )
    try:
        log = next(j.folder.glob(f"*-{job}.out"))
        assert as_user("alice", "ln", "-sf", str(secret), str(log)).returncode == 0
        assert log.is_symlink()
        code, out, text = runbook(
            "oom", "--job", job, "--yes", env={"RUNBOOK_IDENTITY_NODE_READS": "check"}
        )
        assert marker not in text
        folder = Path(out["folder"])
        for f in folder.rglob("*"):
            if f.is_file():
                assert marker not in f.read_text(errors="replace"), f
        db = state_db()
        assert marker.encode() not in db.read_bytes()
        notes = json.loads((folder / "report.json").read_text())["evidence"].get("notes", [])
        assert any(str(log) in n and "symbolic link" in n for n in notes), notes
    finally:
        secret.unlink(missing_ok=True)


def state_db() -> Path:
    from runbook.site import load_site

    site = load_site("devcluster", environ={})
    return site.path(site.state.dir) / "runbook.db"


def test_alices_het_job_and_the_job_waiting_on_it_are_handled_as_hers(owner_job):
    """A heterogeneous job of alice's (2 nodes x 2 ranks with GPUs, beside a 1-task evaluation
    server) and her evaluation job waiting on it (afterok), with the site acting through Slurm's
    own `sbatch --uid/--gid` ([identity] act_as = "sbatch_uid"): runbook as root holds and
    re-points her dependant as alice (runuser), and resubmits both components as alice, each with
    its own resources, as Slurm shows them."""
    j = owner_job("alice", "hetchain", frag_mib_per_step=6000, long_step=1)
    script = j.script(
        "#SBATCH --nodelist=gpu-[01-02]",
        "#SBATCH hetjob",
        "#SBATCH --ntasks=1 --cpus-per-task=1 --mem=300M --nodelist=gpu-03",
    )
    r = as_user("alice", "sbatch", "--parsable", "-p", "debug", str(script), cwd=str(j.folder))
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    waits = as_user(
        "alice",
        "sbatch",
        "--parsable",
        "-p",
        "debug",
        f"--dependency=afterok:{job}",
        f"--chdir={j.folder}",
        "--mem=50M",
        "--wrap=true",
        cwd=str(j.folder),
    )
    assert waits.returncode == 0, waits.stderr
    dependant = waits.stdout.strip()
    j.wait_failure(job)

    code, out, text = runbook(
        "oom", "--job", job, "--yes", env={"RUNBOOK_IDENTITY_ACT_AS": "sbatch_uid"}
    )
    assert code == 0 and out["verdict"] == "fragmentation" and out["new_job_id"], text
    new = out["new_job_id"]
    comps = [c for c in re.split(r"\n\s*\n", sh("scontrol", "show", "job", new)) if "JobId=" in c]
    assert len(comps) == 2, comps
    for c in comps:
        assert re.search(r"UserId=alice\(\d+\) GroupId=alice\(", c), c
    assert any("NumTasks=4" in c and "gres/gpu=4" in c for c in comps), comps
    assert any("NumTasks=1" in c and "gres/gpu" not in c for c in comps), comps
    shown = sh("scontrol", "show", "job", dependant)
    assert f"Dependency=afterok:{new}" in shown and "JobHeld" not in shown, shown
    # Every change to alice's jobs ran as alice: the cancel and the dependant's update through
    # runuser, the rerun through sbatch's own --uid/--gid.
    uid, gid = pwd.getpwnam("alice").pw_uid, pwd.getpwnam("alice").pw_gid
    for a in out["actions"]:
        if a["kind"] in ("cancel", "hold", "release", "depend"):
            assert a["argv"][:4] == ["runuser", "-u", "alice", "--"], a
        if a["kind"] == "submit":
            assert a["argv"][:3] == ["sbatch", f"--uid={uid}", f"--gid={gid}"], a
    assert any(a["kind"] == "depend" and a["status"] == "applied" for a in out["actions"]), out
    assert _ended(new) == ["COMPLETED", "COMPLETED"], j.log(new)[-3000:]
    code, v, text = runbook("verify", "--incident", out["incident"])
    assert code == 0 and v["state"] == "passed", text


def test_alices_hung_job_is_captured_and_resubmitted_as_hers(owner_job, scenario):
    """runbook hang as root on alice's hung job (rank 3 blocks in a data read on gpu-02): the
    stacks are read through the site's py-spy grant, the job is cancelled as alice and resubmitted
    as alice without gpu-02, and the rerun finishes."""
    from tests.integration.test_hang_scenario import healthy_nodes

    healthy_nodes(scenario("owner-hang-health"))
    j = owner_job("alice", "hang", long_step=6, extra_args="--hang-node gpu-02")
    job = j.submit(j.script())
    wait_until(lambda: "loading shard 6" in j.log(job), 120, f"job {job} to hang")
    code, out, text = runbook("hang", job, "--yes")
    assert code == 0 and out["verdict"] == "straggler_rank", text
    new = out["new_job_id"]
    rerun = scontrol_fields(new)
    assert rerun["UserId"].startswith("alice(") and rerun["ExcNodeList"] == "gpu-02", rerun
    cancel = next(a for a in out["actions"] if a["kind"] == "cancel")
    assert cancel["argv"][:4] == ["runuser", "-u", "alice", "--"], cancel
    log = j.wait_done(new)
    assert "resumed from" in log and "training finished at step 10" in log


def test_alices_job_shrunk_on_a_faulty_node_grows_back_as_hers(owner_job, scenario):
    """runbook as root on alice's 3-node job whose gpu-02 is faulty with no spare node: it
    resumes as alice on 2 nodes; once gpu-02 is back, `runbook grow` cancels her shrunk job
    and resubmits it on 3 nodes, both as alice (the batch script read as alice, the grown job
    hers in Slurm), and it finishes."""
    from tests.integration.test_oom_scenarios import faulty_gpu02

    health = scenario("owner-grow-health")
    faulty_gpu02(health)
    j = owner_job("alice", "grow", nodes=3, steps=24, extra_args="--step-seconds 1")
    try:
        job = j.submit(j.script(), nodelist="gpu-[01-03]")
        j.wait_failure(job)
        code, out, text = runbook("oom", "--job", job, "--yes")
        assert code == 0 and out["verdict"] == "gpu_fault" and out["new_job_id"], text
        shrunk = out["new_job_id"]
        assert scontrol_fields(shrunk)["UserId"].startswith("alice("), scontrol_fields(shrunk)

        sh("scontrol", "update", "nodename=gpu-02", "state=resume")
        health.close()  # gpu-02's card is whole again
        wait_until((j.folder / "checkpoints" / "step_8.pt").exists, 120, "the shrunk job at 8")
        wait_until(
            lambda: (
                sh("sinfo", "-h", "-N", "-n", "gpu-02", "-o", "%T").split()[0]
                in ("idle", "mixed", "allocated")
            ),
            60,
            "gpu-02 usable again",
        )
        code, grown, text = runbook("grow", "--job", shrunk, "--yes")
        assert code == 0 and grown["verdict"] == "grow" and grown["new_job_id"], text
        rerun = scontrol_fields(grown["new_job_id"])
        # A pending job's node count reads "3-3" (its range), a running one's "3".
        assert rerun["UserId"].startswith("alice(") and rerun["NumNodes"] in ("3", "3-3"), rerun
        for a in grown["actions"]:
            if a["kind"] in ("cancel", "submit"):
                assert a["argv"][:4] == ["runuser", "-u", "alice", "--"], a
        log = j.wait_done(grown["new_job_id"])
        assert "training finished at step 24" in log
    finally:
        sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)


def test_alices_thrashing_job_is_asked_cancelled_and_rerun_as_alice(owner_job, cluster):
    """Before the OOM, as the owner: alice's running job whose rank 1 thrashes, every rank
    declaring that it checkpoints on request. `runbook prevent` as root writes the request file
    as alice (hers on disk), her job writes the checkpoint into her folder, the rerun is
    submitted held as alice before her job is cancelled as alice (slurmctld records the cancel
    under her uid), and the rerun is hers and starts at the checkpoint's step + 1."""
    j = owner_job(
        "alice",
        "prev",
        param_mib=30000,
        act_mib_per_sample=3000,
        steps=30,
        long_step=1,
        long_factor=1.0,
        ckpt_every=100000,
        extra_args="--long-rank 1 --mem-lines --retries-per-step 5 --thrash-rank 1 "
        "--step-seconds 0.5",
    )
    script = j.script(
        replace=(
            "export RUNBOOK_RESUME_FROM=",
            "export RUNBOOK_CHECKPOINT_ON_REQUEST=1\nexport RUNBOOK_RESUME_FROM=",
        )
    )
    job = j.submit(script)
    wait_until(lambda: j.log(job).count("RUNBOOK_INSTRUMENT mem") >= 16, 120, "memory lines")
    uid = pwd.getpwnam("alice").pw_uid
    ctld = Path(cluster["RUNBOOK_CLUSTER_STATE"]) / "log" / "slurmctld.log"
    seen = len(ctld.read_text(errors="replace").splitlines())

    code, out, text = runbook("prevent", "--job", job, "--yes")
    assert code == 0 and out["verdict"] == "thrashing" and out["new_job_id"], (
        text,
        [ln for ln in j.log(job).splitlines() if "checkpoint-request" in ln],
    )
    new = out["new_job_id"]
    kinds = [a["kind"] for a in out["actions"] if a["kind"] != "write_file"]
    assert kinds == ["request", "request", "submit", "cancel", "release"], kinds
    request = j.folder / f".runbook-checkpoint-{job}"
    assert request.stat().st_uid == uid and "step=withdrawn" not in request.read_text()
    # slurmctld's own record: the cancel came from alice's uid, not root's.
    kills = [
        ln
        for ln in ctld.read_text(errors="replace").splitlines()[seen:]
        if f"JobId={job} " in ln + " " and "kill_job" in ln
    ]
    assert kills and all(ln.rstrip().endswith(f"uid {uid}") for ln in kills), kills
    assert scontrol_fields(new)["UserId"].startswith("alice(")
    asked = re.findall(
        r"RUNBOOK_INSTRUMENT checkpoint rank=0 step=(\d+) id=\S+ path=(\S+)", j.log(job)
    )
    assert len(asked) == 1, j.log(job)[-2000:]
    step = int(asked[0][0])
    assert (j.folder / asked[0][1]).stat().st_uid == uid
    log = j.wait_done(new)
    first = re.findall(r"(?m)^0: step (\d+)/", log)
    assert int(first[0]) == step + 1 and "training finished at step 30" in log, first


def _service_site(svc: str, *lines: str) -> Path:
    """A site config of the service account `svc` (its own state and key, mode 700), with
    `lines` added to [identity]."""
    home = Path(pwd.getpwnam(svc).pw_dir)
    site = home / f"site-{uuid.uuid4().hex[:6]}"
    r = as_user(svc, "mkdir", "-m", "700", str(site))
    assert r.returncode == 0, r.stderr
    key = site / "id_ed25519"
    state = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
    write_as(svc, key, (state / "ssh" / "id_ed25519").read_text(), "600")
    conf = (REPO / "site_config" / "devcluster.toml").read_text()
    conf = conf.replace(f'"{state}/runbook-state"', f'"{site}/state"')
    conf = conf.replace(f'"{state}/ssh/id_ed25519"', f'"{key}"')
    conf = conf.replace("[identity]\n", "[identity]\n" + "".join(f"{x}\n" for x in lines), 1)
    write_as(svc, site / "site.toml", conf, "600")
    return site


# runbook's test program behind a versioned parser (test_job_shapes.STRICT_PROGRAM), which also
# notes who ran it, each time: every question runbook asks must be the job owner's.
def _asked_program(j, version: int, marker: Path) -> Path:
    from tests.integration.test_job_shapes import STRICT_PROGRAM

    example = j.folder / "train.py"
    taken = re.findall(r'ap\.add_argument\("(--[\w-]+)"', example.read_text())
    options = [o for o in taken if o not in ("--micro-batch-size", "--grad-accum")]
    body = STRICT_PROGRAM.replace("OPTIONS", repr(options)).replace("EXAMPLE", repr(str(example)))
    body = body.replace('int("1")', f'int("{version}")')
    note = f'open({str(marker)!r}, "a").write(str(__import__("os").getuid()) + "\\n")\n\n'
    body = body.replace('if __name__ == "__main__":', note + 'if __name__ == "__main__":')
    r = as_user(j.user, "mkdir", "-m", "755", str(j.folder / "pkg"))
    assert r.returncode == 0, r.stderr
    write_as(j.user, j.folder / "pkg" / "__init__.py", "")
    write_as(j.user, j.folder / "pkg" / "asked.py", body)
    flags = f" --micro-batch-size {j.vars['micro_batch']} --grad-accum {j.vars['grad_accum']}"
    path = j.script(
        f"export PYTHONPATH={j.folder}", replace=(f" {j.vars['program']} ", " -m pkg.asked ")
    )
    text = path.read_text()
    assert flags in text
    write_as(j.user, path, text.replace(flags, ""))
    return path


@pytest.mark.parametrize("version", [2, 1])
def test_the_program_is_asked_as_alice_and_its_answer_overrules_the_reading(owner_job, version):
    """[identity] ask_program: alice's job runs `python3 -m pkg.asked` with its batch left to
    the program, whose parser defines --micro-batch-size/--grad-accum under `if version >= 2`
    (the static reading sees both). The service account asks the program's parser itself,
    parse-only, as alice (sudo), with the job's own interpreter: version 2 parses the two
    values, the fix is proved on its parser and the rerun trains at the new batch; version 1
    has neither, rejects the static reading's flags, and halve_micro_batch is refused with both
    readings before anything is submitted with a flag the program would reject."""
    j = owner_job("alice", f"ask{version}", long_factor=2.5)
    marker = j.folder / "asked.uid"
    write_as("alice", marker, "", "666")
    job = j.submit(_asked_program(j, version, marker))
    j.wait_failure(job)
    site = _service_site("rbsvc", 'act_as = "sudo"', "ask_program = true")
    try:
        code, out, text = runbook(
            "oom", "--job", job, "--yes", user="rbsvc", site=("--config", f"{site}/site.toml")
        )
        assert out.get("verdict") == "true_oom", text
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
    finally:
        subprocess.run(["rm", "-rf", str(site)], check=False)
    plan = report["plan"]
    runs = marker.read_text().split()  # the job's own run, then runbook's parse-only questions
    assert len(runs) >= 3 and set(runs) == {str(pwd.getpwnam("alice").pw_uid)}, (
        runs,
        plan["checks"],
        report.get("evidence", {}).get("submission"),
    )
    if version == 2:
        # Its parser (run parse-only, as alice, with the job's interpreter) names the batch and
        # proves the edit: the two parsed configurations differ in those two values only.
        assert code == 0 and plan["rung"] == "halve_micro_batch", text
        asked = [c for c in plan["checks"] if c.startswith("the program's parser (argparse)")]
        assert asked and "grad_accum 1 -> 2, micro_batch_size 8 -> 4; nothing else" in asked[0]
        assert f"{j.venv}/bin/python3 -m pkg.asked" in asked[0] and "; as alice" in asked[0], asked
        log = j.wait_done(out["new_job_id"])
        assert "micro-batch 4 x grad-accum 2" in log and "training finished at step" in log
        return
    over = dict(map(tuple, plan["passed_over"]))
    said = over.get("halve_micro_batch", "")
    assert "unrecognized arguments: --micro-batch-size" in said, plan["passed_over"]
    assert "--micro-batch-size added: the default" in said, said
    if out.get("new_job_id"):
        rerun = sh("scontrol", "show", "job", out["new_job_id"])
        assert "--micro-batch-size" not in rerun, rerun


def test_the_command_line_that_ran_decides_the_fix_over_a_shell_variables_words(owner_job):
    """alice's job passes its own argument through a variable the shell splits into words after
    the training command's (`OPTIONAL_ARGS=$1 ... train.py --micro-batch-size 16 ... $OPTIONAL_ARGS`,
    submitted with "--micro-batch-size 8"): the value in force is 8, which the script's text does
    not say. runbook reads the failing rank's /proc on its node as alice before the cancel, asks
    the program's parser with exactly those words, and appends the fix after them: the rerun's
    own log says micro-batch 4 x grad-accum 4, the global batch of 8 x 2 kept."""
    j = owner_job("alice", "optargs", long_factor=2.5, micro_batch=16)
    text = j.script().read_text()
    srun = next(ln for ln in text.splitlines() if ln.startswith("srun -l "))
    assert "--micro-batch-size 16 --grad-accum 2" in srun, srun
    text = text.replace(srun, f"OPTIONAL_ARGS=$1\n{srun} $OPTIONAL_ARGS")
    path = j.folder / "train.sbatch"
    write_as(j.user, path, text)
    r = as_user(j.user, "sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]",
                str(path), "--micro-batch-size 8", cwd=str(j.folder))  # fmt: skip
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    j.wait_failure(job)
    assert "micro-batch 8 x grad-accum 2" in j.log(job), j.log(job)[-2000:]
    site = _service_site("rbsvc", 'act_as = "sudo"', "ask_program = true")
    try:
        code, out, text = runbook(
            "oom", "--job", job, "--yes", user="rbsvc", site=("--config", f"{site}/site.toml")
        )
        assert "folder" in out, text
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
    finally:
        subprocess.run(["rm", "-rf", str(site)], check=False)
    plan = report["plan"]
    assert code == 0 and plan["rung"] == "halve_micro_batch", text
    proof = [c for c in plan["checks"] if c.startswith("the program's parser (argparse)")]
    assert proof and "grad_accum 2 -> 4, micro_batch_size 8 -> 4; nothing else" in proof[0], plan
    assert "read on its node before the cancel" in proof[0], proof
    new = out["new_job_id"]
    script = sh("scontrol", "write", "batch_script", new, "-")
    assert "$OPTIONAL_ARGS --micro-batch-size 4 --grad-accum 4" in script, script
    log = j.wait_done(new)
    assert "micro-batch 4 x grad-accum 4" in log and "training finished at step" in log, log[-2000:]


# (folder of tests/data/parsers_cluster, its entry and words on the training line)
PARSER_JOBS = {
    "lightning_cli": ("main.py", "--config config.yaml"),
    "hydra_group": ("app.py", "trainer=big"),
    "argparse_short": ("run.py", "-b 8 --data data/chat.jsonl"),
    # the job's own argument, split by the shell, overrides its recipe's 2
    "trl_recipe": ("sft.py", "--config recipe.yaml $OPTIONAL_ARGS"),
    # 64 / (8 x 4 ranks) = 2: the rerun's program derives 4 from 64 / (4 x 4)
    "derived_accum": ("pretrain.py", "--micro-batch-size 8 --global-batch-size 64"),
}
# What each program's own log says it trains with: (before, after).
PARSER_RUNS = {"derived_accum": ("8 x grad-accum 2", "4 x grad-accum 4")}


@pytest.mark.parametrize("name", sorted(PARSER_JOBS))
def test_alices_program_on_a_parser_library_is_fixed_where_its_parser_reads(owner_job, name):
    """alice's job runs a program whose batch only its parser library knows (LightningCLI's YAML,
    Hydra's config group, argparse's short flag and --accum-steps); it runs out of memory at
    micro-batch 8. runbook asks that parser, as alice, and appends the fix in its own spelling:
    the rerun's program parses micro-batch 4 x accumulation 2 and trains to the end."""
    j = owner_job("alice", f"lib-{name}", long_factor=2.5)
    src = REPO / "tests" / "data" / "parsers_cluster" / name
    for f in sorted(src.rglob("*")):
        rel = f.relative_to(src)
        if f.is_dir():
            assert as_user("alice", "mkdir", "-p", str(j.folder / rel)).returncode == 0
        else:
            write_as("alice", j.folder / rel, f.read_text())
    entry, words = PARSER_JOBS[name]
    text = j.script().read_text()
    srun = next(ln for ln in text.splitlines() if ln.startswith("srun -l "))
    example_args = srun.split(f" {j.vars['program']} ", 1)[1]
    example_args = re.sub(r" ?--(micro-batch-size|grad-accum) \d+", "", example_args)
    head = srun.split(f" {j.vars['program']} ", 1)[0]
    text = text.replace(srun, f"export EXAMPLE={j.vars['program']} EXAMPLE_ARGS='{example_args}'\n"
                        f"OPTIONAL_ARGS=$1\n{head} {entry} {words}")  # fmt: skip

    path = _write(j, text)
    r = as_user(j.user, "sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]",
                str(path), "--per_device_train_batch_size 8", cwd=str(j.folder))  # fmt: skip
    assert r.returncode == 0, r.stderr
    job = r.stdout.strip().split(";")[0]
    before, after = PARSER_RUNS.get(name, ("8 x grad-accum 1", "4 x grad-accum 2"))
    try:
        j.wait_failure(job)
    except AssertionError as e:
        raise AssertionError(
            f"{e}\n--- the job's log\n{j.log(job)[-3000:]}\n--- its script\n{text}"
        ) from None
    assert f"micro-batch {before}" in j.log(job), j.log(job)[-2000:]
    site = _service_site("rbsvc", 'act_as = "sudo"', "ask_program = true")
    try:
        code, out, said = runbook(
            "oom", "--job", job, "--yes", user="rbsvc", site=("--config", f"{site}/site.toml")
        )
        assert "folder" in out, said
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
    finally:
        subprocess.run(["rm", "-rf", str(site)], check=False)
    plan = report["plan"]
    assert code == 0 and plan["rung"] == "halve_micro_batch", json.dumps(plan, indent=1)[:6000]
    proof = [c for c in plan["checks"] if c.startswith("the program's parser (")]
    assert proof and "8 -> 4" in proof[0] and "nothing else of its" in proof[0], plan["checks"]
    assert "; as alice" in proof[0] and "read on its node before the cancel" in proof[0], proof
    if name == "derived_accum":  # the global batch kept, the accumulation the program's to derive
        assert "global_batch_size 64 unchanged" in plan["checks"][1], plan["checks"]
    else:
        assert "1 -> 2" in proof[0], proof
    log = j.wait_done(out["new_job_id"])
    assert f"micro-batch {after}" in log and "training finished at step" in log, log[-2000:]


def _write(j, text: str) -> Path:
    path = j.folder / "train.sbatch"
    write_as(j.user, path, text)
    return path
