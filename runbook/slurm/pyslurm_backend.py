"""Optional backend on pyslurm, for sites whose pyslurm matches their Slurm: a pyslurm release
binds the Slurm release whose first two numbers it carries (22.5.x for 22.05, 25.11.x for 25.11).
Imported only when the site config chooses it, so the CLI backend never depends on it. runbook
ships no pyslurm and builds none: a site installs the release of its Slurm (docs/install.md).
The contract tests run on both backends wherever a matching pyslurm imports, and say why they
skip elsewhere; the mapping below is unit-tested on pyslurm 22.5.3's shapes.

Written against pyslurm 22.5.3's API (`pyslurm.Job`, `pyslurm.db.Jobs`/`JobFilter`,
`pyslurm.Node`, `pyslurm.slurmctld.Config`); 25.11 keeps these names. Where the two differ:
`Job.get_batch_script` is an instance method in 22.5 (called on `Job(id)`); 22.5's `Job` carries
no TRES string, so the GPUs come from `gres_per_node`. What goes through the Slurm commands
instead, each for want of a faithful pyslurm call: submission (sbatch's options have no exact
`JobSubmitDescription` mapping), a task of a job array by its `A_T` id (`Job.load(A)` is the
whole array) and a heterogeneous job's component by its `J+K` id. `runbook config show` names
them. The rest (jobs, the accounting window, batch scripts, the lineage lookup, slurmctld's jobs,
partitions and nodes, cancel, drain) is pyslurm's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from runbook.errors import ConfigError, JobNotFound, SlurmError
from runbook.slurm.cli_backend import FAILED_STATES, _from_scontrol
from runbook.slurm.client import (
    JobInfo,
    Submission,
    canonical_id,
    check_job_id,
    check_node,
    parse_time,
    window_end,
)
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


def _major(version: str) -> tuple[int, int] | None:
    """The release's first two numbers: pyslurm writes 22.5.3 and 24.05.0, Slurm 22.05.7."""
    parts = version.strip().split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def release_for(slurm_version: str) -> str:
    """The pyslurm release that serves this Slurm, as pip would be asked for it (22.5.x)."""
    major = _major(slurm_version)
    return f"{major[0]}.{major[1]}.x" if major else f"the release of Slurm {slurm_version}"


def release_mismatch(pyslurm_version: str, slurm_version: str) -> str | None:
    """Why this pyslurm cannot serve this Slurm, or None when their releases match. pyslurm's
    first two numbers are the Slurm release it binds; its third is its own patch level."""
    ours, theirs = _major(pyslurm_version), _major(slurm_version)
    if ours is None or theirs is None:
        return f"cannot compare pyslurm {pyslurm_version!r} with Slurm {slurm_version!r}"
    if ours != theirs:
        return (
            f"pyslurm {pyslurm_version} is built for Slurm {ours[0]}.{ours[1]:02d}, this "
            f"cluster runs Slurm {slurm_version}: install pyslurm {release_for(slurm_version)}"
        )
    return None


def installed() -> dict[str, str | None]:
    """Which pyslurm this Python imports and the Slurm library it was built against, without
    asking slurmctld: what `runbook config show` reports. `error` says why it does not import."""
    try:
        ps = load_pyslurm()
    except ConfigError as e:
        return {"version": None, "slurm_api": None, "error": e.message}
    try:
        major, minor, micro = ps.slurm_api_version()
        api: str | None = f"{major}.{minor:02d}.{micro}"
    except Exception:  # noqa: BLE001 - an odd build still reports its own version
        api = None
    return {"version": str(getattr(ps, "__version__", "") or ps.version()), "slurm_api": api,
            "error": None}  # fmt: skip


def _stamp(epoch) -> str | None:
    """An epoch as scontrol prints it (local time), so one reader parses both backends."""
    if epoch in (None, 0, "0"):
        return None
    if isinstance(epoch, datetime):
        return epoch.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        return datetime.fromtimestamp(int(epoch)).strftime("%Y-%m-%dT%H:%M:%S")
    except (TypeError, ValueError, OSError):
        return None


def _minutes(limit) -> str | None:
    """pyslurm's time limit (minutes) as scontrol prints it (D-HH:MM:SS)."""
    if not isinstance(limit, int) or limit <= 0:
        return None
    d, rest = divmod(limit, 24 * 60)
    h, m = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:00"


def _s(value) -> str:
    return "" if value is None else str(value)


def scontrol_fields(j) -> dict[str, str]:
    """A pyslurm 22.5 `Job` (slurmctld's view) in `scontrol show job`'s names and formats: the
    CLI backend's reader then builds the one JobInfo shape both backends hand on, and the
    submission options recorded for a rerun (slurm.recorded) are read the same way."""
    g = lambda name: getattr(j, name, None)  # noqa: E731 - attribute or None, pyslurm 22.5/25.11
    gres = g("gres_per_node") or {}
    gpus = sum(v for k, v in gres.items() if k.split(":")[0] == "gpu" and isinstance(v, int))
    nodes = g("num_nodes")
    f = {
        "JobId": _s(g("id")),
        "Restarts": _s(g("requeue_count") or 0),
        "JobName": _s(g("name")),
        "UserId": _s(g("user_name")),
        "JobState": _s(g("state")),
        "ExitCode": f"{g('exit_code') or 0}:{g('exit_code_signal') or 0}",
        "NodeList": _s(g("allocated_nodes")) or "(null)",
        "WorkDir": _s(g("working_directory")),
        "StdOut": _s(g("standard_output")),
        "StdErr": _s(g("standard_error")),
        "Partition": _s(g("partition")),
        # pyslurm 22.5's Job has no TRES string: the GPUs come from its GRES per node.
        "TRES": f"node={nodes},gres/gpu={gpus * (nodes or 1)}" if gpus else "",
        "Comment": _s(g("comment")) or "(null)",
        "NumTasks": _s(g("ntasks")),
        "NumNodes": _s(nodes),
        "ExcNodeList": _s(g("excluded_nodes")) or "(null)",
        "BatchHost": _s(g("batch_host")),
        "NtasksPerN:B:S:C": f"{g('ntasks_per_node') or 0}:0:*:*",
        "CPUs/Task": _s(g("cpus_per_task")),
        "TresPerNode": ",".join(f"gres:{k}:{v}" for k, v in gres.items()),
        "MinMemoryNode": f"{g('memory_per_node')}M" if g("memory_per_node") else "",
        "MinMemoryCPU": f"{g('memory_per_cpu')}M" if g("memory_per_cpu") else "",
        "TimeLimit": _minutes(g("time_limit")) or "",
        "ReqNodeList": _s(g("required_nodes")) or "(null)",
        "Account": _s(g("account")),
        "QOS": _s(g("qos")),
        "Features": ",".join(g("constraints") or []),
    }
    for key, name in (("StartTime", "start_time"), ("EndTime", "end_time")):
        f[key] = _stamp(g(name)) or "Unknown"
    f["SubmitTime"] = _stamp(g("submit_time")) or "Unknown"
    if g("array_id"):
        f["ArrayJobId"], f["ArrayTaskId"] = _s(g("array_id")), _s(g("array_task_id"))
    return f


def _from_db(j) -> JobInfo:
    """A pyslurm 22.5 `db.Job` (accounting's view) as the CLI backend's sacct reader builds it."""
    g = lambda name: getattr(j, name, None)  # noqa: E731
    raw = _s(g("id"))
    array_job = _s(g("array_id")) or None
    task = g("array_task_id")
    if array_job and task is None and array_job != raw:
        # pyslurm 22.5 reads task index 0 as "no value" (its u32 parse takes 0 for NO_VAL); a
        # task whose own id is not the array's and has no index is task 0.
        task = 0
    nodes = _s(g("nodelist"))
    return JobInfo(
        job_id=canonical_id(raw, array_job, _s(task) if task is not None else None),
        raw_id=raw,
        name=_s(g("name")),
        user=_s(g("user_name")),
        state=_s(g("state")),
        exit_code=f"{g('exit_code') or 0}:{g('exit_code_signal') or 0}",
        nodes=expand(nodes) if nodes and nodes != "None assigned" else [],
        node_expr=nodes,
        start=parse_time(_stamp(g("start_time"))),
        end=parse_time(_stamp(g("end_time"))),
        submit=parse_time(_stamp(g("submit_time"))),
        work_dir=_s(g("working_directory")),
        partition=_s(g("partition")),
        comment=_s(g("comment")),
        num_nodes=g("num_nodes"),
        array_job_id=array_job,
        array_task_id=_s(task) if task is not None else None,
        submit_line=_s(g("submit_command")),
        source="pyslurm-db",
    )


FAILED = set(FAILED_STATES.split(","))
ESLURM_INVALID_JOB_ID = 2017  # slurm_errno.h: "Invalid job id specified"
# What this backend does not do through pyslurm, and why: `runbook config show` prints it.
THROUGH_THE_COMMANDS = {
    "submit": "sbatch's options have no exact JobSubmitDescription mapping",
    "a node's drain and return history": "pyslurm 22.5 has no call for slurmdbd's event table "
    "(sacctmgr show event)",
    "a task of a job array (A_T) or of a heterogeneous job (J+K)": "Job.load(A) and "
    "Job(A).cancel() take the whole array; pyslurm 22.5 reads no het job component by its J+K id",
}
NOT_CARRIED = {
    "TRES of a finished job": "pyslurm 22.5's db.Job has no TRES (its tres_allocated is not "
    "built): the cost's GPU count is unknown for it",
}


class PyslurmBackend:
    """Reads, cancel and drain through pyslurm; submission goes through `submitter` (the CLI
    backend), because sbatch options have no faithful JobSubmitDescription mapping. So do the
    reads whose answer pyslurm does not carry faithfully: the resolved log paths of slurmctld's
    jobs, batch scripts from accounting, and comments for the lineage."""

    name = "pyslurm"

    def __init__(self, submitter, module=None):
        # `module` is pyslurm itself; tests hand in objects of its documented shapes.
        self.ps = module if module is not None else load_pyslurm()
        self.submitter = submitter
        self.actor = None  # runbook.identity.Actor once acting_as() made this client

    def _call(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # pyslurm raises RPCError and friends; name them for a person
            raise SlurmError(
                f"{what} through pyslurm failed: {type(e).__name__}: {e}",
                hint="the same through the Slurm commands tells more",
            ) from None

    def version(self) -> str:
        """Slurm's release, as `sinfo --version` prints it (pyslurm.version() is pyslurm's
        own): the library pyslurm was built against."""
        major, minor, micro = self._call("reading the Slurm version", self.ps.slurm_api_version)
        return f"{major}.{minor:02d}.{micro}"

    def ping(self) -> str:
        self._call("asking slurmctld whether it is up", self.ps.slurmctld.Config.load)
        return "slurmctld answered (pyslurm)"

    def job(self, job_id: str) -> JobInfo:
        job_id = check_job_id(job_id)
        if not job_id.isdigit():  # A_T, J+K: Job.load(A) would be the whole array
            return self.submitter.job(job_id)
        try:
            j = _from_scontrol(scontrol_fields(self.ps.Job.load(int(job_id))))
            j.source = "pyslurm"
            return j
        except Exception as e:  # noqa: BLE001 - pyslurm's RPCError and friends
            # Only a job slurmctld no longer knows is read from accounting. Any other failure
            # (slurmctld not answering) stops here, as the CLI backend's does: an accounting
            # record of a job that may still run is no ground to act on.
            if getattr(e, "errno", None) != ESLURM_INVALID_JOB_ID:
                raise SlurmError(
                    f"reading job {job_id} through pyslurm failed: {type(e).__name__}: {e}",
                    hint="check that slurmctld answers (`scontrol ping`)",
                ) from None
            jobs = self._call(
                "reading accounting",
                self.ps.db.Jobs.load,
                self.ps.db.JobFilter(ids=[int(job_id)]),
            )
            if not jobs:
                raise JobNotFound(
                    f"job {job_id} is unknown to slurmctld and accounting",
                    hint="check the job id, and that slurmdbd keeps jobs this old",
                ) from None
            return _from_db(list(jobs.values())[-1])

    def failed_jobs(
        self, since: datetime, until: datetime | None = None, partitions: list[str] | None = None
    ) -> list[JobInfo]:
        """The jobs that ended badly in the window, as sacct -S -E -s gives them: pyslurm 22.5's
        JobFilter has no state filter (its _parse_state is a TODO), so the window's jobs are
        read in one query and kept by their state and end time here. One difference stays:
        without a state list slurmdbd lists the jobs that ran in the window, so a job cancelled
        while still pending (it never ran, so it has no log to triage) is not listed."""
        end = window_end(until)
        flt = self.ps.db.JobFilter(
            start_time=since,
            end_time=end,
            partitions=partitions or None,
        )
        jobs = self._call("reading accounting", self.ps.db.Jobs.load, flt)
        out = []
        for j in jobs.values():
            info = _from_db(j)
            if info.state.split(" ")[0] in FAILED and info.end and since <= info.end <= end:
                out.append(info)
        return out

    def batch_script(self, job_id: str) -> str:
        job_id = check_job_id(job_id)
        if "_" in job_id:
            return self.submitter.batch_script(job_id)
        try:  # pyslurm 22.5: an instance method, from slurmctld
            return self.ps.Job(int(job_id)).get_batch_script()
        except Exception:  # noqa: BLE001 - slurmctld forgot the job: accounting keeps the script
            jobs = self._call(
                "reading the batch script from accounting",
                self.ps.db.Jobs.load,
                self.ps.db.JobFilter(ids=[int(job_id)], with_script=True),
            )
            script = next((j.script for j in jobs.values() if j.script), None)
            if not script:
                raise SlurmError(
                    f"neither slurmctld nor accounting holds job {job_id}'s batch script",
                    hint="AccountingStoreFlags=job_script keeps it after the job ends",
                ) from None
            return script

    def known_jobs(self) -> list[JobInfo]:
        """Every job slurmctld still holds, in one call (their log paths come resolved)."""
        jobs = self._call("reading slurmctld's jobs", self.ps.Jobs.load)
        out = []
        for j in jobs.values():
            info = _from_scontrol(scontrol_fields(j))
            info.source = "pyslurm"
            out.append(info)
        return out

    def submission(self, job_id: str, have: Submission | None = None) -> Submission:
        """db.Job's submit_command and environment (with_env), as sacct's SubmitLine and
        --env-vars give them."""
        job_id = check_job_id(job_id)
        raw = job_id.split("_")[0] if "_" not in job_id else None
        if raw is None:
            return self.submitter.submission(job_id)
        out = Submission()
        jobs = self._call(
            "reading accounting",
            self.ps.db.Jobs.load,
            self.ps.db.JobFilter(ids=[int(raw)], with_env=True),
        )
        j = next(iter(jobs.values()), None)
        out.line = _s(getattr(j, "submit_command", None)) if j is not None else ""
        if not out.line:
            out.notes.append(f"accounting holds no submit line for job {job_id}")
        env = getattr(j, "environment", None) if j is not None else None
        out.env = dict(env) if env else None
        if out.env is None:
            out.notes.append(
                f"accounting holds no environment for job {job_id} (AccountingStoreFlags="
                "job_env keeps it)"
            )
        return out

    def batch_scripts(self, job_ids: list[str]) -> dict[str, str]:
        """Batch scripts of finished jobs from accounting, many jobs in one query."""
        ids = [int(j) for j in (check_job_id(x) for x in job_ids) if j.isdigit()]
        rest = [j for j in job_ids if not j.isdigit()]
        out = self.submitter.batch_scripts(rest) if rest else {}
        if ids:
            jobs = self._call(
                "reading batch scripts from accounting",
                self.ps.db.Jobs.load,
                self.ps.db.JobFilter(ids=ids, with_script=True),
            )
            out.update({str(k): j.script for k, j in jobs.items() if j.script})
        return out

    def queue(self) -> list:
        """slurmctld's jobs through the commands (one `squeue`), as the chain's are read."""
        return self.submitter.queue()

    def find_lineage(
        self, parent: str, rung: str, since: datetime | None, queue: list | None = None
    ) -> list[tuple[str, str, str]]:
        """As the CLI backend does it: slurmctld's jobs (finished ones within MinJobAge: this
        incident's `queue`, else pyslurm's read) and accounting's window together, since 22.05
        accounting records a comment only with the job's end record."""
        tag = f"parent={parent},rung={rung}"
        found = {q.job_id: (q.job_id, q.user, q.comment) for q in queue or [] if tag in q.comment}
        if queue is None:
            for j in self._call("reading slurmctld's jobs", self.ps.Jobs.load).values():
                comment = _s(getattr(j, "comment", None))
                if tag in comment:
                    info = _from_scontrol(scontrol_fields(j))
                    found[info.job_id] = (info.job_id, info.user, comment)
        if since is None:
            return list(found.values())
        flt = self.ps.db.JobFilter(start_time=since)
        for j in self._call("reading accounting", self.ps.db.Jobs.load, flt).values():
            comment = _s(getattr(j, "comment", None))
            if tag in comment:
                info = _from_db(j)
                found.setdefault(info.job_id, (info.job_id, info.user, comment))
        return list(found.values())

    def node_history(self, node, since):
        """Slurm's node events from accounting, through the commands (`sacctmgr`): pyslurm
        22.5 carries no call for slurmdbd's event table."""
        return self.submitter.node_history(node, since)

    def partition_nodes(self, partition: str) -> dict[str, str]:
        """{node: state} of a partition's nodes: the partition's hostlist, each node's state
        (pyslurm's `IDLE+DRAIN` where sinfo prints `drained`: slurm.client.usable_state reads
        both)."""
        part = self._call(f"reading partition {partition}", self.ps.Partition.load, partition)
        names = expand(_s(getattr(part, "nodes", None)))
        nodes = self._call("reading the nodes", self.ps.Nodes.load)
        return {n: _s(getattr(nodes[n], "state", "")) for n in names if n in nodes}

    def acting_as(self, actor):
        """This backend, the job's mutations run as `actor` says (the owner): through the
        Slurm commands, since pyslurm's calls act as this process's own account."""
        import copy

        c = copy.copy(self)
        c.submitter = self.submitter.acting_as(actor)
        c.actor = actor
        return c

    def _owners(self) -> bool:
        return self.actor is not None and self.actor.as_owner

    def cancel(self, job_id: str):
        job_id = check_job_id(job_id)
        if "_" in job_id or self._owners():
            # Job(A).cancel() would cancel every task: scancel A_T takes one; and pyslurm
            # cancels as this process, never as the job's owner.
            return self.submitter.cancel(job_id)
        return self._call(f"cancelling job {job_id}", self.ps.Job(int(job_id)).cancel)

    def drain(self, node: str, reason: str):
        node = check_node(node)
        change = self.ps.Node(state="DRAIN", reason=" ".join(reason.split()))
        return self._call(f"draining {node}", self.ps.Node(node).modify, change)

    def cancel_argv(self, job_id: str) -> list[str]:
        if "_" in check_job_id(job_id) or self._owners():
            return self.submitter.cancel_argv(job_id)
        return ["pyslurm", "Job.cancel", job_id]

    def drain_argv(self, node: str, reason: str) -> list[str]:
        return ["pyslurm", "Node.modify", check_node(node), "state=DRAIN", f"reason={reason}"]

    def node_state(self, node: str) -> tuple[str, str]:
        n = self._call(f"reading node {node}", self.ps.Node.load, check_node(node))
        return _s(getattr(n, "state", "")), _s(getattr(n, "reason", ""))

    def submit_argv(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> list[str]:
        return self.submitter.submit_argv(script, args, env, script_args)

    # A chain's dependants are read and re-pointed through Slurm's commands, as submissions are.
    def dependants(self, job_ids: list[str], queue: list | None = None) -> list:
        return self.submitter.dependants(job_ids, queue)

    def hold_argv(self, job_id: str) -> list[str]:
        return self.submitter.hold_argv(job_id)

    def release_argv(self, job_id: str) -> list[str]:
        return self.submitter.release_argv(job_id)

    def depend_argv(self, job_id: str, dependency: str) -> list[str]:
        return self.submitter.depend_argv(job_id, dependency)

    def change(self, argv: list[str], what: str):
        return self.submitter.change(argv, what)

    def submit(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> str:
        return self.submitter.submit(script, args, env, script_args)
