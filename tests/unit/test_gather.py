"""The one evidence builder (evidence.gather), data in, data out: the facts the incident and
`diagnose` both derive from what they read, each in one place. The inputs are real: the
Lightning metrics file of a real leak (tests/data/gpu/lightning_metrics.csv) and a real log."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

from runbook.evidence.collect import LineageEvidence
from runbook.evidence.gather import Code, Metrics, gather
from runbook.evidence.gpu_health import NodeHealth
from runbook.evidence.launcher_log import scan
from runbook.slurm.text import SlurmJobText

DATA = Path(__file__).resolve().parents[1] / "data"
LOG = (DATA / "logs" / "train_oom-eval-oom-srun-l.out").read_text()


def test_nothing_given_is_nothing_known():
    ev = gather()
    assert (ev.launch, ev.slurm, ev.job_id, ev.source, ev.series, ev.tried) == (
        None, None, None, None, None, (),
    )  # fmt: skip
    assert ev.parent_failed_step is None


def test_the_job_id_is_slurm_s_unless_the_caller_names_the_array_task():
    slurm = SlurmJobText(format="sacct", job_id="4242", state="FAILED")
    assert gather(slurm=slurm).job_id == "4242"
    assert gather(slurm=slurm, job_id="4241_3").job_id == "4241_3"


def test_files_a_person_gives_are_the_failing_node_s_and_a_probed_node_keeps_its_name():
    launch = scan(LOG)
    node = launch.first_failure.node
    assert node  # the real log names the node of its first failure
    assert gather(launch=launch, node_health=NodeHealth(node="")).node_health.node == node
    probed = NodeHealth(node="gpu-other")
    assert gather(launch=launch, node_health=probed).node_health.node == "gpu-other"


def test_the_lineage_gives_the_rungs_tried_and_the_parent_s_failing_step():
    run = LineageEvidence(tried=[("101", "halve_micro_batch"), ("100", "set_expandable_segments")])
    run.parent_failed_step = 1200
    ev = gather(lineage=run)
    assert ev.tried == ("halve_micro_batch", "set_expandable_segments")
    assert ev.parent_failed_step == 1200


def test_code_is_the_tree_a_person_names_or_the_programs_the_job_script_runs(tmp_path):
    (tmp_path / "train.py").write_text(
        "import torch\n\ndef resume(path):\n    return torch.load(path)\n"
    )  # torch.load without map_location: a finding the source check names
    tree = gather(code=Code(str(tmp_path))).source
    job = gather(code=Code(str(tmp_path), "#!/bin/bash\nsrun python train.py\n")).source
    assert tree.files == job.files == 1 and tree.findings
    assert [f.kind for f in tree.findings] == [f.kind for f in job.findings]
    none = gather(code=Code(str(tmp_path), "#!/bin/bash\nsrun ./a.out\n")).source
    assert none.files == 0 and "the job script names no Python file" in none.notes


def test_a_named_metrics_file_is_read_and_one_without_a_series_is_said(tmp_path):
    real = tmp_path / "metrics.csv"
    shutil.copy(DATA / "gpu" / "lightning_metrics.csv", real)
    ev = gather(metrics=Metrics(file=str(real), shown="--metrics metrics.csv"))
    assert ev.series is not None and ev.series.kind == "leak"
    empty = tmp_path / "other.csv"
    empty.write_text("epoch,step,train_loss\n0,9,0.5\n")
    launch = scan(LOG)
    ev = gather(launch=launch, metrics=Metrics(file=str(empty), shown="--metrics other.csv"))
    assert ev.series is None
    assert any(n.startswith("--metrics other.csv: no DeviceStatsMonitor") for n in launch.notes)


def test_the_job_s_folder_is_searched_for_this_run_s_metrics_file_only(tmp_path):
    run = tmp_path / "lightning_logs" / "version_0"
    run.mkdir(parents=True)
    shutil.copy(DATA / "gpu" / "lightning_metrics.csv", run / "metrics.csv")
    now = datetime.now()
    during = Metrics(folder=str(tmp_path), started=now - timedelta(hours=1), ended=now)
    ev = gather(metrics=during)
    assert (
        ev.series is not None and "lightning_logs/version_0/metrics.csv" in ev.series.evidence[-1]
    )
    old = (now - timedelta(days=3)).timestamp()
    os.utime(run / "metrics.csv", (old, old))  # another run's file: not evidence
    assert gather(metrics=during).series is None
    assert gather(metrics=Metrics(folder=str(tmp_path))).series is None  # no start: unknown
