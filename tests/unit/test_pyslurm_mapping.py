"""The pyslurm backend's mapping into runbook's types, replayed without pyslurm.

No output of a real pyslurm was recorded when the backend ran on the test cluster (its contract
tests compared it with the commands live, and kept nothing), so these tests build objects of
pyslurm 22.5.3's documented shapes (`pyslurm.Job`, `pyslurm.db.Job`, `pyslurm.Node`,
`pyslurm.RPCError`'s `errno`, attribute names as pyslurm/core/job/job.pyx and
pyslurm/core/db/job.pyx define them) carrying the values of *real* Slurm records: the test
cluster's recorded `scontrol show job` (tests/data/slurm/SOURCES.md). Both backends must then
hand on the same JobInfo. The live contract (tests/integration/test_slurm_backends.py) runs
where a pyslurm of the cluster's release imports."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from runbook.errors import ConfigError, JobNotFound, SlurmError
from runbook.slurm import pyslurm_backend as pb
from runbook.slurm.cli_backend import _from_scontrol
from runbook.slurm.client import usable_state
from runbook.slurm.text import scontrol_records
from tests.unit.test_resources import CMDLINE_JOB

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"
SAME = (
    "job_id", "raw_id", "name", "user", "state", "exit_code", "nodes", "node_expr", "start",
    "end", "submit", "work_dir", "stdout", "stderr", "partition", "comment", "num_tasks",
    "num_nodes", "array_job_id", "array_task_id", "excluded", "batch_host", "restarts",
)  # fmt: skip


def epoch(stamp: str) -> int:
    """pyslurm carries times as epochs; scontrol prints them in local time."""
    return int(datetime.fromisoformat(stamp).timestamp())


def job_174() -> SimpleNamespace:
    """Job 174 of the recording (a name and log path with spaces and '=', a comment posing as
    another field) in pyslurm 22.5's `Job` shape."""
    return SimpleNamespace(
        id=174, name="llama lr=3e-4 bs=8", user_name="root", state="RUNNING",
        exit_code=0, exit_code_signal=0, requeue_count=0, allocated_nodes="gpu-01",
        working_directory="/work/main", standard_output="/tmp/out dir x=1/llama lr=3e-4 bs=8-174.log",
        standard_error="/tmp/out dir x=1/llama lr=3e-4 bs=8-174.log", partition="debug",
        comment="a b=c StdOut=/evil", ntasks=1, num_nodes=1, excluded_nodes=None,
        batch_host="gpu-01", ntasks_per_node=0, cpus_per_task=1, gres_per_node={},
        memory_per_node=None, memory_per_cpu=100, time_limit=None, required_nodes=None,
        account="root", qos="normal", constraints=[],
        start_time=epoch("2026-11-23T03:17:22"), end_time=None,
        submit_time=epoch("2026-11-23T03:17:21"), array_id=None, array_task_id=None,
    )  # fmt: skip


def test_replayed_a_recorded_job_read_by_both_backends_is_one_jobinfo():
    (fields,) = scontrol_records((DATA / "scontrol-show-job-name-with-spaces.txt").read_text())
    cli = _from_scontrol(fields)
    ps = _from_scontrol(pb.scontrol_fields(job_174()))
    assert {
        f: (getattr(cli, f), getattr(ps, f)) for f in SAME if getattr(cli, f) != getattr(ps, f)
    } == {}
    assert ps.comment == "a b=c StdOut=/evil" and ps.nodes == ["gpu-01"]


def test_replayed_the_options_slurm_recorded_are_the_same_from_pyslurms_job():
    """What a rerun is submitted with (slurm.recorded) from job 323's real record, and from
    pyslurm's fields for the same job: GPUs per node from gres_per_node, memory in MiB, the
    time limit in minutes."""
    (fields,) = scontrol_records(CMDLINE_JOB)
    cli = _from_scontrol(fields).resources
    j = SimpleNamespace(
        id=323, name="xjob", num_nodes=2, ntasks=4, ntasks_per_node=2, cpus_per_task=1,
        gres_per_node={"gpu": 2}, memory_per_node=400, time_limit=30, partition="gpu",
        account="root", qos="normal", standard_output="/tmp/x-323.log",
    )  # fmt: skip
    ps = _from_scontrol(pb.scontrol_fields(j))
    assert {k: ps.resources.get(k) for k in cli} == cli
    assert cli["gres"] == "gpu:2" and cli["mem"] == "400M" and cli["time"] == "00:30:00"
    assert "gres/gpu=4" in ps.tres  # 2 GPUs on each of 2 nodes: the cost's GPU count


@pytest.mark.parametrize(
    ("minutes", "printed"), [(30, "00:30:00"), (90, "01:30:00"), (3 * 24 * 60 + 5, "3-00:05:00")]
)
def test_replayed_time_limits_print_as_scontrol_prints_them(minutes, printed):
    assert pb._minutes(minutes) == printed
    assert pb._minutes(None) is None and pb._minutes(0) is None


def db_job(**values) -> SimpleNamespace:
    """pyslurm 22.5's `db.Job` (accounting's view): absent attributes read as None."""
    base = dict.fromkeys(
        ("array_id", "array_task_id", "comment", "submit_command", "num_nodes", "end_time"),
    )
    base.update(
        id=9, name="arr", user_name="root", state="CANCELLED", exit_code=0, nodelist="gpu-02",
        start_time=epoch("2026-11-25T10:00:00"), submit_time=epoch("2026-11-25T09:59:58"),
        working_directory="/var/tmp/jobs", partition="debug",
    )  # fmt: skip
    base.update(values)
    return SimpleNamespace(**base)


def test_replayed_array_task_zero_that_pyslurm_reads_as_no_value_is_task_zero():
    """The recorded array (tests/data/slurm/array): tasks 8_0 (raw 9), 8_1 (raw 10), 8_2 (raw
    8). pyslurm 22.5 parses index 0 as NO_VAL, so task 0 arrives with no index."""
    assert pb._from_db(db_job(id=9, array_id=8, array_task_id=None)).job_id == "8_0"
    assert pb._from_db(db_job(id=10, array_id=8, array_task_id=1)).job_id == "8_1"
    # The array's own record (raw id = array id) is the last task, not task 0.
    last = pb._from_db(db_job(id=8, array_id=8, array_task_id=2))
    assert (last.job_id, last.raw) == ("8_2", "8")


def test_replayed_a_job_that_never_ran_has_no_nodes():
    j = pb._from_db(db_job(nodelist="None assigned", start_time=0))
    assert j.nodes == [] and j.start is None


class RPCError(Exception):
    """pyslurm.RPCError's shape: the message and Slurm's errno."""

    def __init__(self, errno: int, msg: str):
        super().__init__(msg)
        self.errno = errno


def fake_pyslurm(*, job=None, job_error=None, accounting=None, nodes=None, partition=None):
    """A stand-in for the pyslurm module with the calls the backend makes, each answering what
    it is given; every call is written down."""
    calls: list[tuple] = []

    def load_job(job_id):
        calls.append(("Job.load", job_id))
        if job_error:
            raise job_error
        return job

    def load_db(flt):
        calls.append(("db.Jobs.load", flt.kwargs))
        return accounting or {}

    class JobFilter:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    mod = SimpleNamespace(
        __version__="22.5.3",
        slurm_api_version=lambda: (22, 5, 8),
        Job=SimpleNamespace(load=load_job),
        db=SimpleNamespace(Jobs=SimpleNamespace(load=load_db), JobFilter=JobFilter),
        Nodes=SimpleNamespace(load=lambda: nodes or {}),
        Partition=SimpleNamespace(load=lambda name: partition),
    )
    return mod, calls


def test_replayed_a_job_slurmctld_forgot_is_read_from_accounting_only_on_invalid_job_id():
    mod, calls = fake_pyslurm(
        job_error=RPCError(pb.ESLURM_INVALID_JOB_ID, "Invalid job id specified"),
        accounting={9: db_job(id=9, state="FAILED", exit_code=1)},
    )
    j = pb.PyslurmBackend(submitter=None, module=mod).job("9")
    assert (j.job_id, j.state, j.source) == ("9", "FAILED", "pyslurm-db")
    assert [c[0] for c in calls] == ["Job.load", "db.Jobs.load"]


def test_replayed_slurmctld_not_answering_is_an_error_not_an_accounting_guess():
    """A job that may still run is never acted on from its accounting record."""
    mod, calls = fake_pyslurm(job_error=RPCError(1007, "Socket timed out on send/recv operation"))
    with pytest.raises(SlurmError, match="Socket timed out") as e:
        pb.PyslurmBackend(submitter=None, module=mod).job("9")
    assert "scontrol ping" in str(e.value) and [c[0] for c in calls] == ["Job.load"]


def test_replayed_a_job_neither_slurmctld_nor_accounting_knows_is_not_found():
    mod, _ = fake_pyslurm(job_error=RPCError(pb.ESLURM_INVALID_JOB_ID, "Invalid job id"))
    with pytest.raises(JobNotFound, match="job 999999 is unknown"):
        pb.PyslurmBackend(submitter=None, module=mod).job("999999")


def test_replayed_the_window_keeps_failed_jobs_that_ended_in_it():
    """pyslurm 22.5's JobFilter has no state list: the window's jobs come back whatever their
    state, and the backend keeps those that failed and ended inside it."""
    since = datetime(2026, 11, 25, 10, 0, 0)
    inside, after = epoch("2026-11-25T10:05:00"), epoch("2026-11-25T12:00:00")
    mod, calls = fake_pyslurm(
        accounting={
            1: db_job(id=1, state="OUT_OF_MEMORY", end_time=inside),
            2: db_job(id=2, state="COMPLETED", end_time=inside),
            3: db_job(id=3, state="FAILED", end_time=after),
            4: db_job(id=4, state="CANCELLED by 0", end_time=inside),
            5: db_job(id=5, state="RUNNING", end_time=None),
        }
    )
    until = datetime(2026, 11, 25, 11, 0, 0)
    got = pb.PyslurmBackend(submitter=None, module=mod).failed_jobs(since, until, ["gpu"])
    assert sorted(j.job_id for j in got) == ["1", "4"]
    assert calls == [
        ("db.Jobs.load", {"start_time": since, "end_time": until, "partitions": ["gpu"]})
    ]


def test_replayed_a_node_pyslurm_reports_not_responding_or_drained_is_not_usable():
    nodes = {
        "gpu-01": SimpleNamespace(state="IDLE"),
        "gpu-02": SimpleNamespace(state="IDLE+NOT_RESPONDING"),
        "gpu-03": SimpleNamespace(state="IDLE+DRAIN"),
        "gpu-04": SimpleNamespace(state="MIXED"),
    }
    mod, _ = fake_pyslurm(nodes=nodes, partition=SimpleNamespace(nodes="gpu-[01-04]"))
    states = pb.PyslurmBackend(submitter=None, module=mod).partition_nodes("gpu")
    assert {n for n, s in states.items() if usable_state(s)} == {"gpu-01", "gpu-04"}


@pytest.mark.parametrize(
    ("pyslurm", "slurm", "why"),
    [
        ("22.5.3", "22.05.8", None),
        ("24.05.0", "24.05.4", None),
        ("25.11.0", "22.05.8", "install pyslurm 22.5.x"),
        ("23.2.2", "23.11.1", "built for Slurm 23.02"),
        ("unknown", "22.05.8", "cannot compare"),
    ],
)
def test_replayed_a_pyslurm_serves_only_the_slurm_release_it_carries(pyslurm, slurm, why):
    got = pb.release_mismatch(pyslurm, slurm)
    assert got is None if why is None else why in got


def test_replayed_installed_names_the_version_and_the_library_it_was_built_against(monkeypatch):
    mod, _ = fake_pyslurm()
    monkeypatch.setattr(pb, "load_pyslurm", lambda: mod)
    assert pb.installed() == {"version": "22.5.3", "slurm_api": "22.05.8", "error": None}

    def missing():
        raise ConfigError(
            "the site config chooses the pyslurm backend, but pyslurm does not import"
        )

    monkeypatch.setattr(pb, "load_pyslurm", missing)
    assert pb.installed()["error"].startswith("the site config chooses the pyslurm backend")
