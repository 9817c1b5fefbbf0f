"""Optional backend on pyslurm (`pip install runbook[pyslurm]`), for sites whose pyslurm matches
their Slurm: pyslurm 25.11.x needs Slurm 25.11 (it checks the version, then binds the C API);
older pyslurm releases bind older Slurm majors. Imported only when the site config chooses it,
so the CLI backend never depends on it. It cannot be built against this project's test cluster
(Slurm 22.05), so its contract tests skip with that reason where it does not import.
"""

from __future__ import annotations

from datetime import datetime

from runbook.errors import ConfigError, JobNotFound, SlurmError
from runbook.slurm.client import JobInfo, check_job_id, check_node, window_end
from runbook.slurm.hostlist import expand


def load_pyslurm():
    try:
        import pyslurm  # noqa: PLC0415 - lazily, by design
    except ImportError as e:
        raise ConfigError(
            f"the site config chooses the pyslurm backend, but pyslurm does not import: {e}",
            hint="install the pyslurm release built for this cluster's Slurm major, or set "
            '[slurm] backend = "cli"',
        ) from None
    return pyslurm


def _ts(value) -> datetime | None:
    if value in (None, 0, "0"):
        return None
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromtimestamp(int(value))
    except (TypeError, ValueError, OSError):
        return None


def _job(j, source: str) -> JobInfo:
    nodes = getattr(j, "nodes", None) or ""
    return JobInfo(
        job_id=str(getattr(j, "id", "")),
        name=getattr(j, "name", "") or "",
        user=getattr(j, "user_name", "") or "",
        state=str(getattr(j, "state", "") or ""),
        exit_code=str(getattr(j, "exit_code", "") or "") or None,
        nodes=expand(nodes) if nodes else [],
        node_expr=nodes,
        start=_ts(getattr(j, "start_time", None)),
        end=_ts(getattr(j, "end_time", None)),
        submit=_ts(getattr(j, "submit_time", None)),
        work_dir=getattr(j, "working_directory", "") or "",
        stdout=getattr(j, "standard_output", "") or "",
        stderr=getattr(j, "standard_error", "") or "",
        partition=getattr(j, "partition", "") or "",
        comment=getattr(j, "comment", "") or "",
        num_tasks=getattr(j, "ntasks", None),
        num_nodes=getattr(j, "num_nodes", None),
        source=source,
    )


class PyslurmBackend:
    """Reads, cancel and drain through pyslurm; submission goes through `submitter` (the CLI
    backend), because sbatch options have no faithful JobSubmitDescription mapping. So do the
    reads whose answer pyslurm does not carry faithfully: the resolved log paths of slurmctld's
    jobs, batch scripts from accounting, and comments for the lineage."""

    name = "pyslurm"

    def __init__(self, submitter):
        self.ps = load_pyslurm()
        self.submitter = submitter

    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # pyslurm raises RPCError and friends; name them for a person
            raise SlurmError(
                f"{what} through pyslurm failed: {type(e).__name__}: {e}",
                hint="the same through the Slurm commands tells more",
            ) from None

    def version(self) -> str:
        return str(self._call("reading the Slurm version", self.ps.version))

    def ping(self) -> str:
        self._call("asking slurmctld whether it is up", self.ps.slurmctld.Config.load)
        return "slurmctld answered (pyslurm)"

    def job(self, job_id: str) -> JobInfo:
        job_id = check_job_id(job_id)
        if "_" in job_id:  # Job.load(A) would be the whole array: one task is the CLI's
            return self.submitter.job(job_id)
        try:
            return _job(self.ps.Job.load(int(job_id.split("_")[0])), "pyslurm")
        except Exception:  # no longer in slurmctld: accounting
            jobs = self._call(
                "reading accounting", self.ps.db.Jobs.load, self.ps.db.JobFilter(ids=[job_id])
            )
            if not jobs:
                raise JobNotFound(
                    f"job {job_id} is unknown to slurmctld and accounting",
                    hint="check the job id, and that slurmdbd keeps jobs this old",
                ) from None
            return _job(list(jobs.values())[-1], "pyslurm-db")

    def failed_jobs(
        self, since: datetime, until: datetime | None = None, partitions: list[str] | None = None
    ) -> list[JobInfo]:
        flt = self.ps.db.JobFilter(
            start_time=int(since.timestamp()),
            end_time=int(window_end(until).timestamp()),
            states=["FAILED", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED", "NODE_FAIL"],
            partitions=partitions or None,
        )
        jobs = self._call("reading accounting", self.ps.db.Jobs.load, flt)
        return [_job(j, "pyslurm-db") for j in jobs.values()]

    def batch_script(self, job_id: str) -> str:
        job_id = check_job_id(job_id)
        return self._call("reading the batch script", self.ps.Job.get_batch_script, int(job_id))

    def known_jobs(self) -> list[JobInfo]:
        return self.submitter.known_jobs()

    def submission(self, job_id: str):
        # pyslurm 22.5 exposes no SubmitLine nor stored environment: the CLI backend's sacct.
        return self.submitter.submission(job_id)

    def batch_scripts(self, job_ids: list[str]) -> dict[str, str]:
        return self.submitter.batch_scripts(job_ids)

    def find_lineage(self, parent: str, rung: str, since: datetime) -> list[tuple[str, str, str]]:
        return self.submitter.find_lineage(parent, rung, since)

    def partition_nodes(self, partition: str) -> dict[str, str]:
        return self.submitter.partition_nodes(partition)

    def cancel(self, job_id: str):
        job_id = check_job_id(job_id)
        if "_" in job_id:  # Job(A).cancel() would cancel every task: scancel A_T takes one
            return self.submitter.cancel(job_id)
        return self._call(f"cancelling job {job_id}", self.ps.Job(int(job_id)).cancel)

    def drain(self, node: str, reason: str):
        node = check_node(node)
        change = self.ps.Node(state="DRAIN", reason=" ".join(reason.split()))
        return self._call(f"draining {node}", self.ps.Node(node).modify, change)

    def cancel_argv(self, job_id: str) -> list[str]:
        if "_" in check_job_id(job_id):
            return self.submitter.cancel_argv(job_id)
        return ["pyslurm", "Job.cancel", job_id]

    def drain_argv(self, node: str, reason: str) -> list[str]:
        return ["pyslurm", "Node.modify", check_node(node), "state=DRAIN", f"reason={reason}"]

    def node_state(self, node: str) -> tuple[str, str]:
        n = self._call(f"reading node {node}", self.ps.Node.load, check_node(node))
        return str(getattr(n, "state", "")), str(getattr(n, "reason", "") or "")

    def submit_argv(self, script: str, args: list[str], env: dict[str, str]) -> list[str]:
        return self.submitter.submit_argv(script, args, env)

    def submit(self, script: str, args: list[str], env: dict[str, str]) -> str:
        return self.submitter.submit(script, args, env)
