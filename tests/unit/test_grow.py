"""grow_world (issue 20): a job runbook shrank returns to its lineage's original size when the
nodes are back and it has saved a checkpoint since it started. The decision and the plan are
data in, data out; the end-to-end run is tests/integration/test_oom_scenarios.py."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

from runbook.actions.policy import confirm_policy
from runbook.checkpoints import Checkpoint
from runbook.evidence.collect import LineageEvidence
from runbook.jobfiles.templates import render
from runbook.planning import resources
from runbook.planning.grow import decide, make_grow_plan
from runbook.site import SiteConfig
from runbook.slurm.client import JobInfo

DATA = Path(__file__).resolve().parents[1] / "data" / "sbatch"
HF = (DATA / "hf_accelerate.sbatch").read_text()
SITE = SiteConfig()
# The HF accelerate recipe (2 nodes, 16 processes) as shrink_world left it coming from 3 nodes:
# accumulation 4 x 3/2 = 6.
HF_SHRUNK = HF.replace("--gradient_accumulation_steps 4", "--gradient_accumulation_steps 6")
STARTED = datetime(2026, 11, 23, 9, 0, 0)


def shrunk_job(**kw) -> JobInfo:
    base = dict(
        job_id="42",
        state="RUNNING",
        nodes=["gpu-01", "gpu-03"],
        num_nodes=2,
        num_tasks=4,
        partition="gpu",
        tres="cpu=4,gres/gpu=4",
        excluded=["gpu-02"],
        start=STARTED,
        work_dir="/scratch/run",
        resources={"nodes": "2", "ntasks": "4", "mem": "400M", "job_name": "llama lr=3e-4"},
    )
    base.update(kw)
    return JobInfo(**base)


def lineage(root_nodes=3, tried=(("42", "shrink_world"),)) -> LineageEvidence:
    return LineageEvidence(tried=list(tried), root_nodes=root_nodes, start=0.0)


def ckpt(at: float, step=8) -> Checkpoint:
    return Checkpoint(
        f"/scratch/run/checkpoints/step_{step}.pt", step, "torch_save", True, "ok", at
    )


AFTER = ckpt(STARTED.timestamp() + 600)
BEFORE = ckpt(STARTED.timestamp() - 600, step=4)
ALL_BACK = {"gpu-01", "gpu-02", "gpu-03"}


def test_grows_when_the_nodes_are_back_and_a_checkpoint_follows_the_start():
    d = decide(shrunk_job(), lineage(), ALL_BACK, AFTER)
    assert d.verdict == "grow", d.reasons
    assert (d.before, d.after) == (2, 3)
    assert d.readmit == ["gpu-02"]  # excluded, drained, returned to service


def test_waits_while_the_partition_cannot_hold_the_original_size():
    d = decide(shrunk_job(), lineage(), {"gpu-01", "gpu-03"}, AFTER)
    assert d.verdict == "nodes_not_back"
    assert "2 usable nodes, the lineage needs 3" in d.reasons[-1]


def test_waits_for_a_checkpoint_written_after_the_job_started():
    # The newest checkpoint is the one it resumed from: growing now loses all its progress.
    for newest in (BEFORE, None, dataclasses.replace(AFTER, mtime=None)):
        d = decide(shrunk_job(), lineage(), ALL_BACK, newest)
        assert d.verdict == "no_checkpoint_yet", newest
        assert "would lose its progress" in d.reasons[-1]


def test_a_pending_job_grows_without_a_new_checkpoint():
    d = decide(shrunk_job(state="PENDING", start=None), lineage(), ALL_BACK, BEFORE)
    assert d.verdict == "grow"


def test_only_jobs_runbook_shrank_and_only_while_they_run():
    assert decide(shrunk_job(state="FAILED"), lineage(), ALL_BACK, AFTER).verdict == "not_running"
    # Sized smaller by a person, or on another rung: not runbook's to grow.
    other = lineage(tried=[("42", "halve_micro_batch")])
    assert decide(shrunk_job(), other, ALL_BACK, AFTER).verdict == "not_shrunk"
    assert decide(shrunk_job(), lineage(tried=[]), ALL_BACK, AFTER).verdict == "not_shrunk"
    # Already back at full size (grown earlier on this lineage).
    full = shrunk_job(num_nodes=3, num_tasks=6)
    assert decide(full, lineage(), ALL_BACK, AFTER).verdict == "not_shrunk"


def test_what_cannot_be_read_is_unknown_never_a_guess():
    d = decide(shrunk_job(), lineage(root_nodes=None), ALL_BACK, AFTER)
    assert d.verdict == "unknown" and "not known" in d.reasons[0]
    d = decide(shrunk_job(), lineage(), None, AFTER)
    assert d.verdict == "unknown" and "usable" in d.reasons[-1]


def test_the_plan_lowers_accumulation_and_gives_back_the_nodes_and_tasks():
    variables = {
        "nodes": 2,
        "ranks_per_node": 2,
        "micro_batch": 8,
        "grad_accum": 3,
        "workdir": "/scratch/run",
        "alloc_conf": "",
    }
    script = render(str(DATA / "train.sbatch.j2"), variables)
    job = shrunk_job()
    d = decide(job, lineage(), ALL_BACK, AFTER)
    p = make_grow_plan(d, SITE, job=job, script=script, run=lineage(), checkpoint=AFTER)
    assert p.acts and p.rung == "grow_world"
    assert p.patch.variables["grad_accum"] == 2 and p.patch.variables["nodes"] == 3
    assert "--nodes=3" in p.sbatch_args and "--ntasks=6" in p.sbatch_args
    assert "--nodes=2" not in p.sbatch_args and "--ntasks=4" not in p.sbatch_args
    assert not any(a.startswith("--exclude") for a in p.sbatch_args)  # gpu-02 readmitted
    assert "--job-name=llama lr=3e-4" in p.sbatch_args  # the rest of the job as it was
    assert p.checkpoint is AFTER
    # The read-back expects the full size: 6 tasks and 6 GPUs on 3 nodes.
    new = JobInfo("43", num_nodes=3, num_tasks=6, tres="cpu=6,gres/gpu=6")
    assert resources.mismatches(job, new, p.rung, p.world) == []
    wrong = JobInfo("43", num_nodes=2, num_tasks=4, tres="cpu=4,gres/gpu=4")
    assert resources.mismatches(job, wrong, p.rung, p.world) != []


def test_a_node_still_unusable_stays_excluded():
    job = shrunk_job(excluded=["gpu-02", "gpu-09"])
    d = decide(job, lineage(), ALL_BACK | {"gpu-04"}, AFTER)
    assert d.readmit == ["gpu-02"]
    p = make_grow_plan(d, SITE, job=job, script=HF_SHRUNK, run=lineage(), checkpoint=AFTER)
    assert "--exclude=gpu-09" in p.sbatch_args


def test_a_plain_script_gets_the_launcher_counts_scaled_back():
    job = shrunk_job()
    d = decide(job, lineage(), ALL_BACK, AFTER)
    p = make_grow_plan(d, SITE, job=job, script=HF_SHRUNK, run=lineage(), checkpoint=AFTER)
    assert p.acts, p.why
    new = p.patch.new
    assert "--gradient_accumulation_steps 4" in new
    assert "--num_machines 3" in new and "--num_processes 24" in new
    assert any("6 x 2 = 4 x 3" in c for c in p.patch.checks)


def test_accumulation_that_does_not_divide_back_needs_a_person():
    script = HF.replace("--gradient_accumulation_steps 4", "--gradient_accumulation_steps 5")
    job = shrunk_job()
    d = decide(job, lineage(), ALL_BACK, AFTER)
    p = make_grow_plan(d, SITE, job=job, script=script, run=lineage(), checkpoint=AFTER)
    assert not p.acts and p.needs_human
    assert "not a whole number" in p.why and "keeps its 2 nodes" in p.human_action


def test_a_waiting_decision_plans_nothing():
    job = shrunk_job()
    d = decide(job, lineage(), {"gpu-01"}, AFTER)
    p = make_grow_plan(d, SITE, job=job, script=HF, run=lineage(), checkpoint=AFTER)
    assert not p.acts and not p.needs_human and "until nodes return" in p.why


def test_growing_cancels_a_healthy_job_so_it_asks_unless_the_site_allows_it():
    declined = confirm_policy(SITE, "grow", rung="grow_world")
    assert declined is not None and declined(None) is False
    allowed = dataclasses.replace(
        SITE, policy=dataclasses.replace(SITE.policy, unattended_grow=True)
    )
    assert confirm_policy(allowed, "grow", rung="grow_world") is None
    assert confirm_policy(SITE, "grow", rung="grow_world", assume_yes=True) is None
