"""`runbook oom` end to end on a real 2-node x 2-rank training job (examples/train_oom), one test
per scenario. In each: the job fails for real (a rank raises torch.OutOfMemoryError from the
modelled GPU, or is SIGKILLed, or raises a plain error) while the others wedge in a gloo
all-reduce; `runbook oom --dry-run` shows the plan and changes nothing; `runbook oom --yes` acts;
the rerun resumes from the last valid checkpoint and runs to completion.

No GPU here: node health replays recorded real outputs (corpus, tests/data) through the nodes'
nvidia-smi/dmesg stand-ins, and /var/log/fake-gpu.json sets a node's modelled card."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path

import pytest

from runbook import state
from runbook.site import load_site
from runbook.slurm.client import usable_state
from tests.cluster.scenario import node_health
from tests.conftest import corpus_records
from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.prose import defects

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "examples" / "train_oom" / "train.sbatch.j2"
DATA = REPO / "tests" / "data" / "nvidia-smi"
BASE = dict(
    nodes=2,
    ranks_per_node=2,
    mem_mib=400,
    steps=10,
    micro_batch=8,
    grad_accum=2,
    card_mib=81559,
    param_mib=20000,
    act_mib_per_sample=2000,
    ckpt_every=4,
    long_step=6,
    long_factor=1.0,
)


def runbook(*args: str, check_json: bool = True) -> tuple[int, dict | str]:
    r = subprocess.run(
        ["runbook", "--site", "devcluster", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    if not check_json:
        return r.returncode, r.stdout + r.stderr
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"runbook {args} printed no JSON (exit {r.returncode}):\n{r.stdout}\n{r.stderr}"
        ) from None


def log_of(workdir: Path, job: str) -> str:
    logs = list(workdir.glob(f"*-{job}.out"))
    return logs[0].read_text(errors="replace") if logs else ""


class Scenario:
    def __init__(self, cluster, name: str, **overrides):
        self.state_dir = Path(cluster["RUNBOOK_CLUSTER_STATE"])
        self.site = load_site("devcluster", environ={})
        self.workdir = Path(
            tempfile.mkdtemp(prefix=f"{name}-", dir=cluster["RUNBOOK_CLUSTER_JOBS"])
        )
        os.chmod(self.workdir, 0o755)
        self.vars = {
            **BASE,
            "name": name,
            "workdir": str(self.workdir),
            "program": str(REPO / "examples" / "train_oom" / "train.py"),
            **overrides,
        }
        self.cleanups: list = []

    def fake_gpu(self, node: str, spec: dict) -> None:
        path = self.state_dir / "nodes" / node / "log" / "fake-gpu.json"
        path.write_text(json.dumps(spec))
        self.cleanups.append(lambda: path.unlink(missing_ok=True))

    def health(self, node: str, **recorded) -> None:
        sc = node_health(self.state_dir, node, self.site.probes, source="test scenario", **recorded)
        sc.write()
        self.cleanups.append(sc.clear)

    def submit(self, *sbatch_args: str) -> str:
        args = [
            "submit",
            str(TEMPLATE),
            "--sbatch-arg=--nodelist=gpu-[01-02]",
            "--json",
            *(f"--sbatch-arg={a}" for a in sbatch_args),
        ]
        for k, v in self.vars.items():
            args.append(f"--var={k}={v}")
        code, out = runbook(*args)
        assert code == 0 and out["job_id"], out
        return out["job_id"]

    def wait_failure(self, job: str, marker: str) -> None:
        wait_until(
            lambda: marker in log_of(self.workdir, job), 120, f"{marker!r} in job {job}'s log"
        )

    def wait_done(self, job: str) -> str:
        row = wait_until(
            lambda: (r := sacct_row(job)) and r["state"] not in ("PENDING", "RUNNING", "") and r,
            180,
            f"job {job} to end",
        )
        log = log_of(self.workdir, job)
        assert row["state"] == "COMPLETED", f"rerun {job} ended {row}:\n{log[-3000:]}"
        return log

    def close(self) -> None:
        for fn in self.cleanups:
            fn()


def _ledger_rows() -> int:
    db = (
        load_site("devcluster", environ={}).path(load_site("devcluster", environ={}).state.dir)
        / "runbook.db"
    )
    return (
        state.open_db(db).execute("SELECT count(*) FROM ledger").fetchone()[0] if db.exists() else 0
    )


def dry_run_changes_nothing(job: str) -> dict:
    before = (squeue_state(job), _ledger_rows(), sh("sinfo", "-R", "-h"))
    code, out = runbook("oom", "--job", job, "--dry-run", "--json")
    assert all(a["status"] in ("dry_run", "skipped") for a in out["actions"]), out["actions"]
    assert (squeue_state(job), _ledger_rows(), sh("sinfo", "-R", "-h")) == before
    report = Path(out["folder"]) / "report.md"
    assert "DRY RUN" in report.read_text()
    return out


def act(job: str) -> dict:
    code, out = runbook("oom", "--job", job, "--yes", "--json")
    assert code == 0, out
    return out


def test_fragmentation_gets_expandable_segments_under_both_names(scenario):
    s = scenario("frag", frag_mib_per_step=6000, long_step=1)  # rank 3 fails at 5, others at 6
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    dry = dry_run_changes_nothing(job)
    assert dry["verdict"] == "fragmentation"
    assert [a["kind"] for a in dry["actions"]] == ["cancel", "write_file", "write_file", "submit"]
    out = act(job)
    assert out["verdict"] == "fragmentation" and out["new_job_id"]
    folder = Path(out["folder"])
    script = (folder / "job.expandable_segments.sbatch").read_text()
    for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        assert f"export {name}=expandable_segments:True" in script
    report = json.loads((folder / "report.json").read_text())
    assert report["diagnosis"]["oom"]["rank"] == 3
    assert report["diagnosis"]["first_failure"]["node"] == "gpu-02"
    assert report["plan"]["checkpoint"]["step"] == 4
    # What it cost, from Slurm's own figures: 2 nodes x 2 GPUs, from the step-4 checkpoint to
    # the scancel; detection and resubmission times of this incident.
    cost = report["cost"]
    assert cost["gpus"] == 4 and cost["lost_gpu_hours"] is not None and cost["lost_gpu_hours"] > 0
    assert cost["resubmission_s"] is not None and cost["diagnosis_s"] is not None
    # The demo's incident (scripts/demo runs this job): the failure's time from runbook's own
    # dump of the failing rank, so the delay to detection is known, and said once (issue 55).
    assert cost["detection_s"] is not None and cost["detection_s"] >= 0
    md = (folder / "report.md").read_text()
    assert "detected unknown" not in md and md.count("after the failure") == 1
    assert defects(md) == []
    code, st = runbook("stats", "--json")
    assert code == 0 and st["by_verdict"]["fragmentation"]["incidents"] >= 1
    log = s.wait_done(out["new_job_id"])
    assert "allocator expandable_segments:True" in log
    assert "resumed from" in log and "step_4.pt at step 4" in log
    assert "training finished at step 10" in log
    code, v = runbook("verify", "--incident", out["incident"], "--json")
    assert code == 0 and v["state"] == "passed", v
    assert v["allocator_applied"] is True and v["last_step"] >= v["failed_step"] == 5
    assert "Verification of the rerun" in (folder / "report.md").read_text()


def test_true_oom_halves_then_fits_from_the_lineages_two_attempts(scenario):
    """The same job OOMs again after micro-batch / 2 (the message alone gave a range: plain
    halving): the next incident on the lineage has two measured attempts (8 needed 148600 MiB,
    4 needed 84600: 16000 a sample, 20600 fixed) and takes the micro-batch rung again at the
    largest that fits, 2 (52600 predicted, 52000 modelled), with the global batch kept; the
    rerun of the rerun finishes."""
    s = scenario("true", long_factor=4.0)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    assert dry_run_changes_nothing(job)["verdict"] == "true_oom"
    first = act(job)
    assert first["verdict"] == "true_oom"
    plan = json.loads((Path(first["folder"]) / "report.json").read_text())["plan"]
    assert plan["rung"] == "halve_micro_batch"
    assert plan["variables"]["micro_batch"] * plan["variables"]["grad_accum"] == 8 * 2
    second_job = first["new_job_id"]
    s.wait_failure(second_job, "Tried to allocate")
    assert "resumed from" in log_of(s.workdir, second_job)
    code, v = runbook("verify", "--incident", first["incident"], "--json")
    assert code == 1 and v["state"] == "failed" and "new incident" in " ".join(v["details"])
    again = act(second_job)
    report2 = json.loads((Path(again["folder"]) / "report.json").read_text())
    plan2, fit2 = report2["plan"], report2["diagnosis"]["fit"]
    assert fit2["source"] == "lineage" and fit2["micro_batch"] == 2, fit2
    assert abs(fit2["predicted_peak_mib"] - 52000) / 52000 < 0.05, fit2
    assert plan2["rung"] == "halve_micro_batch" and "again" in plan2["why"], plan2["why"]
    assert [r for _, r in plan2["tried"]] == ["halve_micro_batch"]
    assert "micro_batch 4 -> 2" in plan2["changes"] and "grad_accum 4 -> 8" in plan2["changes"]
    # The rerun resumed from the first job's step_4.pt and ran out before writing its own: its
    # loss is its own run, from its start to its cancel as Slurm's accounting records them,
    # never from that older checkpoint (issue 55, item 4).
    cost2 = report2["cost"]
    assert plan2["checkpoint"]["step"] == 4, plan2["checkpoint"]
    assert any("since the job's start" in b for b in cost2["basis"]), cost2["basis"]
    times = wait_until(
        lambda: (
            (r := sh("sacct", "-j", second_job, "-X", "-n", "-P", "-o", "Start,End").strip())
            and "Unknown" not in r
            and r
        ),
        30,
        "the rerun's start and end in accounting",
    )
    start, end = (datetime.fromisoformat(t).timestamp() for t in times.split("|"))
    want = 4 * (end - start) / 3600
    assert abs(cost2["lost_gpu_hours"] - want) <= 4 / 3600 + 0.001, (cost2, times)
    log = s.wait_done(again["new_job_id"])
    assert "micro-batch 2 x grad-accum 8" in log and "training finished at step 10" in log
    # The first incident's verification follows the lineage to the rerun of its rerun.
    code, v = runbook("verify", "--incident", first["incident"], "--json")
    assert code == 0 and v["state"] == "passed" and v["job_id"] == again["new_job_id"]


def faulty_gpu02(s: Scenario) -> None:
    """gpu-02's card is smaller (its ranks OOM) and its node health, replayed from the corpus,
    shows an uncorrectable error with a row remap pending: a GPU fault."""
    s.fake_gpu("gpu-02", {"card_mib": 50000})
    s.health(
        "gpu-02",
        kernel="",
        ecc=next(
            r["text"]
            for r in corpus_records("ops/nvidia_smi_remap_ecc.jsonl")
            if r["id"] == "remap-gpud-80-uncorrectable-pending"
        ),
        apps=next(
            r["text"]
            for r in corpus_records("ops/nvidia_smi_apps.jsonl")
            if r["id"] == "apps-gpud-550-h100x8-no-processes"
        ),
    )


def test_gpu_fault_drains_and_resubmits_unchanged_elsewhere(scenario):
    s = scenario("fault")
    faulty_gpu02(s)
    try:
        job = s.submit()
        s.wait_failure(job, "Tried to allocate")
        dry = dry_run_changes_nothing(job)
        assert dry["verdict"] == "gpu_fault"
        assert [a["kind"] for a in dry["actions"]] == [
            "cancel",
            "drain",
            "write_file",
            "write_file",
            "submit",
        ]
        out = act(job)
        assert out["verdict"] == "gpu_fault"
        reason = sh("sinfo", "-R", "-h", "-n", "gpu-02", "-o", "%E").strip()
        assert "gpu_fault" in reason and "row remap pending" in reason
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
        added = [
            ln
            for ln in report["plan"]["diff"].splitlines()
            if ln.startswith("+") and not ln.startswith("+++")
        ]
        # Resubmitted unchanged: only the resume path (and its record in the header) differ.
        assert all("resume_from" in ln or "RUNBOOK_RESUME_FROM" in ln for ln in added), added
        submit = next(a for a in out["actions"] if a["kind"] == "submit")
        assert "--exclude=gpu-02" in submit["argv"]
        # The node's history now holds what this incident saw there.
        code, nodes = runbook("nodes", "--node", "gpu-02", "--json")
        (entry,) = nodes["nodes"]
        assert {"row_remap", "oom"} <= set(entry["kinds"]), entry
        assert any(
            h["kind"] == "oom" and h["incident"] == out["incident"] for h in entry["history"]
        )
        log = s.wait_done(out["new_job_id"])
        assert "training finished at step 10" in log
        assert "gpu-02" not in sh("sacct", "-X", "-n", "-j", out["new_job_id"], "-o", "NodeList")
    finally:
        sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)


def test_gpu_fault_with_no_spare_node_resumes_on_fewer_nodes_with_the_same_global_batch(scenario):
    """Issue 20: a 3-node job, gpu-02 faulty (a pending row remap, recorded), and no node to
    replace it (the partition has 3): drain_and_exclude would wait forever, so the job resumes on
    2 nodes with accumulation 2 x 3/2 = 3: 8 x 2 x 6 ranks = 8 x 3 x 4 ranks."""
    s = scenario("shrink", nodes=3)
    faulty_gpu02(s)
    try:
        job = s.submit("--nodelist=gpu-[01-03]")
        s.wait_failure(job, "Tried to allocate")
        out = act(job)
        assert out["verdict"] == "gpu_fault", out
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
        plan = report["plan"]
        assert plan["rung"] == "shrink_world", plan
        assert any(
            r == "drain_and_exclude" and "will not come" in w for r, w in plan["passed_over"]
        )
        submit = next(a for a in out["actions"] if a["kind"] == "submit")
        assert "--nodes=2" in submit["argv"] and "--ntasks=4" in submit["argv"]
        assert "--exclude=gpu-02" in submit["argv"]
        assert "gpu_fault" in sh("sinfo", "-R", "-h", "-n", "gpu-02", "-o", "%E")
        # Slurm's own view of the rerun: 2 nodes, 4 tasks, and the read-back agreed.
        assert plan["readback"]["new"]["nodes"] == 2 and not plan["readback"]["mismatches"]
        log = s.wait_done(out["new_job_id"])
        assert "micro-batch 8 x grad-accum 3" in log and "resumed from" in log
        assert "training finished at step 10" in log
    finally:
        sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)


def test_a_shrunk_job_grows_back_to_full_size_once_the_node_returns(scenario):
    """Issue 20, the way back: the job shrank to 2 nodes (gpu-02 faulty, no spare); while
    gpu-02 is drained `runbook grow` changes nothing; once it returns to service (its card
    replaced) and the shrunk job has saved a checkpoint, the job is cancelled and resubmitted on
    3 nodes and 6 tasks with accumulation 3 x 2/3 = 2 (8 x 3 x 4 = 8 x 2 x 6), from that
    checkpoint, and finishes."""
    s = scenario("grow", nodes=3, steps=24, extra_args="--step-seconds 1")
    faulty_gpu02(s)
    try:
        job = s.submit("--nodelist=gpu-[01-03]")
        s.wait_failure(job, "Tried to allocate")
        shrunk = act(job)["new_job_id"]
        assert shrunk, "shrink_world made no rerun"
        code, early = runbook("grow", "--job", shrunk, "--yes", "--json")
        assert code == 0 and early["verdict"] == "nodes_not_back", early
        assert not early["actions"] and squeue_state(shrunk) in ("PENDING", "RUNNING")

        sh("scontrol", "update", "nodename=gpu-02", "state=resume")
        s.close()  # gpu-02's card is whole again
        saved = s.workdir / "checkpoints" / "step_8.pt"
        wait_until(saved.exists, 120, "the shrunk job's checkpoint at step 8")
        # Back in service as Slurm says it (the resume and the stand-in's restart take a moment;
        # a grow that asks before then rightly answers nodes_not_back).
        wait_until(
            lambda: usable_state(sh("sinfo", "-h", "-N", "-n", "gpu-02", "-o", "%T").split()[0]),
            60,
            "gpu-02 usable in Slurm again",
        )
        before = (squeue_state(shrunk), _ledger_rows())
        code, dry = runbook("grow", "--job", shrunk, "--dry-run", "--json")
        assert code == 0 and dry["verdict"] == "grow", dry
        assert [a["kind"] for a in dry["actions"]] == [
            "cancel",
            "write_file",
            "write_file",
            "submit",
        ]
        assert (squeue_state(shrunk), _ledger_rows()) == before  # the dry run changed nothing

        code, out = runbook("grow", "--job", shrunk, "--yes", "--json")
        assert code == 0 and out["verdict"] == "grow", out
        submit = next(a for a in out["actions"] if a["kind"] == "submit")
        assert "--nodes=3" in submit["argv"] and "--ntasks=6" in submit["argv"]
        assert not any(a.startswith("--exclude") for a in submit["argv"])
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
        assert report["plan"]["readback"]["new"]["nodes"] == 3
        assert not report["plan"]["readback"]["mismatches"]
        log = s.wait_done(out["new_job_id"])
        assert "micro-batch 8 x grad-accum 2" in log
        resumed = int(log.split("resumed from ")[1].split(" at step ")[1].split()[0])
        assert resumed >= 8, log[-2000:]  # from the shrunk job's own progress
        assert "training finished at step 24" in log
        assert sacct_row(shrunk)["state"].startswith("CANCELLED")
        # Asked again, the grown job is none of grow's business.
        code, again = runbook("grow", "--job", out["new_job_id"], "--json")
        assert code == 0 and again["verdict"] in ("not_running", "not_shrunk"), again
    finally:
        sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)


def test_co_tenant_excludes_the_node_and_reports_the_pids(scenario):
    s = scenario("cotenant", param_mib=30000, act_mib_per_sample=2500)
    s.fake_gpu("gpu-02", {"co_tenants": [[297866, 13594]], "gpu": 1, "from_step": 6})
    s.health(
        "gpu-02",
        kernel="",
        ecc=(DATA / "gpud-535.161.08-h100x8-first2.q.txt").read_text(),
        apps=(DATA / "a800x8-580.95.05-processes.txt").read_text(),
    )
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    assert dry_run_changes_nothing(job)["verdict"] == "co_tenant"
    out = act(job)
    assert out["verdict"] == "co_tenant"
    assert [a["kind"] for a in out["actions"]] == [
        "cancel",
        "write_file",
        "write_file",
        "submit",
    ]  # no drain
    submit = next(a for a in out["actions"] if a["kind"] == "submit")
    assert "--exclude=gpu-02" in submit["argv"]
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "297866" in md and "4110331" in md and "never killed" in md
    log = s.wait_done(out["new_job_id"])
    assert "training finished at step 10" in log


def test_host_ram_oom_raises_mem(scenario):
    s = scenario(
        "hostram", workers=2, host_mib_per_worker=150, long_factor=2.0, act_mib_per_sample=1000
    )  # the long batches fit the GPU; only host RAM is short
    job = s.submit()
    # The SIGKILLed rank's peers notice its dead sockets and fail; the job ends by itself.
    wait_until(
        lambda: (r := sacct_row(job)) and r["state"] not in ("PENDING", "RUNNING", ""),
        120,
        "the job to end after the SIGKILL",
    )
    assert dry_run_changes_nothing(job)["verdict"] == "host_oom"
    out = act(job)
    assert out["verdict"] == "host_oom"
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["plan"]["rung"] == "raise_mem"
    assert report["plan"]["variables"]["mem_mib"] == 800
    log = s.wait_done(out["new_job_id"])
    assert "training finished at step 10" in log


def test_a_refused_host_allocation_no_mem_can_meet_escalates_without_a_rerun(scenario):
    """A rank asks c10's CPU allocator for 128 TiB at once (really refused, ENOMEM, inside the
    Slurm job): host_oom, but doubling --mem would fail the same way. No rerun: a person decides,
    and the report says why more RAM was passed over."""
    s = scenario("hostalloc", extra_args="--fail-with host_alloc")
    job = s.submit()
    s.wait_failure(job, "DefaultCPUAllocator")
    code, out = runbook("oom", "--job", job, "--yes", "--json")
    assert out["verdict"] == "host_oom" and out["new_job_id"] is None, out
    assert code == 4  # ExitCode.NEEDS_HUMAN
    plan = json.loads((Path(out["folder"]) / "report.json").read_text())["plan"]
    assert plan["needs_human"] and plan["rung"] == "escalate"
    (rung, why), *_ = plan["passed_over"]
    assert rung == "raise_mem" and "131072.00 GiB" in why
    assert "submit" not in [a["kind"] for a in out["actions"]]


def test_not_an_oom_is_report_only(scenario):
    s = scenario("plainerr", extra_args="--fail-with value_error")
    job = s.submit()
    s.wait_failure(job, "ValueError")
    before = _ledger_rows()
    code, out = runbook("oom", "--job", job, "--yes", "--json")
    assert code == 0 and out["verdict"] == "not_oom"
    assert out["actions"] == [] and out["new_job_id"] is None
    assert _ledger_rows() == before
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "ValueError" in md or "not_oom" in md


def test_job_name_with_spaces_and_equals_still_finds_its_logs(scenario):
    """A name as people write them (`llama lr=3e-4 bs=8`), and `%x` in the output path: the log's
    path Slurm holds has spaces and "=" in it; runbook reads it whole and finds the OOM."""
    s = scenario("llama lr=3e-4 bs=8", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    assert "JobName=llama lr=3e-4 bs=8" in sh("scontrol", "show", "job", job)
    dry = dry_run_changes_nothing(job)
    assert dry["verdict"] == "fragmentation", dry
    sh("scancel", job)


def test_kill_9_of_runbook_midway_shows_interrupted_and_oom_resumes_it(scenario):
    """`kill -9` of runbook while it handles a job: `runbook incidents` says interrupted (not
    running forever), and `runbook oom JOB` resumes that same incident; Slurm shows one scancel's
    effect and exactly one rerun."""
    s = scenario("killmid", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    conn = state.site_db(load_site("devcluster", environ={}))
    proc = subprocess.Popen(
        ["runbook", "--site", "devcluster", "oom", job, "--yes", "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = wait_until(
        lambda: conn.execute(
            "SELECT id FROM incidents WHERE job_id = ? AND status = 'running'", (job,)
        ).fetchone(),
        60,
        "runbook's incident to start",
    )["id"]
    proc.kill()
    proc.wait(30)
    code, rows = runbook("incidents", "--json")
    mine = [r for r in rows if r["job_id"] == job]
    if mine[0]["status"] == "running":  # never: the process is gone
        pytest.fail(f"a killed incident still reads running: {mine}")
    assert mine[0]["id"] == first and mine[0]["status"] in ("interrupted", "complete")
    out = act(job)
    assert out["incident"] == first and out["verdict"] == "fragmentation" and out["new_job_id"]
    keys = [
        r[0]
        for r in conn.execute(
            "SELECT key FROM ledger WHERE status = 'applied' AND key LIKE ?", (f"%:{job}%",)
        )
    ]
    assert sorted(k.split(":")[0] for k in keys).count("submit") == 1, keys
    children = [
        ln
        for ln in sh("squeue", "-h", "-t", "all", "-o", "%i|%k").splitlines()
        if f"parent={job}," in ln
    ]
    assert len(children) == 1, children
    s.wait_done(out["new_job_id"])


def test_per_task_logs_of_srun_output_in_a_plain_script(scenario, tmp_path):
    """A plain script (not runbook's template) whose srun writes one file per task
    (`srun --output=%x-%j-%t.out`): the batch log holds only srun's notices; the OOM is in rank
    3's own file, and runbook reads it there, with the rank from the file name."""
    from runbook.jobfiles.templates import render

    s = scenario("pertask", frag_mib_per_step=6000, long_step=1)
    text = render(str(TEMPLATE), s.vars)
    # As a person writes it: no runbook header, srun with per-task output files.
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("# runbook:"))
    body = body.replace("srun -l python3", "srun --output=%x-%j-%t.out python3")
    assert "--output=%x-%j-%t.out" in body
    script = tmp_path / "train.sbatch"
    script.write_text(body + "\n")
    # In the debug partition: the sweep tests of the gpu partition must not find it afterwards.
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    wait_until(
        lambda: any(
            "Tried to allocate" in p.read_text(errors="replace")
            for p in s.workdir.glob(f"pertask-{job}-*.out")
        ),
        120,
        "the OOM in a per-task file",
    )
    assert "Tried to allocate" not in log_of(s.workdir, job)  # not in the batch log
    dry = dry_run_changes_nothing(job)
    assert dry["verdict"] == "fragmentation", dry
    sh("scancel", job)


def test_options_on_the_sbatch_command_line_come_back_on_the_rerun(scenario, tmp_path):
    """`sbatch -N2 --ntasks-per-node=2 --gres=gpu:2 --mem=400M --time=30 -J x -o x-%j.log
    job.sh` with a script that states none of it: the rerun has the same nodes, tasks, GPUs,
    memory, time limit, name and log pattern, as Slurm itself records them."""
    from runbook.jobfiles.templates import render

    s = scenario("cmdline", frag_mib_per_step=6000, long_step=1)
    text = render(str(TEMPLATE), s.vars)
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith(("# runbook:", "#SBATCH")))
    script = tmp_path / "job.sh"
    script.write_text(body + "\n")
    job = sh(
        "sbatch",
        "--parsable",
        "-N2",
        "--ntasks-per-node=2",
        "--gres=gpu:2",
        "--mem=400M",
        "--time=30",
        "-J",
        "x",
        "-o",
        f"{s.workdir}/x-%j.log",
        f"--chdir={s.workdir}",
        "--nodelist=gpu-[01-02]",
        str(script),
    ).strip()
    wait_until(
        lambda: (
            "Tried to allocate" in (s.workdir / f"x-{job}.log").read_text(errors="replace")
            if (s.workdir / f"x-{job}.log").exists()
            else False
        ),
        120,
        "the OOM in x-JOB.log",
    )
    out = act(job)
    assert out["verdict"] == "fragmentation" and out["new_job_id"], out
    new = out["new_job_id"]
    shown = sh("scontrol", "show", "job", new)
    for want in (
        "NumNodes=2",
        "NumTasks=4",
        "gres/gpu=4",
        "MinMemoryNode=400M",
        "TimeLimit=00:30:00",
        "JobName=x\n",
        f"StdOut={s.workdir}/x-{new}.log",
    ):
        assert want in shown, (want, shown)
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["plan"]["readback"]["mismatches"] == []
    assert report["plan"]["readback"]["new"] == {"nodes": 2, "tasks": 4, "gpus": 4}
    s.wait_done(new)


def test_knobs_in_a_recipe_file_change_in_a_copy_and_the_rerun_passes(scenario, tmp_path):
    """An HF-style job keeps its micro-batch and accumulation in a YAML recipe the script names.
    runbook halves the micro-batch and doubles the accumulation in a copy written beside the new
    script (the user's recipe untouched), points the rerun at it, and the rerun passes."""
    from runbook.jobfiles.templates import render

    s = scenario("recipe", long_factor=2.5)  # micro-batch 8 OOMs, 4 fits
    text = render(str(TEMPLATE), s.vars)
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("# runbook:"))
    body = body.replace("--micro-batch-size 8 --grad-accum 2", "--config recipe.yaml")
    assert "--config recipe.yaml" in body and "--micro-batch-size" not in body
    recipe = s.workdir / "recipe.yaml"
    original = (
        "# training\nper_device_train_batch_size: 8  # per GPU\ngradient_accumulation_steps: 2\n"
    )
    recipe.write_text(original)
    script = tmp_path / "train.sbatch"
    script.write_text(body + "\n")
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    folder = Path(out["folder"])
    plan = json.loads((folder / "report.json").read_text())["plan"]
    assert plan["rung"] == "halve_micro_batch"
    assert any("recipe.runbook-halve_micro_batch.yaml" in c for c in plan["changes"])
    copy = folder / "recipe.runbook-halve_micro_batch.yaml"
    assert copy.read_text() == original.replace(": 8", ": 4").replace(": 2", ": 4")
    assert recipe.read_text() == original  # the user's file, untouched
    rerun_script = (folder / "job.halve_micro_batch.sbatch").read_text()
    assert f"--config {copy}" in rerun_script
    log = s.wait_done(out["new_job_id"])
    assert "micro-batch 4 x grad-accum 4" in log and "training finished at step 10" in log
