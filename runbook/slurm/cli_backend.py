"""The default Slurm backend: the Slurm commands, run through a transport (the login node itself,
or a login node over SSH).

Text output, not `--json`: Slurm 22.05's `scontrol` has no --json, its `squeue --json` ignores
filters, and its `sacct --json` reported exit code 0 for a job that ran `exit 3`
(../shared/TESTCLUSTER.md); `scontrol -o` and `sacct -P` read the same on every version since.
The version is detected once and kept for the report. sacct fields are split on an ASCII unit
separator, because job names and comments are free text and may hold `|`.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Sequence
from datetime import datetime

from runbook.errors import ArrayJobError, JobNotFound, SlurmError, UsageError
from runbook.evidence.units import small_int
from runbook.slurm.client import (
    JobInfo,
    NodeStateEvent,
    Submission,
    canonical_id,
    check_job_id,
    check_node,
    parse_time,
    slurm_error,
    window_end,
)
from runbook.slurm.dependency import Dependant, Queued, dependants_in, parse_queue
from runbook.slurm.hostlist import expand
from runbook.slurm.recorded import recorded
from runbook.slurm.text import expand_state, key_values, scontrol_records

SEP = "\x1f"
SACCT_FIELDS = [
    "JobIDRaw",
    "JobID",
    "JobName",
    "User",
    "State",
    "ExitCode",
    "NodeList",
    "Start",
    "End",
    "Submit",
    "WorkDir",
    "Partition",
    "AllocTRES",
    "NNodes",
    "Comment",
    # Last: its --open-mode tells whether the job's log holds other runs (evidence.collect).
    "SubmitLine",
]
# States a job that died of CUDA OOM can end in: FAILED (exit 1, the usual), TIMEOUT or CANCELLED
# (ranks wedged in NCCL until the limit or a person), OUT_OF_MEMORY (host RAM), NODE_FAIL.
FAILED_STATES = "FAILED,OUT_OF_MEMORY,TIMEOUT,CANCELLED,NODE_FAIL"
SLURM_COMMANDS = {"scontrol", "sacct", "sbatch", "scancel", "sinfo", "squeue", "strigger"}
# sacctmgr names its cluster as a word of its own (`cluster=NAME`), not with -M.
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_cluster(name: str) -> str:
    """A Slurm cluster name as `-M` takes it; anything else is a configuration error."""
    if not _CLUSTER_NAME.match(name):
        raise UsageError(
            f"[slurm] cluster {name!r} is not a Slurm cluster name",
            hint="use the ClusterName of slurm.conf (letters, digits, _ . -), as sacctmgr "
            "show cluster lists it",
        )
    return name


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CliSlurm:
    name = "cli"

    def __init__(self, transport, *, timeout: float = 60.0, cluster: str = ""):
        self.t = transport
        self.timeout = timeout
        # [slurm] cluster: the cluster's name where one slurmdbd serves several (`-M NAME` on
        # every command); empty: the local cluster, no -M.
        self.cluster = check_cluster(cluster) if cluster else ""
        self._version: str | None = None
        # Who the job's commands run as (runbook.identity.Actor); None: runbook's own account,
        # for a client that reads only, or acts before a job is known.
        self.actor = None

    def acting_as(self, actor) -> CliSlurm:
        """This client, its job mutations (scancel, sbatch, scontrol hold/release/update) run
        as `actor` says: the job's owner. Reads and a node's drain stay runbook's own."""
        c = copy.copy(self)
        c.actor = actor
        return c

    def _as_owner(self, argv: list[str]) -> list[str]:
        return self.actor.wrap(argv) if self.actor is not None else argv

    def _m(self, argv: list[str]) -> list[str]:
        """`argv` with -M <cluster> after the Slurm command's name (after an `env` prefix)."""
        if not self.cluster:
            return argv
        for i, word in enumerate(argv):
            if word in SLURM_COMMANDS:
                return [*argv[: i + 1], "-M", self.cluster, *argv[i + 1 :]]
        return argv

    def _exec(self, argv: list[str], *, owner: bool = False):
        """Run a Slurm command; `owner`: as the job's owner (a read Slurm shows to it only)."""
        argv = self._m(argv)
        return self.t.run(self._as_owner(argv) if owner else argv, timeout=self.timeout)

    def _run(self, argv: list[str], what: str, *, ok_codes=(0,)):
        r = self._exec(argv)
        if r.exit_code not in ok_codes:
            raise slurm_error(what, r)
        return r

    def version(self) -> str:
        if self._version is None:
            r = self._run(["sinfo", "--version"], "reading the Slurm version")
            m = re.search(r"(\d{1,18}(?!\d)\.\d{1,18}(?:\.\d{1,12})?(?!\d))", r.stdout)
            self._version = m.group(1) if m else r.stdout.strip()
        return self._version

    def ping(self) -> str:
        r = self._run(["scontrol", "ping"], "asking slurmctld whether it is up")
        return r.stdout.strip().splitlines()[0] if r.stdout.strip() else "slurmctld answered"

    # -- reads ----------------------------------------------------------------------------------
    def job(self, job_id: str) -> JobInfo:
        """From slurmctld while it still knows the job (StdOut/StdErr resolved there), else from
        accounting."""
        job_id = check_job_id(job_id)
        # The multi-line form, not -o: there the job name ends its line and paths and comments
        # have lines of their own, so names with spaces and "=" cannot run into other fields.
        r = self._exec(["scontrol", "show", "job", job_id])
        records = scontrol_records(r.stdout) if r.exit_code == 0 else []
        if records:
            return with_components(job_id, [_from_scontrol(f) for f in records])
        found = self._sacct(["-j", job_id])
        main = [j for j in found if job_id in (j.job_id, j.raw)]
        if main and "_" not in job_id:  # every row: `sacct -j A` lists all of an array's tasks
            return with_components(job_id, found)
        if not main:
            raise JobNotFound(
                f"job {job_id} is unknown to slurmctld and to accounting",
                hint="check the id (and the cluster: sacct -M); accounting keeps jobs per its "
                "purge settings",
            )
        return main[-1]

    def failed_jobs(
        self, since: datetime, until: datetime | None = None, partitions: list[str] | None = None
    ) -> list[JobInfo]:
        """Every job of every user that ended badly in the window: one accounting query."""
        end = window_end(until).strftime("%Y-%m-%dT%H:%M:%S")
        extra = ["-r", ",".join(partitions)] if partitions else []
        return self._sacct(
            [
                "-a",
                "-S",
                since.strftime("%Y-%m-%dT%H:%M:%S"),
                "-E",
                end,
                "-s",
                FAILED_STATES,
                *extra,
            ]
        )

    def _sacct(self, selection: list[str]) -> list[JobInfo]:
        argv = [
            "sacct",
            "-X",
            "-P",
            "-n",
            f"--delimiter={SEP}",
            "-o",
            ",".join(SACCT_FIELDS),
            *selection,
        ]
        r = self._run(argv, "reading accounting")
        return [_from_sacct(row) for row in sacct_rows(r.stdout)]

    def known_jobs(self) -> list[JobInfo]:
        """Every job slurmctld still holds (running, and finished within MinJobAge), in one
        call: their StdOut/StdErr paths come resolved, which accounting does not keep."""
        r = self._run(["scontrol", "show", "job"], "reading slurmctld's jobs")
        return [_from_scontrol(f) for f in scontrol_records(r.stdout)]

    def batch_scripts(self, job_ids: list[str]) -> dict[str, str]:
        """Batch scripts of finished jobs from accounting, many jobs in one query."""
        if not job_ids:
            return {}
        ids = ",".join(check_job_id(j) for j in job_ids)
        r = self._run(["sacct", "-B", "-j", ids], "reading batch scripts from accounting")
        out: dict[str, str] = {}
        for m in re.finditer(
            # Each script as stored, then the newline sacct prints after it (measured on 22.05).
            r"Batch Script for (\S+)\s*\n-+\n(.*?)\n(?=Batch Script for |\Z)",
            r.stdout,
            re.S,
        ):
            out[m.group(1)] = m.group(2)
        return out

    def submission(self, job_id: str, have: Submission | None = None) -> Submission:
        """SubmitLine (Slurm 21.08+) and `sacct --env-vars` (22.05+, with job_env stored): two
        reads (22.05's sacct prints the environment alone, whatever -o asks), each skipped when
        `have` (an earlier answer) holds it; a failure of either is a note."""
        from concurrent.futures import ThreadPoolExecutor

        job_id = check_job_id(job_id)
        out = Submission(line=have.line if have else "", env=have.env if have else None)
        asks = {
            "line": None if out.line else ["sacct", "-X", "-n", "-P", "-o", "SubmitLine"],
            "env": None if out.env is not None else ["sacct", "-n", "--env-vars"],
        }

        with ThreadPoolExecutor(max_workers=2) as pool:  # two slurmdbd queries, at once
            # The environment is the job's own, shown to its owner (and Slurm's admins) only:
            # read as the owner, as its batch script is.
            got = {
                k: pool.submit(self._exec, [*a, "-j", job_id], owner=k == "env")
                for k, a in asks.items()
                if a
            }
            answers = {k: f.result() for k, f in got.items()}
        if (r := answers.get("line")) is not None:
            # One job, one field: all of it is the line (a --wrap command may hold newlines).
            if r.exit_code == 0 and r.stdout.strip():
                out.line = r.stdout.strip()
            else:
                out.notes.append(
                    f"accounting holds no submit line for job {job_id} "
                    f"({(r.stderr or 'no output').strip()[:200]})"
                )
        if (r := answers.get("env")) is not None:
            out.env = parse_env_vars(r.stdout) if r.exit_code == 0 else None
        if out.env is None:
            out.notes.append(
                f"accounting holds no environment for job {job_id} (AccountingStoreFlags="
                "job_env keeps it)"
            )
        return out

    def batch_script(self, job_id: str) -> str:
        """The job's batch script, read as its owner (Slurm shows it to the owner and its
        admins only: measured on 22.05, `scontrol write batch_script` of another user's job
        says "Invalid user id" and `sacct -B` prints nothing)."""
        job_id = check_job_id(job_id)
        r = self._exec(["scontrol", "write", "batch_script", job_id, "-"], owner=True)
        if r.exit_code == 0 and r.stdout.strip():
            return r.stdout
        # After slurmctld forgets the job: accounting keeps it with AccountingStoreFlags=job_script.
        r2 = self._exec(["sacct", "-B", "-j", job_id], owner=True)
        if r2.exit_code != 0:
            raise slurm_error("reading the batch script from accounting", r2)
        text = _sacct_script(re.sub(r"\A\s*Batch Script for \S+\s*\n-+\n", "", r2.stdout))
        if not text.strip():
            said = (r.stderr or "").strip()
            if re.search(r"Invalid user id|Access.*denied|[Pp]ermission denied", said):
                raise SlurmError(
                    f"job {job_id}: Slurm refused its batch script to this account ({said[:200]})",
                    hint="Slurm shows a job's script to its owner and its admins only: act as the "
                    "owner ([identity] act_as, `runbook config show`) or as a Slurm operator",
                )
            raise SlurmError(
                f"job {job_id}: neither slurmctld nor accounting holds its batch script",
                hint="set AccountingStoreFlags=job_script in slurm.conf so finished jobs keep it",
            )
        return text

    def node_state(self, node: str) -> tuple[str, str]:
        """(State, Reason) as `scontrol show node` prints them, e.g. ("IDLE+DRAIN", "Xid 79")."""
        r = self._run(["scontrol", "-o", "show", "node", check_node(node)], f"reading node {node}")
        f = key_values(r.stdout.strip().splitlines()[0] if r.stdout.strip() else "")
        return f.get("State", ""), f.get("Reason", "")

    def node_history(self, node: str | None, since: datetime) -> list[NodeStateEvent]:
        """`sacctmgr show event`: each period a node was drained or down, with who set it and
        why, and when it came back (slurmdbd records both from slurmctld). The reason, which a
        person wrote, is the last field, so a '|' in it stays in it."""
        argv = ["sacctmgr", "-n", "-P", "show", "event", "start=" + since.strftime(_STAMP)]
        if node:
            argv.append("nodes=" + check_node(node))
        if self.cluster:
            argv.append("cluster=" + self.cluster)
        argv.append("format=NodeName,TimeStart,TimeEnd,State,User,Reason")
        r = self._run(argv, "reading the nodes' events from accounting")
        return parse_node_events(r.stdout)

    def partition_nodes(self, partition: str) -> dict[str, str]:
        """{node: state} of a partition's nodes (`sinfo -N`, one line per node)."""
        r = self._run(
            ["sinfo", "-h", "-N", "-p", partition, "-o", f"%N{SEP}%T"],
            f"reading partition {partition}",
        )
        out: dict[str, str] = {}
        for ln in r.stdout.splitlines():
            node, _, st = ln.partition(SEP)
            if node.strip() and SEP in ln:  # -M prints a "CLUSTER: name" line first
                out[node.strip()] = st.strip()
        return out

    def queue(self) -> list[Queued]:
        """Every job slurmctld holds, finished ones within MinJobAge included: one `squeue`,
        read once per incident for the chain and the lineage check alike."""
        r = self._run(
            ["squeue", "-h", "-a", "-t", "all", "-o", SEP.join(("%i", "%u", "%T", "%E", "%k"))],
            "reading the queue",
        )
        return parse_queue(r.stdout, SEP)

    def find_lineage(
        self, parent: str, rung: str, since: datetime | None, queue: list[Queued] | None = None
    ) -> list[tuple[str, str, str]]:
        """(job id, user, comment) of jobs whose comment names this parent and rung; the caller
        judges whether to believe them (runbook.lineage).

        Slurm 22.05 accounting records the comment only with the job's end record, so a job is
        looked for in slurmctld too, finished ones included (`queue`, this incident's read of
        it, or a new one): the two views together leave no gap for a second resubmission to
        slip through. `since` None: slurmctld's view alone (the caller knows every rerun of the
        parent is still there, steps.lineage_window)."""
        tag = f"parent={parent},rung={rung}"
        found: dict[str, tuple[str, str, str]] = {}
        for q in queue if queue is not None else self.queue():
            if tag in q.comment:
                found[q.job_id] = (q.job_id, q.user, q.comment)
        if since is not None:
            for job in self._sacct(["-a", "-S", since.strftime("%Y-%m-%dT%H:%M:%S")]):
                if tag in job.comment and job.job_id not in found:
                    found[job.job_id] = (job.job_id, job.user, job.comment)
        return list(found.values())

    def dependants(self, job_ids: list[str], queue: list[Queued] | None = None) -> list[Dependant]:
        return dependants_in(queue if queue is not None else self.queue(), job_ids)

    # -- mutations (called by the action executor only) -----------------------------------------
    def cancel_argv(self, job_id: str) -> list[str]:
        return self._as_owner(self._m(["scancel", check_job_id(job_id)]))

    def hold_argv(self, job_id: str) -> list[str]:
        return self._as_owner(self._m(["scontrol", "hold", check_job_id(job_id)]))

    def release_argv(self, job_id: str) -> list[str]:
        return self._as_owner(self._m(["scontrol", "release", check_job_id(job_id)]))

    def depend_argv(self, job_id: str, dependency: str) -> list[str]:
        if not re.fullmatch(r"[a-z_]{1,32}:[0-9_+:?,a-z]{1,2000}", dependency):
            raise UsageError(
                f"{dependency!r} is not a dependency runbook will pass to Slurm (expected "
                "TYPE:ID[:ID...] terms joined by , or ?)",
                hint=f"set it by hand: scontrol update JobId={job_id} Dependency=...",
            )
        return self._as_owner(
            self._m(
                ["scontrol", "update", f"JobId={check_job_id(job_id)}", f"Dependency={dependency}"]
            )
        )

    def change(self, argv: list[str], what: str):
        return self._checked(argv, what)

    def drain_argv(self, node: str, reason: str) -> list[str]:
        reason = " ".join(reason.split())  # one line: scontrol takes the rest verbatim
        return self._m(
            [
                "scontrol",
                "update",
                f"nodename={check_node(node)}",
                "state=drain",
                f"reason={reason}",
            ]
        )

    def submit_argv(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> list[str]:
        bad = [k for k in env if not _ENV_NAME.match(k)]
        if bad:
            raise UsageError(
                f"invalid environment variable name(s) {bad} for sbatch",
                hint="names are letters, digits and _, not starting with a digit",
            )
        # sbatch exports the submitting environment (--export=ALL is its default), so `env` sets
        # variables for the job without comma-splitting their values as --export would.
        # The job's own arguments follow the script, as the user gave them ($1..$N).
        sbatch = self._m(["sbatch", "--parsable", *args, script, *script_args])
        if self.actor is not None:
            return self.actor.submit(env, sbatch)
        return [*(["env", *[f"{k}={v}" for k, v in env.items()]] if env else []), *sbatch]

    def cancel(self, job_id: str):
        return self._checked(self.cancel_argv(job_id), f"cancelling job {job_id}")

    def drain(self, node: str, reason: str):
        return self._checked(self.drain_argv(node, reason), f"draining {node}")

    def _checked(self, argv: list[str], what: str):
        """Run an argv that already carries -M (the executor shows it as it runs it)."""
        r = self.t.run(argv, timeout=self.timeout)
        if r.exit_code != 0:
            raise slurm_error(what, r)
        return r

    def submit(
        self, script: str, args: list[str], env: dict[str, str], script_args: Sequence[str] = ()
    ) -> str:
        r = self._checked(self.submit_argv(script, args, env, script_args), f"submitting {script}")
        return parse_submitted(r.stdout)


_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]{0,255}(?:%%)?)=(.*)$")


def parse_env_vars(text: str) -> dict[str, str] | None:
    """`sacct --env-vars` output: a header, a rule, then NAME=value lines (a multi-line value,
    an exported bash function, goes on in lines that are no NAME=); "NONE" or nothing: None."""
    body = re.split(r"(?m)^-{10,}\s*$", text, maxsplit=1)
    if len(body) < 2:
        return None
    lines = body[1].strip("\n").split("\n")
    if not any(lines) or [ln.strip() for ln in lines if ln.strip()] == ["NONE"]:
        return None
    env: dict[str, str] = {}
    last = None
    for ln in lines:
        m = _ENV_LINE.match(ln)
        if m:
            last = m.group(1)
            env[last] = m.group(2)
        elif last is not None:
            env[last] += "\n" + ln
    return env or None


def with_components(asked: str, found: list[JobInfo]) -> JobInfo:
    """The one job an id names; for a heterogeneous job, its component 0 with every component
    attached (scontrol and sacct list each). A later component's own id is refused: the job
    is cancelled and resubmitted whole, by its first component's id."""
    het = sorted((j for j in found if j.het_offset is not None), key=lambda j: j.het_offset or 0)
    if not het:
        return one_job(asked, found)
    first = het[0]
    if first.het_offset != 0 or asked not in (first.job_id, first.raw):
        named = next((j for j in het if asked in (j.job_id, j.raw)), None)
        raise UsageError(
            f"job {asked} is component {named.het_offset if named else '?'} of a heterogeneous "
            "job: runbook handles the job as a whole, by its first component's id",
            hint=f"name the job by its first component's id: {first.job_id}"
            if first.het_offset == 0
            else "name the job's first component (squeue shows it as ID+0)",
        )
    return dataclasses.replace(first, components=[dataclasses.replace(j) for j in het])


def one_job(asked: str, found: list[JobInfo]) -> JobInfo:
    """The one job an id names. A plain id that is an array's own id names every task of it
    (scontrol and sacct both list them): runbook acts on one task, so that is a refusal naming
    the tasks, never the first one taken for the job."""
    if "_" in asked:
        return found[0]
    tasks = [j for j in found if j.array_job_id == asked]
    whole = len(tasks) > 1 or any(j.array_job_id == asked and not j.array_task for j in found)
    if not whole:
        return next((j for j in found if asked in (j.job_id, j.raw)), found[0])
    listed = ", ".join(f"{j.job_id} {j.state}" for j in tasks[:12])
    more = f" and {len(tasks) - 12} more" if len(tasks) > 12 else ""
    bad = [j.job_id for j in tasks if j.state not in ("COMPLETED", "RUNNING", "PENDING")]
    raise ArrayJobError(
        f"job {asked} is a job array ({listed}{more}): runbook handles one task at a time",
        hint=(
            f"run it on a failed task: runbook oom --job {bad[0]}"
            if bad and bad[0] != asked
            else "name one task as ARRAY_TASK, e.g. runbook oom --job "
            f"{asked}_{tasks[0].array_task_id or 0}"
        ),
    )


_STAMP = "%Y-%m-%dT%H:%M:%S"


def parse_node_events(stdout: str) -> list[NodeStateEvent]:
    """`sacctmgr -n -P show event format=NodeName,TimeStart,TimeEnd,State,User,Reason` rows;
    the cluster's own events (no node name) are not a node's."""
    out = []
    for line in stdout.splitlines():
        parts = line.split("|", 5)
        if len(parts) < 6 or not parts[0].strip():
            continue
        node, start, end, st, user, reason = (p.strip() for p in parts)
        out.append(
            NodeStateEvent(
                node=node,
                start=parse_time(start),
                end=parse_time(end),
                state=st,
                user=re.sub(r"\(\d{1,18}(?!\d)\)$", "", user),
                reason=reason,
            )
        )
    return out


def parse_submitted(stdout: str) -> str:
    m = re.search(r"^(\d{1,18}(?!\d))(?:;\S+)?\s*$", stdout.strip(), re.M)
    if not m:
        raise SlurmError(
            f"sbatch printed no job id: {stdout.strip()[:200]!r}",
            hint="check squeue for the job; a wrapper around sbatch may print other text first",
        )
    return m.group(1)


def _int(value: str | None) -> int | None:
    return small_int(value)


def _nodes(expr: str) -> list[str]:
    return [] if not expr or expr in {"(null)", "None assigned"} else expand(expr)


def _while_completing(f: dict[str, str]) -> dict[str, str]:
    """`f` with NumNodes as allocated: while a job completes, slurmctld drops each node that
    finished its epilog from NumNodes (and NodeList), so a job read then shows fewer nodes than
    it ran on (seen: a 3-node job read as 1 a second after its scancel); its TRES keeps them."""
    m = re.search(r"(?:^|,)node=(\d{1,9})(?:,|$)", f.get("TRES", ""))
    if "COMPLETING" not in f.get("JobState", "") or not m:
        return f
    return {**f, "NumNodes": m.group(1)}


def _from_scontrol(f: dict[str, str]) -> JobInfo:
    f = _while_completing(f)
    raw = f.get("JobId", "")
    return JobInfo(
        job_id=canonical_id(raw, f.get("ArrayJobId"), f.get("ArrayTaskId")),
        raw_id=raw,
        restarts=_int(f.get("Restarts")) or 0,
        name=f.get("JobName", ""),
        user=re.sub(r"\(\d{1,18}(?!\d)\)$", "", f.get("UserId", "")),
        state=expand_state(f.get("JobState", "")),
        exit_code=f.get("ExitCode"),
        nodes=_nodes(f.get("NodeList", "")),
        node_expr=f.get("NodeList", ""),
        start=parse_time(f.get("StartTime")),
        end=parse_time(f.get("EndTime")),
        submit=parse_time(f.get("SubmitTime")),
        work_dir=f.get("WorkDir", ""),
        stdout=f.get("StdOut", ""),
        stderr=f.get("StdErr", ""),
        partition=f.get("Partition", ""),
        tres=f.get("TRES", ""),
        comment="" if f.get("Comment") == "(null)" else f.get("Comment", ""),
        # A pending job shows a range ("NumNodes=2-2"): its lower bound is what it will get.
        num_tasks=_int(f.get("NumTasks")),
        num_nodes=_int((f.get("NumNodes") or "").split("-")[0]),
        array_job_id=f.get("ArrayJobId"),
        array_task_id=f.get("ArrayTaskId"),
        excluded=_nodes(f.get("ExcNodeList", "")),
        batch_host=f.get("BatchHost", ""),
        source="scontrol",
        resources=recorded(f, raw, f.get("ArrayJobId")),
        het_offset=_int(f.get("HetJobOffset")) if f.get("HetJobId") else None,
        dependency="" if f.get("Dependency") in (None, "(null)") else f["Dependency"],
        reason=f.get("Reason", ""),
    )


def sacct_rows(stdout: str) -> list[str]:
    """`sacct -P` rows, one per job: a comment or a submit line (`--wrap` with a newline) may
    hold newlines. A row goes on until it has all its separators; a line with none after a whole
    row goes on that row's last field (the submit line)."""
    rows: list[str] = []
    held = ""
    for line in stdout.rstrip("\n").split("\n"):
        if held:
            held = f"{held}\n{line}"
        elif SEP not in line and rows:
            rows[-1] += f"\n{line}"
            continue
        else:
            held = line
        if held.count(SEP) >= len(SACCT_FIELDS) - 1:
            rows.append(held)
            held = ""
    if held.strip():
        rows.append(held)  # a row cut short: read what it has
    return [r for r in rows if r.strip()]


def _sacct_script(text: str) -> str:
    """A script as `sacct -B` prints it, less the newline sacct adds after it (measured on 22.05:
    the script as stored, then one "\n"), so both backends hand on the script as stored."""
    return text[:-1] if text.endswith("\n") else text


def _from_sacct(line: str) -> JobInfo:
    f = dict(zip(SACCT_FIELDS, line.split(SEP), strict=False))
    m = re.match(r"^(\d{1,18}(?!\d))_(\d{1,18}(?!\d)|\[[^\]]{0,200}\])$", f.get("JobID", ""))
    raw = f.get("JobIDRaw", "")
    array_job, array_task = (m.group(1), m.group(2)) if m else (None, None)
    het = re.match(r"^\d{1,18}\+(\d{1,6})$", f.get("JobID", ""))  # ID+OFFSET: a component
    return JobInfo(
        job_id=canonical_id(raw, array_job, array_task),
        raw_id=raw,
        name=f.get("JobName", ""),
        user=f.get("User", ""),
        state=expand_state(f.get("State", "")),
        exit_code=f.get("ExitCode") or None,
        nodes=_nodes(f.get("NodeList", "")),
        node_expr=f.get("NodeList", ""),
        start=parse_time(f.get("Start")),
        end=parse_time(f.get("End")),
        submit=parse_time(f.get("Submit")),
        work_dir=f.get("WorkDir", ""),
        partition=f.get("Partition", ""),
        tres=f.get("AllocTRES", ""),
        comment=f.get("Comment", ""),
        num_nodes=_int(f.get("NNodes")),
        array_job_id=array_job,
        array_task_id=array_task,
        submit_line=f.get("SubmitLine", ""),
        source="sacct",
        het_offset=int(het.group(1)) if het else None,
    )
