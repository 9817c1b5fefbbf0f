"""`runbook hang` and the sweep's stall check end to end on a real hung job of the test cluster:
2 nodes x 2 ranks of examples/train_oom (gloo), where rank 3, on gpu-02, blocks in a data read
(`--hang-node gpu-02`) while ranks 0-2 wait in the all-reduce. py-spy (installed by cluster.sh)
reads the real stacks through sudo as the on-call account; runbook names rank 3 and gpu-02,
cancels, and resubmits without gpu-02 from the last checkpoint with the debug settings on; the
rerun, away from the bad node, finishes.

No GPU here: nvidia-smi and the kernel log are the nodes' stand-ins replaying recorded real
outputs of ../shared/corpus (a clean card, no processes, no Xid)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import corpus_records
from tests.integration.slurm_helpers import sacct_row, sh, squeue_state, wait_until
from tests.integration.test_oom_scenarios import runbook
from tests.integration.test_sweep import site_file

pytestmark = pytest.mark.integration


def _record(relpath: str, record_id: str) -> str:
    return next(r["text"] for r in corpus_records(relpath) if r["id"] == record_id)


def healthy_nodes(s) -> None:
    """gpu-01 and gpu-02 as the hung job's node health reads them: a clean card, no processes,
    no Xid (recorded real outputs)."""
    for node in ("gpu-01", "gpu-02"):
        s.health(
            node,
            kernel="",
            ecc=_record(
                "ops/nvidia_smi_remap_ecc.jsonl", "remap-dcgmexporter-16-v100-oldformat-partial"
            ),
            apps=_record("ops/nvidia_smi_apps.jsonl", "apps-gpud-550-h100x8-no-processes"),
        )


def hung_job(scenario, *sbatch_args):  # noqa: F811
    s = scenario("hang", long_step=6, extra_args="--hang-node gpu-02")
    healthy_nodes(s)
    job = s.submit(*sbatch_args)
    s.wait_failure(job, "loading shard 6")  # rank 3 entered its read; the others block
    return s, job


def test_hang_names_the_hung_rank_from_live_stacks_then_resubmits_without_its_node(
    scenario,  # noqa: F811
):
    # The job keeps PyTorch's flight recorder; runbook.instrument serves it on request.
    s, job = hung_job(scenario, "--export=ALL,TORCH_FR_BUFFER_SIZE=2000")
    code, dry = runbook("hang", job, "--dry-run", "--json")
    assert code == 0 and dry["verdict"] == "straggler_rank", dry
    assert squeue_state(job) == "RUNNING"  # the dry run stopped nothing
    assert [a["kind"] for a in dry["actions"]] == ["cancel", "write_file", "write_file", "submit"]

    code, out = runbook("hang", job, "--yes", "--json")
    assert code == 0 and out["verdict"] == "straggler_rank", out
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    d = report["diagnosis"]
    assert [(x["rank"], x["node"]) for x in d["suspects"]] == [(3, "gpu-02")]
    majority = next(g for g in d["groups"] if g["majority"])
    assert sorted(majority["ranks"]) == [0, 1, 2]
    assert majority["where"].startswith("all_reduce")
    outlier = next(g for g in d["groups"] if not g["majority"])
    assert outlier["stack"][0].startswith("fetch_shard_from_storage")
    assert report["evidence"]["capture"]["execs_per_node"] == 1
    # The flight recorder, read in the same exec: rank 3 one collective behind the others.
    fr = {int(k): v for k, v in d["flight_recorder"].items()}
    assert sorted(fr) == [0, 1, 2, 3], fr
    assert fr[3]["last_seq"] < fr[0]["last_seq"] == fr[1]["last_seq"] == fr[2]["last_seq"]
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "OUTLIER" in md and "fetch_shard_from_storage" in md
    # Cancelled in Slurm, after the capture.
    wait_until(lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30, "cancel")
    steps = [t["name"] for t in report["timeline"]]
    assert steps.index("capture") < steps.index("cancel")
    # The rerun: without gpu-02, from the checkpoint, with the debug settings.
    new = out["new_job_id"]
    shown = sh("scontrol", "show", "job", new)
    assert "ExcNodeList=gpu-02" in shown
    submit = next(a for a in out["actions"] if a["kind"] == "submit")
    assert "--exclude=gpu-02" in submit["argv"]
    log = s.wait_done(new)
    assert "NCCL_DEBUG INFO" in log and "resumed from" in log
    assert "training finished at step 10" in log


def test_the_sweep_finds_the_stalled_job_and_takes_its_stacks(scenario, tmp_path):  # noqa: F811
    s, job = hung_job(scenario)
    site = site_file(tmp_path, ["straggler_rank"], ["gpu"])
    text = Path(site).read_text()
    # Six seconds without a new step is a stall here; a site sets tens of minutes.
    Path(site).write_text(
        text.replace("py_spy_timeout_s = 10.0", "py_spy_timeout_s = 10.0\nstall_minutes = 0.1")
    )

    def sweep():
        import subprocess

        r = subprocess.run(
            ["runbook", "--site", site, "sweep", "--since", "30m", "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        return r.returncode, json.loads(r.stdout)

    code, first = sweep()  # sees step 5 for the first time: not yet a stall
    assert not any(ln["job_id"] == job for ln in first["jobs"]), first
    time.sleep(7)
    code, second = sweep()
    line = next(ln for ln in second["jobs"] if ln["job_id"] == job)
    assert line["verdict"] == "straggler_rank" and "no new training step" in line["action"], line
    assert line["incident"]
    wait_until(lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED"), 30, "cancel")


def test_a_chain_after_a_hung_job_is_held_through_the_cancel_and_follows_the_rerun(
    scenario,  # noqa: F811
):
    """`sbatch --dependency=afterany:H cleanup.sbatch` behind a hung job H: `runbook hang` holds
    the dependant before it cancels H (a cancel would start it at once), points it at the rerun
    (read back from slurmctld) and releases it; nothing ran on the cancel."""
    s, job = hung_job(scenario)
    marker = s.workdir / "cleanup.log"
    dep = sh(
        "sbatch",
        "--parsable",
        f"--dependency=afterany:{job}",
        f"--chdir={s.workdir}",
        "--mem=50M",
        f"--wrap=echo cleanup >> {marker}",
    ).strip()
    code, out = runbook("hang", job, "--yes", "--json")
    assert code == 0 and out["new_job_id"], out
    new = out["new_job_id"]
    shown = sh("scontrol", "show", "job", dep)
    assert f"Dependency=afterany:{new}" in shown and "JobHeld" not in shown, shown
    assert not marker.exists()  # the cancel of the hung job set nothing off
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    kinds = [a["kind"] for a in report["actions"]]
    assert kinds.index("hold") < kinds.index("cancel") < kinds.index("submit"), kinds
    assert {r["job"]: r["now"] for r in report["evidence"]["dependants"]} == {
        dep: f"afterany:{new}"
    }
    s.wait_done(new)
    wait_until(lambda: marker.exists(), 120, "the dependant to run after the rerun")
