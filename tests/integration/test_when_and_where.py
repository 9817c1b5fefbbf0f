"""When and where it ran out (docs/design.md §3.1), end to end on the real cluster: the modelled training
job (examples/train_oom) fails in evaluation, at its optimizer's first step, in the resume's
torch.load, after a leak or after a warm-up, each through real code paths (a real nn.Module's
forward, a real torch.optim.Adam, a real torch.load calling its map_location), so the traceback
runbook reads is a real one. Each test goes through `runbook oom` and checks in Slurm what was,
and was not, resubmitted."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import torch

from tests.integration.slurm_helpers import sacct_row, sh, wait_until
from tests.integration.test_field_truth import plain_script
from tests.integration.test_oom_scenarios import act, log_of, runbook

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def report(out: dict) -> dict:
    return json.loads((Path(out["folder"]) / "report.json").read_text())


def needs_a_person(job: str) -> tuple[dict, dict]:
    """`runbook oom --yes` stops for a person: exit 4, the wedged job cancelled, nothing
    resubmitted."""
    code, out = runbook("oom", "--job", job, "--yes", "--json")
    assert code == 4, out
    assert out["new_job_id"] is None
    kinds = [a["kind"] for a in out["actions"]]
    assert "submit" not in kinds and "drain" not in kinds, kinds
    # The wedged job was stopped, and Slurm says so.
    wait_until(
        lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"),
        30,
        f"job {job} CANCELLED in accounting",
    )
    return out, report(out)


def test_an_evaluation_oom_halves_the_evaluation_batch_and_leaves_training_alone(scenario):
    s = scenario(
        "evalbatch", eval_batch=8, extra_args="--eval-every 2 --eval-act-mib-per-sample 9000"
    )
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    r = report(out)
    d, plan = r["diagnosis"], r["plan"]
    assert d["verdict"] == "true_oom" and d["cause"] == "eval_batch"
    assert d["phase"]["where"] == "eval" and d["phase"]["when"] == "eval_start"
    assert plan["rung"] == "halve_eval_batch"
    v = plan["variables"]
    assert (v["eval_batch"], v["micro_batch"], v["grad_accum"]) == (4, 8, 2)
    log = s.wait_done(out["new_job_id"])
    assert "training finished at step 10" in log
    code, ver = runbook("verify", "--incident", out["incident"], "--json")
    assert code == 0 and ver["state"] == "passed", ver


def test_an_evaluation_on_the_training_loaders_batch_halves_it_with_the_global_batch_kept(
    scenario, tmp_path
):
    """A program whose validation DataLoader takes the training's own option (-b), with no
    evaluation batch of its own (tests/data/eval_loader): its evaluation runs out at -b 8.
    runbook reads that from the program, halves -b with its accumulation raised, says the
    evaluation's batch changed with it, and the rerun evaluates every 2 steps to the end."""
    s = scenario(
        "evalshared", eval_batch=8, extra_args="--eval-every 2 --eval-act-mib-per-sample 9000"
    )
    (s.workdir / "run.py").write_text(
        (REPO / "tests" / "data" / "eval_loader" / "run.py").read_text()
    )
    script = plain_script(s, tmp_path / "job.sbatch", srun="srun -l python3")
    text = script.read_text()
    srun = next(ln for ln in text.splitlines() if ln.startswith("srun -l "))
    head, example_args = srun.split(f" {s.vars['program']} ", 1)
    example_args = re.sub(
        r" ?--(micro-batch-size|grad-accum|eval-batch-size) \d+", "", example_args
    )
    script.write_text(text.replace(srun, f"export EXAMPLE={s.vars['program']} "
                                   f"EXAMPLE_ARGS='{example_args}'\n{head} run.py -b 8"))  # fmt: skip
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    assert "micro-batch 8 x grad-accum 1" in log_of(s.workdir, job)
    out = act(job)
    r = report(out)
    d, plan = r["diagnosis"], r["plan"]
    assert (d["cause"], d["phase"]["where"]) == ("eval_batch", "eval"), d
    assert plan["rung"] == "halve_micro_batch", json.dumps(plan, indent=1)[:4000]
    assert "val_loader = DataLoader(..., batch_size=args.batch_size)" in plan["why"], plan["why"]
    assert "evaluation batch halved with it (--batch-size: run.py:20)" in plan["changes"]
    batch = tmp_path / "new.sbatch"
    sh("scontrol", "write", "batch_script", out["new_job_id"], str(batch))
    assert "srun -l python3 run.py --accum-steps 2 -b 4\n" in batch.read_text()
    log = s.wait_done(out["new_job_id"])
    assert "micro-batch 4 x grad-accum 2" in log and "training finished at step 10" in log


def test_a_silent_programs_evaluation_oom_is_after_its_training_steps_by_the_program(
    scenario, tmp_path
):
    """A program that prints nothing per epoch (tests/data/silent_loop) runs out in its first
    epoch's evaluation: its log shows no step, but its loop ran `loss = train()`, which steps the
    optimizer, first. `runbook oom` reads the program from the job's folder, says when from it
    and that it read it there, halves the evaluation's batch alone, and the rerun finishes."""
    s = scenario("silentloop")
    (s.workdir / "run.py").write_text(
        (REPO / "tests" / "data" / "silent_loop" / "run.py").read_text()
    )
    script = plain_script(s, tmp_path / "job.sbatch", srun="srun -l python3")
    text = script.read_text()
    srun = next(ln for ln in text.splitlines() if ln.startswith("srun -l "))
    head = srun.split(f" {s.vars['program']} ", 1)[0]
    script.write_text(text.replace(srun, f"export EXAMPLE={s.vars['program']}\n"
                                   f"{head} run.py --eval-batch-size 8"))  # fmt: skip
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    log = log_of(s.workdir, job)
    assert "training finished" not in log and "poch" not in log  # no line of progress
    out = act(job)
    d, plan = report(out)["diagnosis"], report(out)["plan"]
    assert (d["phase"]["where"], d["phase"]["when"]) == ("eval", "eval_start"), d["phase"]
    (said,) = [e for e in d["phase"]["evidence"] if "read from the program" in e]
    assert "run.py:" in said and "`loss = train()`" in said and "optimizer.step()" in said, said
    assert (d["cause"], plan["rung"]) == ("eval_batch", "halve_eval_batch"), plan
    batch = tmp_path / "new.sbatch"
    sh("scontrol", "write", "batch_script", out["new_job_id"], str(batch))
    assert "run.py --eval-batch-size 4\n" in batch.read_text()
    assert "training finished after 3 epochs" in s.wait_done(out["new_job_id"])


def evaluation_for_a_person(scenario, name: str, args: str) -> tuple[dict, dict]:
    """A job whose evaluation (every 2 steps, batch 8, `args`) runs out, and `runbook oom`
    stopping for a person."""
    s = scenario(name, eval_batch=8, extra_args=f"--eval-every 2 {args}")
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    return needs_a_person(job)


def test_an_evaluation_that_builds_a_graph_stops_for_a_person_with_the_line(scenario):
    out, r = evaluation_for_a_person(
        scenario, "evalgraph", "--eval-act-mib-per-sample 3500 --eval-keeps-graph"
    )
    d = r["diagnosis"]
    assert d["cause"] == "eval_no_grad" and d["phase"]["where"] == "eval"
    found = [f for f in d["source_findings"] if f["kind"] == "eval_no_grad"]
    assert found and found[0]["file"] == "train.py" and found[0]["text"] == "model(oom)"
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "## When and where" in md and "train.py:" in md


def test_an_evaluation_that_keeps_its_outputs_on_the_gpu_is_never_given_a_smaller_batch(scenario):
    """The evaluation appends every batch's outputs to a list on the GPU (all_preds.append):
    what runs out is the evaluation set's outputs, so halving its batch keeps as much in all.
    The job is no HF Trainer command line (eval_accumulation_steps cannot be set for it): a
    person, told what to change, and nothing resubmitted."""
    out, r = evaluation_for_a_person(
        scenario, "evalkept", "--eval-act-mib-per-sample 500 --eval-kept-mib-per-sample 1200"
    )
    d, plan = r["diagnosis"], r["plan"]
    assert d["cause"] == "eval_predictions"
    assert (d["phase"]["where"], d["phase"]["when"]) == ("eval", "eval_start")
    assert plan["rung"] is None and "halve_eval_batch" not in dict(plan["passed_over"])
    assert "eval_accumulation" in dict(plan["passed_over"])
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "all_preds.append(model(oom))" in md
    assert "move each batch's outputs to the CPU" in md


def test_an_hf_trainer_script_keeping_predictions_gets_eval_accumulation_and_runs(
    scenario, tmp_path
):
    """The same evaluation in a plain script written for an HF Trainer (its own spellings:
    --per_device_eval_batch_size, no eval_accumulation_steps): `runbook oom` adds
    --eval_accumulation_steps 1 beside the batch flag, touches no batch, resubmits, and the
    rerun evaluates every 2 steps to the end; verify says it got past the failing step."""
    s = scenario(
        "evalacc",
        eval_batch=8,
        extra_args="--eval-every 2 --eval-act-mib-per-sample 500 --eval-kept-mib-per-sample 1200",
    )
    script = plain_script(s, tmp_path / "job.sbatch", srun="srun -l python3")
    script.write_text(
        script.read_text().replace("--eval-batch-size 8", "--per_device_eval_batch_size 8")
    )
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    r = report(out)
    d, plan = r["diagnosis"], r["plan"]
    assert (d["cause"], d["phase"]["where"]) == ("eval_predictions", "eval")
    assert plan["rung"] == "eval_accumulation", plan
    new = out["new_job_id"]
    batch = tmp_path / "new.sbatch"
    sh("scontrol", "write", "batch_script", new, str(batch))
    (run_line,) = [ln for ln in batch.read_text().splitlines() if ln.startswith("srun ")]
    assert "--per_device_eval_batch_size 8 --eval_accumulation_steps 1 " in run_line, run_line
    assert "--micro-batch-size 8 " in run_line and "--grad-accum 2 " in run_line, run_line
    log = s.wait_done(new)
    assert "training finished at step 10" in log
    code, ver = runbook("verify", "--incident", out["incident"], "--json")
    assert code == 0 and ver["state"] == "passed", ver


def test_adam_state_at_the_first_step_takes_no_batch_rung(scenario):
    s = scenario("adamstate", extra_args="--optimizer-state-mib 70000")
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out, r = needs_a_person(job)
    d, plan = r["diagnosis"], r["plan"]
    assert d["cause"] == "optimizer_state"
    # All four ranks fail at once; rank 0's "Starting training" may land after the first
    # failing rank's traceback in the shared log, and then the log does not show when.
    assert d["phase"]["where"] == "optimizer_step"
    assert d["phase"]["when"] in ("first_step", "unknown")
    passed = dict(plan["passed_over"])
    assert "optimizer_state" in passed["halve_micro_batch"]
    assert "optimizer_state" in passed["activation_checkpointing"]


def test_a_resume_that_loads_every_rank_onto_gpu_0_is_not_a_co_tenant(scenario):
    s = scenario("ontoone", extra_args="--resume-onto-one-gpu --ckpt-mib 35000")
    ckpt = s.workdir / "checkpoints" / "step_4.pt"
    ckpt.parent.mkdir()
    torch.save({"step": 4, "weights": torch.zeros(1024)}, ckpt)
    s.vars["resume_from"] = str(ckpt)
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out, r = needs_a_person(job)
    d, plan = r["diagnosis"], r["plan"]
    assert d["verdict"] != "co_tenant", d["reasons"]
    assert d["cause"] == "checkpoint_map_location"
    assert (d["phase"]["where"], d["phase"]["when"]) == ("checkpoint_load", "after_resume")
    assert plan["exclude"] == [] and not plan.get("drain")
    assert any("job's own" in x for x in d["reasons"]), d["reasons"]


def test_a_leak_stops_for_a_person_instead_of_burning_a_rerun(scenario):
    s = scenario("leak", extra_args="--leak-mib-per-step 4000 --mem-lines")
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out, r = needs_a_person(job)
    d = r["diagnosis"]
    assert d["trend"]["kind"] == "leak" and d["trend"]["series"] == "instrument"
    assert d["cause"] == "leak" and d["phase"]["when"] == "mid_run"
    html = (Path(out["folder"]) / "report.html").read_text()
    assert 'id="trend"' in html


def test_a_leak_only_lightning_s_metrics_file_shows_stops_for_a_person(scenario):
    """The log carries no memory series; the job's CSVLogger file under its working folder does
    (DeviceStatsMonitor's columns, rank 0): runbook oom finds it, reads the leak from it, and
    burns no rerun. An older run's metrics.csv in the same folder is not this run's."""
    s = scenario("lightleak", extra_args="--leak-mib-per-step 4000 --lightning-csv logs/leak")
    stale = s.workdir / "logs" / "old" / "version_0" / "metrics.csv"
    stale.parent.mkdir(parents=True)
    stale.write_text(
        "DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current,epoch,step\n"
        + "".join(f"{2**30},0,{n}\n" for n in range(10))  # flat: would hide the leak
    )
    os.utime(stale, (1_700_000_000, 1_700_000_000))  # written long before this run
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    assert "RUNBOOK_INSTRUMENT mem" not in log_of(s.workdir, job)
    out, r = needs_a_person(job)
    d = r["diagnosis"]
    assert d["trend"]["series"] == "lightning" and d["trend"]["kind"] == "leak", d["trend"]
    assert d["trend"]["evidence"][0].startswith("logs/leak/version_0/metrics.csv: step 0")
    assert d["cause"] == "leak"


def test_a_warm_up_curve_is_not_a_leak_and_the_ladder_applies(scenario):
    s = scenario(
        "warmup", long_factor=2.5, extra_args="--warmup-mib 6000 --warmup-steps 3 --mem-lines"
    )
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    r = report(out)
    # Rank 3's own series: its step starts warm up (rising 3 steps, then flat), never a leak;
    # its step 6 draws batches 2.5 times as long and asks for about twice any earlier step's
    # peak: the spike of the longest batch, which the ladder's smaller micro-batch meets.
    t = r["diagnosis"]["trend"]
    assert t["kind"] == "spike" and t["why"].startswith("warmup at step starts"), t
    assert r["diagnosis"]["cause"] == "longest_batch"
    assert r["plan"]["rung"] == "halve_micro_batch"
    log = s.wait_done(out["new_job_id"])
    assert "training finished at step 10" in log
    assert "Resuming from checkpoint" in log_of(s.workdir, out["new_job_id"])
