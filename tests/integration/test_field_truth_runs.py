"""Issue 34's field situations on the real cluster, through the CLI, each checked in Slurm: a
task of a job array (cancelled by its task id, rerun as that index), the job's own environment on
the rerun (never runbook's), a node list the job pinned, a log other submissions append to, a
requeued job whose earlier run OOMed, and verify on a labelled rerun cancelled mid-training."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.integration.test_field_truth import children_of, plain_script, runbook, runbook_json
from tests.integration.test_oom_scenarios import faulty_gpu02

pytestmark = pytest.mark.integration


def _array_script(s, path: Path) -> Path:
    plain_script(s, path)
    text = path.read_text().replace("/%x-%j.out", "/%x-%A_%a.out")
    lines = text.splitlines()
    path.write_text("\n".join([lines[0], "#SBATCH --array=0-1", *lines[1:]]) + "\n")
    return path


def test_an_array_task_is_cancelled_by_its_task_id_and_rerun_as_that_index(scenario, tmp_path):
    """Both tasks of a 2-task array OOM and wedge. The task whose raw id is the array's own id
    (the one `scancel A` would take for the whole array) is handled: the array's own id is
    refused with its tasks listed; `runbook oom --job A_T` cancels that task only (the other
    keeps running), and the rerun is index T of a new array, logging to its own %A_%a file."""
    s = scenario("arr", nodes=1, ranks_per_node=2, frag_mib_per_step=6000)
    script = _array_script(s, tmp_path / "arr.sbatch")
    array = sh("sbatch", "--parsable", "-p", "debug", str(script)).strip()
    logs = [s.workdir / f"arr-{array}_{t}.out" for t in (0, 1)]
    wait_until(
        lambda: all(p.exists() and "Tried to allocate" in p.read_text() for p in logs),
        180,
        "both tasks to OOM",
    )
    rows = [ln.split() for ln in sh("squeue", "-h", "-r", "-j", array, "-o", "%i %A").splitlines()]
    (own,) = [task for task, raw in rows if raw == array]  # the task that holds the array's id
    (other,) = [task for task, raw in rows if raw != array]
    code, out, err = runbook("oom", "--job", array, "--yes")
    assert code == 2 and f"job {array} is a job array" in err and own in err, (out, err)
    assert squeue_state(own) == squeue_state(other) == "RUNNING"  # nothing was done

    # A job that waits on the task by its task id (a chain): it follows the rerun's task.
    # Its output goes nowhere: once the rerun ends well it runs, and must not write into the
    # folder the tests run from.
    waits = sh(
        "sbatch", "--parsable", f"--dependency=afterok:{own}", "--mem=50M", "-o", "/dev/null",
        "--wrap=true",
    )  # fmt: skip
    code, doc = runbook_json("oom", own, "--yes")
    assert code == 0 and doc["verdict"] == "fragmentation", doc
    task = own.split("_")[1]
    new = doc["new_job_id"]
    assert new and new.endswith(f"_{task}"), doc
    assert f"Dependency=afterok:{new}" in sh("scontrol", "show", "job", waits.strip())
    wait_until(lambda: (sacct_row(own) or {}).get("state", "").startswith("CANCELLED"), 30, own)
    assert squeue_state(other) == "RUNNING"  # the other task was not touched
    shown = sh("scontrol", "show", "job", new)
    assert f"ArrayTaskId={task} " in shown
    assert f"StdOut={s.workdir}/arr-{new}.out" in shown
    cancel = next(a for a in doc["actions"] if a["kind"] == "cancel")
    assert cancel["argv"][-1] == own and cancel["status"] == "applied"
    assert "Slurm shows it ending" in cancel["message"]
    report = (Path(doc["folder"]) / "report.json").read_text()
    assert f'"array_job_id": "{array}"' in report
    md = (Path(doc["folder"]) / "report.md").read_text()
    assert f"task {task} of job array {array}" in md
    log = s.wait_done(new)
    assert "training finished at step 10" in (s.workdir / f"arr-{new}.out").read_text() + log
    sh("scancel", array, waits.strip(), check=False)


def test_the_rerun_gets_the_job_s_environment_and_node_list_never_runbook_s(scenario, tmp_path):
    """A job submitted with its own variables (--export=ALL,EXTRA=...) and a node list on the
    sbatch command line; runbook runs with secrets in its environment. The rerun, read from
    inside the job, has the job's variables and none of runbook's; Slurm shows its node list."""
    s = scenario("envjob", frag_mib_per_step=6000)
    probe = (
        'echo "ENV-PROBE JOBVAR=${JOBVAR:-unset} EXTRA=${EXTRA:-unset} '
        'LEAK=${RUNBOOK_LEAK_PROBE:-unset} TOKEN=${RUNBOOK_HOOK_TOKEN:-unset}"\n'
    )
    script = plain_script(s, tmp_path / "job.sbatch", before_srun=probe)
    job = subprocess.run(
        [
            "sbatch",
            "--parsable",
            "-p",
            "debug",
            "--export=ALL,EXTRA=x y",
            "--nodelist=gpu-[01-02]",
            str(script),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "JOBVAR": "mine"},
    ).stdout.strip()
    s.wait_failure(job, "Tried to allocate")
    code, doc = runbook_json(
        "oom",
        job,
        "--yes",
        env={"RUNBOOK_LEAK_PROBE": "leaked", "RUNBOOK_HOOK_TOKEN": "t0ps3cret", "JOBVAR": "rb"},
    )
    assert code == 0 and doc["new_job_id"], doc
    new = doc["new_job_id"]
    assert "ReqNodeList=gpu-[01-02]" in sh("scontrol", "show", "job", new)
    s.wait_done(new)
    from tests.integration.test_oom_scenarios import log_of

    line = next(ln for ln in log_of(s.workdir, new).splitlines() if "ENV-PROBE" in ln)
    assert line == "ENV-PROBE JOBVAR=mine EXTRA=x y LEAK=unset TOKEN=unset", line
    submit = next(a for a in doc["actions"] if a["kind"] == "submit")
    assert "--export=ALL" in submit["argv"]  # the recorded environment holds EXTRA
    assert not any("t0ps3cret" in w or "leaked" in w for w in submit["argv"])
    (env_file,) = Path(doc["folder"]).glob("job.*.env")
    assert oct(env_file.stat().st_mode & 0o777) == "0o600"
    assert "t0ps3cret" not in (Path(doc["folder"]) / "report.md").read_text()


def test_a_pinned_node_list_loses_the_faulty_node_and_the_rerun_runs(scenario, tmp_path):
    """The script pins its nodes (#SBATCH --nodelist=gpu-[01-02]) and gpu-02 has a GPU fault:
    the rerun keeps the pin less gpu-02 (sbatch no longer refuses it with "Invalid node name
    specified"), runs elsewhere, and completes."""
    s = scenario("pinned")
    faulty_gpu02(s)
    script = plain_script(s, tmp_path / "job.sbatch")
    lines = script.read_text().splitlines()
    script.write_text("\n".join([lines[0], "#SBATCH --nodelist=gpu-[01-02]", *lines[1:]]) + "\n")
    try:
        job = sh("sbatch", "--parsable", "-p", "debug", str(script)).strip()
        s.wait_failure(job, "Tried to allocate")
        code, doc = runbook_json("oom", job, "--yes")
        assert code == 0 and doc["verdict"] == "gpu_fault" and doc["new_job_id"], doc
        submit = next(a for a in doc["actions"] if a["kind"] == "submit")
        assert "--exclude=gpu-02" in submit["argv"] and "--nodelist=gpu-01" in submit["argv"]
        s.wait_done(doc["new_job_id"])
        assert "gpu-02" not in sh("sacct", "-X", "-n", "-j", doc["new_job_id"], "-o", "NodeList")
    finally:
        sh("scontrol", "update", "nodename=gpu-02", "state=resume", check=False)


def test_an_earlier_job_s_oom_in_a_shared_log_is_not_this_job_s(scenario, tmp_path):
    """Two submissions append to one log (a fixed --output, --open-mode=append): the first OOMs
    and is cancelled; the second fails of a plain Python error. The first job's OOM is not the
    second's failure: no OOM verdict, nothing cancelled or resubmitted, the report says which
    lines were set aside and why."""
    s = scenario("shared", frag_mib_per_step=6000)
    log = s.workdir / "shared.log"
    first = plain_script(s, tmp_path / "first.sbatch")
    text = first.read_text().replace(f"--output={s.workdir}/%x-%j.out", f"--output={log}")
    lines = text.splitlines()
    first.write_text("\n".join([lines[0], "#SBATCH --open-mode=append", *lines[1:]]) + "\n")
    second = tmp_path / "second.sbatch"
    # The second job fails of a plain error at step 6 (rank 3) and never runs out of memory.
    second.write_text(
        first.read_text()
        .replace("--frag-mib-per-step 6000", "--frag-mib-per-step 0")
        .replace("--ckpt-every", "--fail-with value_error --ckpt-every")
    )
    one = sh("sbatch", "--parsable", "-p", "debug", str(first)).strip()
    wait_until(lambda: log.exists() and "Tried to allocate" in log.read_text(), 120, "the OOM")
    sh("scancel", one)
    wait_until(lambda: not squeue_state(one), 60, f"job {one} to leave the queue")
    two = sh("sbatch", "--parsable", "-p", "debug", str(second)).strip()
    wait_until(lambda: "ValueError" in log.read_text(), 120, "the second job's ValueError")
    code, doc = runbook_json("oom", two, "--yes")
    assert doc["verdict"] not in ("true_oom", "fragmentation", "co_tenant"), doc
    # Its own lines (after a stamp at its start) say ValueError; without one, unknown.
    assert doc["verdict"] in ("not_oom", "unknown") and doc["new_job_id"] is None, doc
    assert "submit" not in [a["kind"] for a in doc["actions"]]
    assert children_of(two) == []
    report = (Path(doc["folder"]) / "report.md").read_text()
    assert "set aside" in report and "--open-mode=append" in report
    sh("scancel", two, check=False)


def test_a_requeued_job_s_earlier_oom_is_not_its_second_run_s_failure(scenario):
    """A requeued job (Restarts 1, its log opened for appending): its first run OOMed, its
    second run fails of a plain Python error. runbook reads the second run
    only (after Slurm's own requeue notice): not an OOM, report only, nothing resubmitted."""
    s = scenario("requeued", frag_mib_per_step=6000, extra_args="$FAIL")
    script = plain_script(
        s,
        s.workdir / "job.sbatch",
        # The second run fails of a plain error and never runs out of memory (the last
        # --frag-mib-per-step wins).
        before_srun='FAIL=""; [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ] && '
        'FAIL="--fail-with value_error --frag-mib-per-step 0"\n',
    )
    # Slurm 22.05 truncates the log when it starts a requeued job again (measured), unless it
    # is opened for appending, as requeue setups do to keep every run's lines.
    job = sh(
        "sbatch", "--parsable", "-p", "debug", "--requeue", "--open-mode=append", str(script)
    ).strip()
    s.wait_failure(job, "Tried to allocate")
    sh("scontrol", "requeue", job)
    # Slurm starts it again once its old credential expired (cred_expire, 15 s on the test
    # cluster); starting it earlier by hand is refused ("Job credential revoked").
    from tests.integration.test_oom_scenarios import log_of

    wait_until(lambda: "ValueError" in log_of(s.workdir, job), 150, "the second run's error")
    assert "Tried to allocate" in log_of(s.workdir, job)  # the first run's OOM is still there
    code, doc = runbook_json("oom", job, "--yes")
    assert code == 0 and doc["verdict"] == "not_oom" and doc["new_job_id"] is None, doc
    assert children_of(job) == []
    report = (Path(doc["folder"]) / "report.md").read_text()
    assert "earlier run" in report
    sh("scancel", job, check=False)


def test_verify_on_a_labelled_rerun_cancelled_while_it_trains_is_failed(scenario):
    """The rerun (srun -l: every line under its task label) is cancelled by a person while it
    trains, before the step the original failed at. Slurm's cancel notice names the job id
    under the label; it is not a training step: verify says failed, not passed."""
    s = scenario("slowrerun", frag_mib_per_step=6000, extra_args="--step-seconds 2")
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    code, doc = runbook_json("oom", job, "--yes")
    assert code == 0 and doc["new_job_id"], doc
    new = doc["new_job_id"]
    from tests.integration.test_oom_scenarios import log_of

    wait_until(lambda: "0: step 5/" in log_of(s.workdir, new), 120, "the rerun to train")
    sh("scancel", new)
    wait_until(
        lambda: (r := sacct_row(new)) is not None and r["state"].startswith("CANCELLED"),
        60,
        "the rerun to be cancelled",
    )
    wait_until(lambda: "CANCELLED AT" in log_of(s.workdir, new), 30, "Slurm's notice in the log")
    # Accounting says CANCELLED while slurmctld may still hold the job COMPLETING (its ranks
    # being torn down), and verify rightly waits on a job that has not ended: wait for it.
    wait_until(lambda: squeue_state(new) != "COMPLETING", 60, "slurmctld to end the rerun")
    code, v = runbook_json("verify", "--incident", doc["incident"])
    assert code != 0 and v["state"] == "failed", v
    assert v["last_step"] is not None and v["last_step"] < v["failed_step"], v


WRITES_ITS_RECIPE = """MBS=${MBS:-8}
cat > recipe.yaml <<EOF
per_device_train_batch_size: $MBS
gradient_accumulation_steps: 2
EOF
"""


def test_a_script_that_writes_its_recipe_itself_is_patched_there_and_the_rerun_passes(
    scenario, tmp_path
):
    """The script writes its config with a here-document, from a `${MBS:-8}` default: the
    default is halved and the accumulation in the written config doubled (the global batch
    kept), in the script itself; the rerun trains at micro-batch 4 and gets past the step."""
    s = scenario("writtencfg", long_factor=2.5)  # micro-batch 8 OOMs at step 6, 4 fits
    script = plain_script(s, tmp_path / "job.sbatch", before_srun=WRITES_ITS_RECIPE)
    text = script.read_text().replace("--micro-batch-size 8 --grad-accum 2", "--config recipe.yaml")
    assert "--config recipe.yaml" in text and "--micro-batch-size" not in text
    script.write_text(text)
    job = sh("sbatch", "--parsable", "-p", "debug", "--nodelist=gpu-[01-02]", str(script)).strip()
    s.wait_failure(job, "Tried to allocate")
    code, doc = runbook_json("oom", job, "--yes")
    assert code == 0 and doc["verdict"] == "true_oom" and doc["new_job_id"], doc
    new = doc["new_job_id"]
    batch = tmp_path / "new.sbatch"
    sh("scontrol", "write", "batch_script", new, str(batch))
    rerun = batch.read_text()
    assert "MBS=${MBS:-4}" in rerun and "gradient_accumulation_steps: 4" in rerun, rerun
    log = s.wait_done(new)
    assert "micro-batch 4 x grad-accum 4" in log and "training finished at step 10" in log
