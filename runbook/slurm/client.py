"""The Slurm client protocol every backend implements, and the job record it returns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field
from datetime import datetime, timedelta
from typing import Protocol

from runbook.errors import InputError, SlurmError, UsageError
from runbook.record import record

# A Slurm job id: 123, 123_4 (array task), 123+1 (het component). Slurm's ids are 32-bit
# (uint32_t job_id and array_task_id in slurm.h); 10 digits at most, checked against the range
# by valid_job_id, so a hostile id of thousands of digits never reaches a file name or argv.
JOB_ID = re.compile(r"^(\d{1,10})(?:_(\d{1,10}))?(?:\+(\d{1,10}))?$")
_UINT32 = 2**32 - 1
NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
TERMINAL_STATES = {
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "TIMEOUT",
    "REVOKED",
    "SPECIAL_EXIT",
}


# The end of a window of finished jobs, when the caller gives none: past now. Accounting stamps a
# job's end with the controller's clock, which can run ahead of this host's, and a window query
# lists a job only when its end second is inside the window; no job ends in the future, so the
# slack adds nothing else. (Accounting also lists a job there a little after `sacct -j` shows its
# state: overlapping sweep windows, not this, cover that.)
def window_end(until: datetime | None) -> datetime:
    return until or datetime.now() + timedelta(minutes=5)


def valid_job_id(value) -> str | None:
    """The job id as a string when it is one Slurm could have given, else None."""
    text = str(value).strip() if value is not None else ""
    m = JOB_ID.match(text)
    if not m or any(int(g) > _UINT32 for g in m.groups() if g is not None):
        return None
    return text


def check_job_id(job_id) -> str:
    """The job id, or an InputError (exit 3) that names what was given, cut to a readable length."""
    ok = valid_job_id(job_id)
    if ok is None:
        shown = str(job_id).strip()
        shown = shown if len(shown) <= 40 else f"{shown[:30]}... ({len(shown)} characters)"
        raise InputError(
            f"{shown!r} is not a Slurm job id",
            hint="expected a 32-bit job number, optionally an array task (123_4) or a "
            "heterogeneous component (123+1)",
        )
    return ok


def canonical_id(raw: str, array_job: str | None, array_task: str | None) -> str:
    """`A_T` for one task of an array (the id scancel and sbatch read back safely), else the raw
    id (a plain job, or an array not yet split into tasks: `A_[0-3]`)."""
    if array_job and array_task and array_task.isdigit() and array_job.isdigit():
        return f"{array_job}_{array_task}"
    return raw


def check_node(node: str) -> str:
    if not NODE_NAME.match(node or ""):
        raise UsageError(
            f"{node!r} is not a node name runbook will pass to Slurm",
            hint="node names are letters, digits, '.', '_' and '-'",
        )
    return node


@record
class JobInfo:
    # The id runbook names the job by: `A_T` for a task of an array (scancel, sbatch readback,
    # lineage, incidents), since a task's raw id may be the array's own id, which Slurm reads as
    # the whole array. `raw_id` is what the node sees (SLURM_JOB_ID, the cgroup job_<raw>, %j).
    job_id: str
    name: str = ""
    user: str = ""
    state: str = ""  # expanded: CANCELLED, not "CANCELLED by 0"
    exit_code: str | None = None  # code:signal
    nodes: list[str] = field(default_factory=list)
    node_expr: str = ""  # as Slurm printed it (gpu-[01-02])
    start: datetime | None = None
    end: datetime | None = None
    submit: datetime | None = None
    work_dir: str = ""
    stdout: str = ""  # the pattern with what Slurm resolved (%j, %x, %u) resolved
    stderr: str = ""
    partition: str = ""
    tres: str = ""
    comment: str = ""
    num_tasks: int | None = None
    num_nodes: int | None = None
    array_job_id: str | None = None
    array_task_id: str | None = None
    raw_id: str = ""
    restarts: int = 0  # times Slurm requeued it (scontrol Restarts); said with a shared log
    # The sbatch command line, when read (accounting's SubmitLine): its --open-mode tells whether
    # the log is appended to by other submissions.
    submit_line: str = ""
    excluded: list[str] = field(default_factory=list)  # --exclude it was submitted with
    batch_host: str = ""
    source: str = ""  # scontrol | sacct | pyslurm: where the details came from
    # The submission options Slurm recorded (nodes, tasks, gres, mem, time, partition, ...), by
    # name (runbook.planning.resources); from slurmctld only, empty when it had forgotten the job.
    resources: dict = field(default_factory=dict)
    # A heterogeneous job (`#SBATCH hetjob`, or `:` on sbatch's line): its offset, and every
    # component (offset order, this one first) with its own resources; empty for a plain job.
    het_offset: int | None = None
    components: list = field(default_factory=list)
    # What it waits on (scontrol's Dependency, as Slurm shows it) and why it is pending
    # (JobHeldUser, JobHeldAdmin: held): from slurmctld only.
    dependency: str = ""
    reason: str = ""

    @property
    def raw(self) -> str:
        """The job's own number as its nodes see it (SLURM_JOB_ID, cgroup job_<raw>, %j)."""
        return self.raw_id or self.job_id

    @property
    def array_task(self) -> str | None:
        """The task index when this is one task of an array, else None."""
        t = self.array_task_id or ""
        return t if self.array_job_id and t.isdigit() else None

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    @property
    def tasks_per_node(self) -> int | None:
        if self.num_tasks and self.nodes and self.num_tasks % len(self.nodes) == 0:
            return self.num_tasks // len(self.nodes)
        return None


@record
class Submission:
    """What Slurm recorded of how a job was submitted, for a rerun that is the same job: its
    sbatch command line (sacct SubmitLine) and the environment sbatch ran in (sacct --env-vars,
    kept only with AccountingStoreFlags=job_env). `env` None: not recorded, never "empty"."""

    line: str = ""
    env: dict[str, str] | None = None
    notes: list[str] = field(default_factory=list)
    # The job's arguments exactly, where its batch script's process was read on its node
    # (asking.process.batch_args); None: only the space-joined line is known.
    args: list[str] | None = None


class SlurmClient(Protocol):
    """What runbook needs from Slurm: every method the code calls. Reads raise SlurmError naming
    the command; mutations are called only by the action executor, which records the argv each
    one stands for (`*_argv`) before it runs. A backend implements every method (or refuses one
    with a SlurmError that names the method and the backend to use instead)."""

    name: str

    def version(self) -> str: ...

    def ping(self) -> str:
        """slurmctld answers (a line saying so); SlurmError/TransportError when it does not."""
        ...

    def job(self, job_id: str) -> JobInfo: ...

    def failed_jobs(
        self, since: datetime, until: datetime | None = None, partitions: list[str] | None = None
    ) -> list[JobInfo]:
        """Every job of every user that ended badly in the window: one accounting query."""
        ...

    def known_jobs(self) -> list[JobInfo]:
        """Every job slurmctld still holds, with its log paths resolved."""
        ...

    def batch_script(self, job_id: str) -> str: ...

    def batch_scripts(self, job_ids: list[str]) -> dict[str, str]:
        """Batch scripts of many finished jobs, in one query."""
        ...

    def submission(self, job_id: str, have: Submission | None = None) -> Submission:
        """The job's sbatch command line and environment as accounting recorded them; what it
        does not hold is left unset with a note (never an error: the rerun says what it lacks).
        `have`: an earlier answer; what it holds is not asked again."""
        ...

    def node_state(self, node: str) -> tuple[str, str]:
        """(State, Reason) of a node."""
        ...

    def queue(self) -> list:
        """Every job slurmctld holds (slurm.dependency.Queued), finished ones within MinJobAge
        included: read once per incident, for its chain and its lineage check."""
        ...

    def find_lineage(
        self, parent: str, rung: str, since: datetime | None, queue: list | None = None
    ) -> list[tuple[str, str, str]]:
        """(job id, user, comment) of jobs whose comment names this parent and rung: in `queue`
        (else slurmctld read anew) and, unless `since` is None, in accounting since then."""
        ...

    def node_history(self, node: str | None, since: datetime) -> list[NodeStateEvent]:
        """What Slurm's accounting recorded of nodes being taken out of service (drained,
        down) since `since`, and when each came back: by whom and why, as slurmdbd keeps it."""
        ...

    def partition_nodes(self, partition: str) -> dict[str, str]:
        """{node: state} of a partition's nodes, Slurm's long state names (idle, drained...)."""
        ...

    def cancel_argv(self, job_id: str) -> list[str]: ...

    def dependants(self, job_ids: list[str], queue: list | None = None) -> list:
        """The pending jobs whose dependency names one of `job_ids` (the ids of one job: an
        array task's `A_T` and raw id), as slurm.dependency.Dependant: from `queue`, this
        incident's read of slurmctld, else a new one."""
        ...

    def hold_argv(self, job_id: str) -> list[str]: ...

    def release_argv(self, job_id: str) -> list[str]: ...

    def depend_argv(self, job_id: str, dependency: str) -> list[str]: ...

    def acting_as(self, actor) -> SlurmClient:
        """This client, the job's mutations run as `actor` (runbook.identity) says."""
        ...

    def change(self, argv: list[str], what: str):
        """Run one of the argvs above (the executor shows it as it runs it)."""
        ...

    def drain_argv(self, node: str, reason: str) -> list[str]: ...

    def submit_argv(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> list[str]: ...

    def cancel(self, job_id: str): ...

    def drain(self, node: str, reason: str): ...

    def submit(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> str: ...


@record
class NodeStateEvent:
    """One period a node was out of service, as Slurm's accounting recorded it (`sacctmgr show
    event`): from `start` to `end` (None: still out), its state, who set it and why."""

    node: str
    start: datetime | None
    end: datetime | None
    state: str
    user: str
    reason: str


# Node states in which a node can run a job now or soon (sinfo's long names, without the flags
# that follow a "+" or the "*", "~", "#", "!", "%", "$", "@", "^", "-" suffixes).
# Job states of a job that still holds (or waits for) its allocation.
ACTIVE = {"RUNNING", "PENDING", "SUSPENDED", "CONFIGURING", "REQUEUED", "RESIZING", "STOPPED"}

_USABLE_STATES = {"idle", "allocated", "mixed", "completing", "planned", "reserved"}


def usable_state(state: str) -> bool:
    """A node Slurm could schedule on: up, not draining or drained, responding."""
    s = state.strip().lower()
    # sinfo marks a node that does not respond with "*", pyslurm with "+NOT_RESPONDING".
    if not s or s[-1] in "*~#!%$@^-" or any(w in s for w in ("drain", "maint", "not_respond")):
        return False
    return s.split("+")[0] in _USABLE_STATES


def parse_time(value: str | None) -> datetime | None:
    if not value or value in {"Unknown", "None", "N/A", "(null)"}:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def slurm_error(what: str, result, hint: str | None = None) -> SlurmError:
    """A failed Slurm command as an error that names it and says what to check."""
    err = (result.stderr or result.stdout).strip()
    if hint is None:
        low = err.lower()
        if "invalid job id" in low or "does not exist" in low:
            hint = "check the job id; a job that finished long ago is only in accounting (sacct)"
        elif "unable to contact slurm controller" in low or "connection refused" in low:
            hint = "slurmctld is down or unreachable: `scontrol ping`"
        elif "slurmdbd" in low or "accounting storage" in low or "database" in low:
            hint = "slurmdbd is unreachable or accounting is disabled: `sacctmgr ping`"
        elif "access/permission denied" in low or "not authorized" in low or "permission" in low:
            hint = "runbook's user lacks the Slurm privilege for this; see the site's operator role"
        else:
            hint = "run the command by hand to see more"
    cmd = " ".join(result.argv)
    return SlurmError(
        f"{what}: `{cmd}` on {result.host} exited {result.exit_code}: {err[-500:] or 'no output'}",
        hint=hint,
    )
