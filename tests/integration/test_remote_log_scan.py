"""The log side of the evidence on the real test cluster: a 2-node x 2-rank job whose rank 3 dies
with a recorded real OOM message while the others wedge; logs are pulled over SSH, filtered on the
node, and the first failure is found with its node. Slurm's real outputs are parsed too."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from runbook.evidence.launcher_log import scan_parts
from runbook.evidence.log_filter import parse_grep_output, remote_grep_many_argv, split_locations
from runbook.site import load_site
from runbook.slurm import text as slurm_text
from runbook.slurm.paths import locate, task_of
from runbook.transport.ssh import SshSettings, SshTransport
from tests.conftest import corpus_records
from tests.integration.slurm_helpers import sacct_row, sbatch, sh, squeue_state, wait_until

pytestmark = pytest.mark.integration
HOSTILE_NAME = "train;touch PWNED;$(id)"


@pytest.fixture(scope="module")
def oom_job(cluster):
    """Rank 3 prints a real recorded OOM message and exits 1; ranks 0-2 print progress and block
    (a wedge, as they would in an all-reduce) until the test cancels the job."""
    jobs = cluster["RUNBOOK_CLUSTER_JOBS"]
    work = Path(tempfile.mkdtemp(prefix="scan-", dir=jobs))
    os.chmod(work, 0o755)
    message = next(r for r in corpus_records("oom_messages.jsonl") if r["id"] == "oom-032")["text"]
    (work / "oom.txt").write_text(message + "\n")
    (work / "rank.sh").write_text(
        "#!/bin/bash\n"
        'for i in $(seq 1 200); do echo "step $i loss 2.$i lr 3e-4 tokens/s 41234"; done\n'
        'if [ "$SLURM_PROCID" = 3 ]; then cat oom.txt >&2; exit 1; fi\n'
        "sleep 300\n"
    )
    # Pinned: the assertions below name the nodes, and Slurm may otherwise start it on gpu-[02-03]
    # while gpu-01 is still cleaning up an earlier test's job (seen once in CI).
    job = sbatch(
        "-N2",
        "--nodelist=gpu-[01-02]",
        "--ntasks-per-node=2",
        f"--job-name={HOSTILE_NAME}",
        f"--chdir={work}",
        "--output=%x-%j.out",
        "--wrap",
        "srun --output=%x-%j_%t.out bash rank.sh",
    )
    rank3 = work / f"{HOSTILE_NAME}-{job}_3.out"
    wait_until(
        lambda: rank3.exists() and "Tried to allocate" in rank3.read_text(),
        60,
        "rank 3's OOM message",
    )
    assert squeue_state(job) == "RUNNING"  # the survivors hold the allocation: the wedge
    sh("scancel", job)
    # While COMPLETING, scontrol's NodeList shrinks as nodes release, and accounting lags: wait
    # for the job to leave the queue and for sacct to hold its final row.
    wait_until(lambda: squeue_state(job) == "", 60, f"job {job} to leave the queue")
    wait_until(
        lambda: (
            (r := sacct_row(job))
            and r["state"].startswith("CANCELLED")
            and r["nodes"] == "gpu-[01-02]"
        ),
        30,
        "final accounting row",
    )
    return {"job": job, "work": work}


def test_logs_pulled_filtered_over_ssh_and_first_failure_found(cluster, oom_job):
    job, work = oom_job["job"], oom_job["work"]
    scontrol = slurm_text.parse(sh("scontrol", "-o", "show", "job", job))
    nodes = scontrol.nodes
    assert nodes == ["gpu-01", "gpu-02"]
    where = locate("%x-%j_%t.out", job_id=job, work_dir=str(work), job_name=HOSTILE_NAME)
    site = load_site("devcluster", environ={})
    t = SshTransport("gpu-01", SshSettings.from_site(site))
    try:
        result = t.run(remote_grep_many_argv([(where.directory, where.name_glob)]))
    finally:
        t.close()
    assert result.ok, result.stderr
    excerpts = parse_grep_output(split_locations(result.stdout)[0])
    by_rank = {task_of(where, p): e for p, e in excerpts.items()}
    assert "Tried to allocate" in by_rank[3].text()
    # The survivors' files hold only the consequences of the scancel above (slurmstepd's
    # "CANCELLED AT" line, or bash's "Terminated" when the sleep was killed first).
    for rank, e in by_rank.items():
        if rank != 3:
            assert "Tried to allocate" not in e.text()
            assert "CANCELLED AT" in e.text() or "Terminated" in e.text()
    total = sum(os.path.getsize(work / f) for f in os.listdir(work) if f.endswith(".out"))
    assert len(result.stdout) < total / 4  # filtered on the node, not copied
    assert not any("step 1 loss" in line for e in excerpts.values() for _, line in e.lines)
    assert not (work / "PWNED").exists() and not Path("PWNED").exists()

    report = scan_parts(
        [(e.text(), task_of(where, p)) for p, e in excerpts.items()],
        nodes=nodes,
        tasks_per_node=2,
    )
    ff = report.first_failure
    assert (ff.kind, ff.ranks, ff.node) == ("oom", [3], "gpu-02")
    oom = report.first_oom
    assert oom.rank == 3 and oom.tried_mib == 388.0


def test_real_sacct_and_scontrol_outputs_parse(cluster, oom_job):
    job = oom_job["job"]
    fixed = slurm_text.parse(sh("sacct", "-j", job))  # default fixed width, steps included
    assert fixed.format == "sacct-fixed" and fixed.job_id == job
    assert fixed.state == "CANCELLED"
    parsable = slurm_text.parse(
        sh("sacct", "-X", "-P", "-j", job, "-o", "JobID,JobName,State,ExitCode,NodeList")
    )
    assert (parsable.job_id, parsable.state, parsable.nodes) == (
        job,
        "CANCELLED",
        ["gpu-01", "gpu-02"],
    )
    bare = slurm_text.parse(sh("sacct", "-X", "-n", "-P", "-j", job, "-o", "JobID,State,ExitCode"))
    assert (bare.job_id, bare.state) == (job, "CANCELLED")
    multi = slurm_text.parse(sh("scontrol", "show", "job", job))  # multi-line form
    assert multi.fields["JobName"] == HOSTILE_NAME and multi.state == "CANCELLED"
