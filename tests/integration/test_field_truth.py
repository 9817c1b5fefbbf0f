"""Issue 11's field situations, each on the real cluster through the CLI, each checked in Slurm
itself (squeue, sacct, scontrol) as well as in runbook's own answer. The rows not here have their
test beside the scenario they share (test_oom_scenarios: per-task logs, sbatch command-line
options, a name with spaces and "=", kill -9 midway)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from runbook.jobfiles.templates import render
from runbook.site import load_site
from runbook.slurm.factory import slurm_client
from tests.integration.slurm_helpers import (
    pyslurm_backend_or_skip,
    sacct_row,
    sh,
    squeue_state,
    wait_until,
)
from tests.integration.test_alertmanager import _freeze
from tests.integration.test_oom_scenarios import TEMPLATE, log_of

pytestmark = pytest.mark.integration


def runbook(*args: str, env: dict | None = None, timeout: float = 300) -> tuple[int, str, str]:
    r = subprocess.run(
        ["runbook", "--site", "devcluster", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    return r.returncode, r.stdout, r.stderr


def runbook_json(*args: str, env: dict | None = None) -> tuple[int, dict]:
    code, out, err = runbook(*args, "--json", env=env)
    try:
        return code, json.loads(out)
    except json.JSONDecodeError:
        raise AssertionError(
            f"runbook {args} printed no JSON (exit {code}):\n{out}\n{err}"
        ) from None


def plain_script(s, path: Path, *, srun: str = "srun python3", before_srun: str = "") -> Path:
    """The demo job as a person writes it: no runbook header, the training's own srun line."""
    text = render(str(TEMPLATE), s.vars)
    lines = [ln for ln in text.splitlines() if not ln.startswith("# runbook:")]
    body = "\n".join(lines).replace("srun -l python3", before_srun + srun)
    path.write_text(body + "\n")
    return path


def children_of(job: str) -> list[str]:
    """Jobs whose Slurm comment names `job` as their parent (runbook's lineage tag)."""
    return [
        ln.split("|")[0]
        for ln in sh("squeue", "-h", "-t", "all", "-o", "%i|%k").splitlines()
        if f"parent={job}," in ln
    ]


@pytest.mark.parametrize("backend", ["cli", "pyslurm"])
def test_slurmctld_unreachable_is_unknown_not_handled_and_the_next_run_acts(
    scenario, cluster, backend
):
    """slurmctld stalls while `runbook oom` runs: no verdict on a guess, the job not cancelled,
    the incident stopped (not complete) and the job not recorded as handled; once slurmctld
    answers, the next `runbook oom` acts on the same job, once. On both Slurm backends: pyslurm's
    RPCs wait out Slurm's own MessageTimeout instead of a command timeout."""
    if backend == "pyslurm":
        pyslurm_backend_or_skip(slurm_client(load_site("devcluster", environ={})))
    s = scenario(f"ctlddown-{backend}", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    env = {"RUNBOOK_SLURM_COMMAND_TIMEOUT_S": "3", "RUNBOOK_SLURM_BACKEND": backend}
    _freeze(cluster, ["slurmctld"], signal.SIGSTOP)
    try:
        code, out = runbook_json("oom", job, "--yes", env=env)
    finally:
        _freeze(cluster, ["slurmctld"], signal.SIGCONT)
    wait_until(lambda: squeue_state(job), 30, "slurmctld to answer again")
    assert code != 0, out
    assert out["verdict"] in (None, "unknown"), out
    assert out["new_job_id"] is None and "STOPPED" in out["summary"], out
    assert squeue_state(job) == "RUNNING"  # nothing was done on a guess
    assert children_of(job) == []
    code, rows, _ = runbook("incidents", "--json")
    (mine,) = [r for r in json.loads(rows) if r["job_id"] == job]
    assert mine["status"] in ("stopped", "needs_human"), mine
    code, again = runbook_json("oom", job, "--yes", env={"RUNBOOK_SLURM_BACKEND": backend})
    assert code == 0 and again["verdict"] == "fragmentation" and again["new_job_id"], again
    assert again["incident"] == out["incident"]  # the stopped incident, resumed
    assert sacct_row(job)["state"].startswith("CANCELLED")
    assert children_of(job) == [again["new_job_id"]]
    sh("scancel", again["new_job_id"])


def test_history_comment_unlabelled_log_and_another_runs_checkpoint(scenario, tmp_path):
    """Three field habits in one plain script: a comment line above the real command that
    mentions the knob (`# history: ... --micro-batch-size 16`), srun without -l (no rank prefix:
    the rank comes from the in-job dump), and a shared checkpoint folder that already holds a
    newer checkpoint of another run. The rerun halves the flag that runs (the comment is left
    alone), keeps the global batch, resumes from this run's checkpoint, and gets past the step."""
    s = scenario("plainjob", long_factor=2.0)  # rank 3 OOMs at step 6; micro-batch 4 fits
    ckpts = s.workdir / "checkpoints"
    ckpts.mkdir()
    # Another run's checkpoint, newer by step, written before this run started.
    subprocess.run(
        [
            "python3",
            "-c",
            "import sys, torch; torch.save({'step': 8, 'weights': torch.zeros(4)}, sys.argv[1])",
            str(ckpts / "step_8.pt"),
        ],
        check=True,
    )
    old = time.time() - 3600
    os.utime(ckpts / "step_8.pt", (old, old))
    script = plain_script(
        s,
        tmp_path / "job.sbatch",
        before_srun="# history: srun python3 train.py --micro-batch-size 16 (OOMed in June)\n",
    )
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    assert not re.search(r"^\d+: ", log_of(s.workdir, job), re.M)  # no rank labels in the log
    code, out = runbook_json("oom", job, "--yes")
    assert code == 0 and out["verdict"] == "true_oom" and out["new_job_id"], out
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["diagnosis"]["first_failure"]["ranks"] == [3], report["diagnosis"]
    assert report["diagnosis"]["first_failure"]["node"] == "gpu-02"
    plan = report["plan"]
    assert plan["checkpoint"]["step"] == 4, plan["checkpoint"]
    skipped = json.dumps(plan.get("checkpoints_skipped") or report)
    assert "step_8.pt" in skipped and "another run" in skipped
    new = out["new_job_id"]
    # What Slurm will run: the comment as it was, the real flags halved and doubled.
    batch = tmp_path / "new.sbatch"
    sh("scontrol", "write", "batch_script", new, str(batch))
    text = batch.read_text()
    assert "# history: srun python3 train.py --micro-batch-size 16 (OOMed in June)" in text
    (run_line,) = [ln for ln in text.splitlines() if ln.startswith("srun ")]
    assert "--micro-batch-size 4 " in run_line and "--grad-accum 4 " in run_line, run_line
    log = s.wait_done(new)
    assert "step_4.pt at step 4" in log and "step_8" not in log
    assert "training finished at step 10" in log
    # The next step as printed, copied as a person would: it carries this run's settings, by
    # their file (the site was found in ./site_config, which only this folder has), and works
    # from another folder.
    (verify,) = [n for n in out["next_steps"] if "verify" in n]
    cmd = shlex.split(re.search(r"`([^`]+)`", verify).group(1))
    assert cmd[:2] == ["runbook", "--config"] and cmd[2].endswith("devcluster.toml"), cmd
    r = subprocess.run(
        [*cmd, "--json"], capture_output=True, text=True, timeout=120, cwd=str(tmp_path)
    )
    v = json.loads(r.stdout)
    assert r.returncode == 0 and v["state"] == "passed", v
    assert v["last_step"] >= v["failed_step"] == 6


def test_a_rerun_cancelled_before_the_failing_step_is_not_passed(scenario):
    """The rerun is cancelled while it still waits for nodes (another job took them first):
    verify says so and exits non-zero; Slurm's own `CANCELLED` notice is not a training step."""
    s = scenario("cancelled", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    # Queued first and whole nodes (a node's free CPUs would otherwise let both run): it takes
    # the two nodes the scancel frees before the rerun can.
    blocker = sh(
        "sbatch",
        "--parsable",
        "-p",
        "gpu",
        "-N2",
        "--nodelist=gpu-[01-02]",
        "--exclusive",
        "-J",
        "blocker",
        "--output=/dev/null",  # never slurm-%j.out in the folder pytest runs in (the checkout)
        "--wrap",
        "sleep 300",
    ).strip()
    try:
        code, out = runbook_json("oom", job, "--yes")
        assert code == 0 and out["new_job_id"], out
        new = out["new_job_id"]
        wait_until(lambda: squeue_state(blocker) == "RUNNING", 60, "the blocker to start")
        assert squeue_state(new) == "PENDING"
        sh("scancel", new)
        wait_until(
            lambda: (r := sacct_row(new)) is not None and r["state"].startswith("CANCELLED"),
            60,
            "the rerun to be cancelled",
        )
        code, v = runbook_json("verify", "--incident", out["incident"])
        assert code != 0 and v["state"] != "passed", v
        assert "cancel" in json.dumps(v).lower(), v
    finally:
        sh("scancel", blocker, check=False)


def test_a_node_whose_host_key_changed_is_health_unknown_not_healthy(scenario, tmp_path):
    """The failing rank's node presents a key that is not the one known for it: the probe is
    refused, and the report says that node's health is unknown and why; it never says "No Xid
    events" for a node it could not read, and gpu_fault is not ruled out."""
    s = scenario("hostkey", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    known = Path(load_known_hosts_path())
    lines = known.read_text().splitlines()
    key_01 = next(ln for ln in lines if ln.split()[0].split(",")[0] in ("gpu-01", "198.18.0.11"))
    forged = [ln for ln in lines if "gpu-02" not in ln.split()[0] and "198.18.0.12" not in ln]
    # gpu-02 known with gpu-01's key: what a reinstalled (or impersonated) node looks like.
    forged.append(" ".join(["gpu-02,198.18.0.12", *key_01.split()[1:]]))
    mine = tmp_path / "known_hosts"
    mine.write_text("\n".join(forged) + "\n")
    code, out = runbook_json("oom", job, "--dry-run", env={"RUNBOOK_SSH_KNOWN_HOSTS": str(mine)})
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    md = (Path(out["folder"]) / "report.md").read_text()
    health = json.dumps(report.get("health") or report)
    assert "gpu-02" in health and "unknown" in health.lower(), health[:2000]
    assert re.search(r"host key", md, re.I), md
    assert "No Xid events" not in md
    assert squeue_state(job) == "RUNNING"
    sh("scancel", job)


def load_known_hosts_path() -> str:
    from runbook.site import load_site

    return load_site("devcluster", environ={}).ssh.known_hosts


@pytest.fixture
def tiny_state_dir(tmp_path):
    """A state dir on its own tmpfs of 512 KiB: a disk that fills up for real."""
    mnt = tmp_path / "state"
    mnt.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_state_disk_changes_nothing_or_leaves_a_resumable_incident(scenario, tiny_state_dir):
    """The state dir's disk is all but full. With [state] min_free_mib as shipped, runbook refuses
    before the scancel and says which folder; with the check off, the disk fills while it works,
    and whatever it managed to do, it prints no traceback and leaves an incident `runbook oom`
    finishes once there is room again: one scancel, one rerun, in Slurm."""
    s = scenario("diskfull", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    env = {"RUNBOOK_STATE_DIR": str(tiny_state_dir)}
    code, out, err = runbook("oom", job, "--yes", env=env)
    assert code != 0 and "Traceback" not in out + err
    assert str(tiny_state_dir) in out + err and "min_free_mib" in out + err, out + err
    assert squeue_state(job) == "RUNNING"
    # Check off: a filler leaves a few tens of KiB, and runbook runs into the full disk for real,
    # at whatever write comes first (opening the incident, the ledger, the report).
    filler = tiny_state_dir / "filler"
    env["RUNBOOK_STATE_MIN_FREE_MIB"] = "0"
    incidents = set()
    for free_kib in (60, 90):
        filler.unlink(missing_ok=True)
        st = os.statvfs(tiny_state_dir)
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kib * 1024))
        code, out, err = runbook("oom", job, "--yes", env=env)
        assert "Traceback" not in out + err, out + err
        assert code != 0 and "could not be written" in out + err, out + err
        assert len(children_of(job)) <= 1
        code, rows, _ = runbook("incidents", "--json", env=env)
        mine = [r for r in json.loads(rows or "[]") if r["job_id"] == job]
        # Cut short is never complete: the job must not count as handled.
        assert all(r["status"] in ("interrupted", "stopped") for r in mine), mine
        incidents |= {r["id"] for r in mine}
    assert incidents, "the disk filled before any incident was opened: the test proves little"
    filler.unlink()
    code, done = runbook_json("oom", job, "--yes", env=env)
    assert code == 0 and done["new_job_id"], done
    assert done["incident"] in incidents  # resumed, not started anew
    assert sacct_row(job)["state"].startswith("CANCELLED")
    assert children_of(job) == [done["new_job_id"]]
    sh("scancel", done["new_job_id"])


def test_another_users_forged_lineage_comment_neither_stops_nor_fools_the_rerun(scenario):
    """Another user's held job whose comment claims to be runbook's rerun of the victim: runbook
    still cancels the victim AND resubmits it; the report names the comment as suspicious."""
    s = scenario("forged", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    comment = f"runbook:incident=x,parent={job},rung=expandable_segments"
    forged = subprocess.run(
        [
            "runuser",
            "-u",
            "oncall",
            "--",
            "sbatch",
            "--parsable",
            "-p",
            "debug",
            "-H",
            f"--comment={comment}",
            "--chdir=/tmp",
            "--wrap",
            "true",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        code, out = runbook_json("oom", job, "--yes")
        assert code == 0 and out["new_job_id"] and out["new_job_id"] != forged, out
        assert sacct_row(job)["state"].startswith("CANCELLED")
        new = sh("scontrol", "show", "job", out["new_job_id"])
        assert f"JobId={out['new_job_id']} " in new and "UserId=root" in new
        (submit,) = [a for a in out["actions"] if a["kind"] == "submit"]
        assert (
            "SUSPICIOUS" in submit["message"]
            and f"job {forged} of user oncall" in (submit["message"])
        ), submit
        md = (Path(out["folder"]) / "report.md").read_text()
        assert f"job {forged} of user oncall" in md
        sh("scancel", out["new_job_id"])
    finally:
        sh("scancel", forged, check=False)


def test_a_job_id_slurm_does_not_know_is_an_input_error_that_records_nothing(cluster):
    """`runbook oom 999999` (a mistyped id): exit 3 with the reason, for oom, hang and grow;
    no incident folder, no incident row, nothing counted by `stats`."""
    site = load_site("devcluster")  # as the runbook processes below read it
    state_dir = site.path(site.state.dir)
    ghost = "999999"
    assert sh("sacct", "-X", "-n", "-j", ghost, check=False).strip() == ""  # really unknown
    code, rows, _ = runbook("incidents", "--json")
    before = json.loads(rows) if code == 0 and rows.strip() else []
    mine = [r["id"] for r in before if r["job_id"] == ghost]  # another run's, on a kept machine
    folders = (
        set((state_dir / "incidents").glob("*")) if (state_dir / "incidents").is_dir() else set()
    )
    for verb in ("oom", "hang", "grow"):
        code, out, err = runbook(verb, ghost, "--yes")
        assert code == 3, (verb, code, out, err)
        assert ghost in err and "Traceback" not in err, (verb, err)
    code, rows, _ = runbook("incidents", "--json")
    after = json.loads(rows) if code == 0 and rows.strip() else []
    assert [r["id"] for r in after if r["job_id"] == ghost] == mine and len(after) == len(before)
    now = set((state_dir / "incidents").glob("*")) if (state_dir / "incidents").is_dir() else set()
    assert now == folders


def test_a_nodes_history_shows_its_drain_and_its_return_as_slurm_recorded(cluster):
    """A node drained (with a reason) and resumed by an admin: `runbook nodes --node` shows
    both, with who, why and when, equal to what slurmdbd recorded (`sacctmgr show event`)."""
    # A reason of this run's own: slurmdbd keeps every earlier run's events on a kept machine.
    node, reason = "gpu-03", f"runbook test {os.getpid()}.{time.time():.0f}: fan | replaced"
    sh("scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
    time.sleep(1.5)  # a drain period of its own length, so start and end differ
    sh("scontrol", "update", f"NodeName={node}", "State=RESUME")

    def recorded():
        rows = sh(
            "sacctmgr", "-n", "-P", "show", "event", f"nodes={node}",
            "format=NodeName,TimeStart,TimeEnd,State,User,Reason",
        ).splitlines()  # fmt: skip
        return [r for r in rows if r.endswith(reason) and "|Unknown|" not in r]

    (row,) = wait_until(recorded, 60, f"slurmdbd to record {node}'s drain and its end")
    _, start, end, _, _, _ = row.split("|", 5)
    code, out, err = runbook("nodes", "--node", node, "--since", "1d", "--json")
    assert code == 0, err
    doc = json.loads(out)
    (entry,) = [n for n in doc["nodes"] if n["node"] == node]
    (ev,) = [e for e in entry["service"] if e["reason"] == reason]
    assert ev["state"].startswith("DRAIN") and ev["user"]
    assert time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ev["start"])) == start
    assert time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(ev["end"])) == end
    code, text, _ = runbook("nodes", "--node", node, "--since", "1d")
    assert f"by {ev['user']}: {reason}" in text and "returned   to service" in text, text


def _stamp(s: str) -> float | None:
    return time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%S")) if s[:1].isdigit() else None


def _sacct_cost(job: str) -> dict:
    """What Slurm's accounting measured of a job: its start and end (epoch s), the elapsed time
    and its GPUs, read by the test, not by runbook."""
    out = sh("sacct", "-n", "-X", "-P", "-j", job, "-o", "State,Start,End,ElapsedRaw,AllocTRES")
    (line,) = [ln for ln in out.splitlines() if ln.strip()]
    state, start, end, elapsed, tres = line.split("|")
    gpus = re.search(r"gres/gpu=(\d+)", tres)
    return {
        "state": state,
        "start": _stamp(start),
        "end": _stamp(end),
        "elapsed": int(elapsed),
        "gpus": int(gpus.group(1)) if gpus else None,
    }


@pytest.mark.parametrize(("limit", "cancelled"), [("30", True), ("365-00:00:00", True),
                                                  ("365-00:00:00", False)])  # fmt: skip
def test_every_cost_figure_is_what_slurm_measured(scenario, limit, cancelled):
    """A wedged job with a time limit (30 minutes, a year): its report's figures equal the same
    figures computed from `sacct` (Start, End, Elapsed, AllocTRES), within a second. Slurm's
    EndTime of a RUNNING job is start + limit, a projection: never the failure, never the end of
    the lost GPU-hours. Not cancelled (the site's policy declines), the loss is unknown."""
    tag = f"cost-{limit.split('-')[0]}-{'c' if cancelled else 'n'}"
    s = scenario(tag, frag_mib_per_step=6000, long_step=1, ckpt_every=100)
    job = s.submit(f"--time={limit}")
    s.wait_failure(job, "Tried to allocate")
    env = None if cancelled else {"RUNBOOK_POLICY_UNATTENDED_VERDICTS": "gpu_fault"}
    args = ("oom", job, "--yes") if cancelled else ("oom", job)
    _, before = runbook_json("stats")
    code, out = runbook_json(*args, env=env)
    _, after = runbook_json("stats")
    try:
        assert out["folder"], out
        cost = json.loads((Path(out["folder"]) / "report.json").read_text())["cost"]
        if cancelled:
            wait_until(lambda: _sacct_cost(job)["end"], 30, f"job {job}'s end in accounting")
            truth = _sacct_cost(job)
            assert truth["state"].startswith("CANCELLED"), truth
            assert cost["gpus"] == truth["gpus"] == 4
            # No checkpoint: the work lost is the job's whole run, start to the cancel's end.
            want = truth["gpus"] * (truth["end"] - truth["start"]) / 3600
            assert abs(cost["lost_gpu_hours"] - want) <= truth["gpus"] / 3600 + 0.001, (cost, truth)
            assert abs(truth["elapsed"] - (truth["end"] - truth["start"])) <= 1
        else:
            assert code == 4, out
            assert _sacct_cost(job)["state"] == "RUNNING"
            assert cost["lost_gpu_hours"] is None, cost
            assert any(b.startswith("GPUs freed: unknown") for b in cost["basis"]), cost
        # `stats` sums those figures: this incident adds its loss, or one more unknown.
        added = round(after["lost_gpu_hours"] - before["lost_gpu_hours"], 3)
        if cost["lost_gpu_hours"] is None:
            assert added == 0 and after["lost_unknown"] == before["lost_unknown"] + 1
        else:
            assert abs(added - cost["lost_gpu_hours"]) <= 0.002, (added, cost)
        # The failure of a job that was still running is never Slurm's projected end.
        assert cost["detection_s"] is None or 0 <= cost["detection_s"] < 600, cost
        assert cost["failure_at"] is None or cost["failure_at"] <= time.time(), cost
        md = (Path(out["folder"]) / "report.md").read_text()
        assert "-1" not in md.split("| cost |")[1].split("\n")[0], md
    finally:
        sh("scancel", job, check=False)
        if out.get("new_job_id"):
            sh("scancel", out["new_job_id"], check=False)
