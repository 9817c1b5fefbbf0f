"""The mutating steps, each an Action for the executor: what runs, its idempotency key, and the
live-state check that makes a second attempt a "skipped" line instead of a second scancel."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from runbook.actions.executor import Action, Outcome
from runbook.errors import RunbookError
from runbook.record import record

# How long a mutation's effect is awaited in Slurm before the step is called failed: scancel
# marks a job CANCELLED at once (its processes get KillWait to exit), a drain is at once too;
# a few seconds cover a busy slurmctld.
READBACK_S = 20.0


def read_back(what: str, probe: Callable[[], str | None], timeout_s: float) -> str | None:
    """Poll `probe` (None once the effect shows, else what Slurm shows instead) until it says
    done or the time is up: None, or why the effect never showed."""
    deadline = time.monotonic() + timeout_s
    seen, wait = "nothing read", 0.1
    while True:
        try:
            now = probe()
        except RunbookError as e:
            now = f"could not be read back ({e.message})"
        if now is None:
            return None
        seen = now
        if time.monotonic() >= deadline:
            return f"{what} did not take effect within {timeout_s:g} s: {seen}"
        # One backoff: slurmctld shows most changes at once, a busy one within a second or two;
        # asking every half second for 20 s would be 40 RPCs for one stuck change.
        time.sleep(min(wait, max(0.0, deadline - time.monotonic())))
        wait = min(wait * 2, 4.0)


def _ending(job) -> bool:
    return job.terminal or job.state == "COMPLETING"


def _then_read_back(
    r,
    what: str,
    probe,
    timeout_s: float,
    shown: str,
    value: Callable[[], str | None] = lambda: None,
) -> Outcome:
    """The Outcome of a Slurm command that ran: failed as it exited, else applied only once
    `probe` shows its effect (`shown` then said after "done"; `value`, what the read-back saw)."""
    code, out = getattr(r, "exit_code", 0), getattr(r, "stdout", "") or ""
    if code != 0:
        return Outcome(code, out)
    why = read_back(what, probe, timeout_s)
    return Outcome(1, out, error=why) if why else Outcome(0, out, value=value(), note=shown)


def cancel(client, job_id: str, *, readback_s: float = READBACK_S, known=None) -> Action:
    """scancel, done once Slurm shows the job ending. `known`: the job as this run read it
    moments ago (its job stage), so the check does not ask slurmctld again; a job that ended
    by itself in between makes scancel fail, and that failure is read back, not reported."""

    def check():
        job = known if known is not None else client.job(job_id)
        if _ending(job):  # already ending: a second scancel is noise
            return f"job {job_id} already {job.state}; no scancel needed"
        return None

    seen: dict = {}

    def probe():
        job = seen["job"] = client.job(job_id)
        return None if _ending(job) else f"Slurm still shows job {job_id} {job.state}"

    def ended() -> str | None:
        # The end Slurm recorded for the cancel: when the GPUs were freed, for the cost.
        end = getattr(seen.get("job"), "end", None)
        return end.isoformat() if end else None

    def apply():
        # scancel exits 0 for ids Slurm ignores (an array task by its raw id on 22.05): done
        # only once Slurm shows the job ending.
        try:
            r = client.cancel(job_id)
        except RunbookError as e:
            if known is None or probe() is not None:
                raise
            return Outcome(0, e.message, value=ended(), note="it had ended by itself")
        return _then_read_back(
            r, f"scancel {job_id}", probe, readback_s, "Slurm shows it ending", ended
        )

    return Action(
        "cancel",
        job_id,
        client.cancel_argv(job_id),
        f"cancel:{job_id}",
        f"scancel {job_id} so the surviving ranks release their GPUs",
        check,
        apply,
    )


def drain(
    client, node: str, reason: str, incident: str, *, readback_s: float = READBACK_S
) -> Action:
    def check():
        state, why = client.node_state(node)
        if "DRAIN" in state.upper():
            return f"{node} already drained ({state}, reason: {why or 'none given'})"
        return None

    def probe():
        state, _ = client.node_state(node)
        return None if "DRAIN" in state.upper() else f"Slurm shows {node} {state or '?'}"

    def apply():
        r = client.drain(node, reason)
        return _then_read_back(r, f"drain {node}", probe, readback_s, f"{node} shows DRAIN")

    return Action(
        "drain",
        node,
        client.drain_argv(node, reason),
        f"drain:{node}:{incident}",
        f"drain {node}: {reason}",
        check,
        apply,
    )


def _held(job) -> bool:
    return job.reason.startswith("JobHeld")


def not_waiting(job, on: str | None, owner: str | None) -> str | None:
    """Why slurmctld's own record of `job` says it is not a dependant of `on` owned by `owner`
    (the queue listing that named it is text a comment could have forged), else None."""
    from runbook.slurm.dependency import types_on

    if owner is not None and job.user != owner:
        return f"job {job.job_id} is {job.user or '?'}'s, not {owner}'s: left alone"
    if on is not None and not types_on(job.dependency, on):
        return f"job {job.job_id} does not wait on {on} ({job.dependency or 'no dependency'})"
    return None


def hold(
    client,
    job_id: str,
    incident: str,
    *,
    readback_s: float = READBACK_S,
    on: str | None = None,
    owner: str | None = None,
) -> Action:
    """Hold a job that waits on the one about to be cancelled (a cancel would set it off); its
    value "held" tells the release that runbook held it (a hold of the user's own is kept).
    `on`, `owner`: the job it must wait on and its owner, checked in slurmctld's record."""

    def check():
        job = client.job(job_id)
        if job.state != "PENDING":
            return f"job {job_id} is {job.state}: nothing to hold"
        if why := not_waiting(job, on, owner):
            return why
        return f"job {job_id} is already held ({job.reason})" if _held(job) else None

    def probe():
        job = client.job(job_id)
        return None if _held(job) else f"Slurm shows job {job_id} {job.state} ({job.reason})"

    argv = client.hold_argv(job_id)
    return Action(
        "hold",
        job_id,
        argv,
        f"hold:{job_id}:{incident}",
        f"hold job {job_id}: it waits on the job being cancelled",
        check,
        lambda: _then_read_back(
            client.change(argv, f"holding job {job_id}"),
            f"scontrol hold {job_id}",
            probe,
            readback_s,
            "Slurm shows it held",
            lambda: "held",
        ),
    )


# Run as the job's owner (runbook.identity): runbook's request to a running job, written where
# its ranks poll it (evidence.handler checked the name), through a temporary name renamed into
# place, so a rank never reads half a request and a planted link is replaced, never followed.
_REQUEST_WRITE = (
    "set -e; umask 022; d=$1; f=$2; "
    '[ -d "$d" ] || { echo "$d is not a folder on this host" >&2; exit 3; }; '
    't=$(mktemp "$d/.runbook-request-XXXXXX"); cat >"$t"; chmod 644 -- "$t"; '
    'mv -fT -- "$t" "$d/$f"; echo wrote'
)


def request_checkpoint(actor, job_id: str, path: str, incident: str, what: str) -> Action:
    """Write runbook's checkpoint request for job `job_id` into `path` as the job's owner:
    `what` is next (each rank says its step and pauses), a step number (every rank saves
    after it), or withdrawn (the ranks go on). Once per incident and `what`; its value is when
    it was written. Slurm shows no effect: the ranks' answers are read back from the log."""
    from runbook.instrument import REQUEST_HEAD

    text = f"{REQUEST_HEAD} id={incident} step={what}\n"
    folder, name = os.path.split(path)
    argv = (actor.wrap if actor is not None else list)(
        ["sh", "-c", _REQUEST_WRITE, "runbook-request", folder, name]
    )

    def apply():
        import subprocess

        sent = time.time()
        try:
            r = subprocess.run(
                argv, input=text.encode(), capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.SubprocessError) as e:
            return Outcome(1, "", error=f"could not write {path}: {e}; {fix}")
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip()
            return Outcome(
                r.returncode, err, error=f"could not write {path}: {err or r.returncode}; {fix}"
            )
        return Outcome(0, r.stdout.decode(errors="replace").strip(), value=f"{sent}")

    said = {
        "next": "ask its ranks to say their step and pause",
        "withdrawn": "withdraw the request: its ranks go on training",
    }.get(what, f"ask every rank to checkpoint after step {what}")
    who = f" as {actor.owner.name}" if actor is not None and actor.as_owner else ""
    fix = (
        f"the ranks poll it there: check that {folder} is on a filesystem runbook's host "
        f"shares with the job's nodes and that the job's owner may write in it (the job trains "
        "on, nothing else was changed)"
    )
    return Action(
        "request",
        job_id,
        ["write", path, text.strip() + who],
        f"request:{job_id}:{incident}:{what}",
        f"job {job_id}: {said} ({path}{who})",
        lambda: None,  # the ledger's key makes each write once; the job's answer is read back
        apply,
    )


def release(
    client,
    job_id: str,
    incident: str,
    *,
    readback_s: float = READBACK_S,
    why: str = "it now waits on the rerun",
) -> Action:
    def check():
        job = client.job(job_id)
        return None if _held(job) else f"job {job_id} is not held ({job.state} {job.reason})"

    def probe():
        job = client.job(job_id)
        return f"Slurm still shows job {job_id} held" if _held(job) else None

    argv = client.release_argv(job_id)
    return Action(
        "release",
        job_id,
        argv,
        f"release:{job_id}:{incident}",
        f"release job {job_id}: {why}",
        check,
        lambda: _then_read_back(
            client.change(argv, f"releasing job {job_id}"),
            f"scontrol release {job_id}",
            probe,
            readback_s,
            "Slurm shows it released",
        ),
    )


def depend(
    client,
    job_id: str,
    dependency: str,
    rerun: str,
    *,
    readback_s: float = READBACK_S,
    on: str | None = None,
    owner: str | None = None,
) -> Action:
    """Point a job that waited on the cancelled one (`on`, of `owner`, as slurmctld's record
    must show) at its rerun: the same dependency types, read back from slurmctld."""
    from runbook.slurm.dependency import types_on

    def check():
        job = client.job(job_id)
        if job.state != "PENDING":
            return f"job {job_id} is {job.state}: its dependency no longer matters"
        if types_on(job.dependency, rerun):
            return f"job {job_id} already waits on {rerun}"
        return not_waiting(job, on, owner)

    def probe():
        job = client.job(job_id)
        shown = job.dependency or "no dependency"
        return None if types_on(job.dependency, rerun) else f"Slurm shows {shown}"

    argv = client.depend_argv(job_id, dependency)
    return Action(
        "depend",
        job_id,
        argv,
        f"depend:{job_id}:{rerun}",
        f"point job {job_id} at the rerun {rerun}: Dependency={dependency}",
        check,
        lambda: _then_read_back(
            client.change(argv, f"updating job {job_id}'s dependency"),
            f"scontrol update JobId={job_id} Dependency={dependency}",
            probe,
            readback_s,
            f"Slurm shows it waiting on {rerun}",
            lambda: dependency,
        ),
    )


def write_file(path: str, content: str, *, mode: int = 0o755) -> Action:
    """A new file, written atomically. An existing file is never overwritten: the same content
    is "already written", different content is an error."""
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]

    def check():
        if os.path.exists(path):
            if Path(path).read_text(encoding="utf-8", errors="replace") == content:
                return f"{path} already holds this content"
            raise RunbookError(
                f"{path} exists with other content; runbook never overwrites a file",
                hint="move it away, or let runbook pick a new version name",
            )
        return None

    def apply():
        folder = os.path.dirname(path) or "."
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".runbook-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            os.link(tmp, path)  # fails if the path appeared meanwhile: never a silent overwrite
        finally:
            os.unlink(tmp)
        return Outcome(0, f"wrote {len(content)} bytes", path)

    return Action(
        "write_file",
        path,
        ["write", path, f"sha256:{digest}"],
        f"write:{path}:{digest}",
        f"write {path}",
        check,
        apply,
    )


# Run as the job's owner (runbook.identity): the rerun's file in the owner's folder, made mode
# 700 by the owner, written through a temporary name and linked into place (never over an
# existing file: the same content is "already written", other content an error).
_OWNER_WRITE = (
    "set -e; umask 077; d=$1; f=$2; m=$3; "
    'mkdir -p -- "$d"; chmod 700 -- "$d"; '
    't=$(mktemp "$d/.runbook-XXXXXX"); cat >"$t"; chmod "$m" -- "$t"; '
    'if [ -e "$d/$f" ] || [ -L "$d/$f" ]; then '
    'if cmp -s -- "$t" "$d/$f"; then rm -f -- "$t"; echo same; exit 0; fi; '
    'rm -f -- "$t"; echo "$d/$f exists with other content" >&2; exit 3; fi; '
    'ln -- "$t" "$d/$f"; rm -f -- "$t"; echo wrote'
)


def write_owner_file(actor, path: str, content: str, *, mode: int = 0o600) -> Action:
    """A new file the job's owner writes (the rerun's script, config copies, environment):
    readable by the owner and no other user, wherever the owner's folder is. runbook's own
    account may not be able to read it back: the owner's shell compares, so a second attempt
    is "already written", never a second file."""
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    folder, name = os.path.split(path)
    argv = actor.wrap(["sh", "-c", _OWNER_WRITE, "runbook-write", folder, name, f"{mode:o}"])

    def apply():
        import subprocess

        try:
            r = subprocess.run(
                argv, input=content.encode(), capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise RunbookError(
                f"could not write {path} as {actor.owner.name}: {e}",
                hint="check that the job's working directory exists and is its owner's",
            ) from None
        out = r.stdout.decode(errors="replace").strip()
        if r.returncode != 0:
            err = r.stderr.decode(errors="replace").strip()
            return Outcome(
                r.returncode,
                err,
                error=f"{actor.owner.name} could not write {path}: "
                f"{err or 'exit ' + str(r.returncode)}; check that the job's working directory "
                f"exists and {actor.owner.name} may write in it, then run runbook again",
            )
        note = "it already held this content" if out == "same" else ""
        return Outcome(0, f"{out} {len(content)} bytes as {actor.owner.name}", path, note)

    return Action(
        "write_file",
        path,
        ["write", path, f"sha256:{digest}", f"as {actor.owner.name}"],
        f"write:{path}:{digest}",
        f"write {path} as {actor.owner.name}",
        lambda: None,
        apply,
    )


@record
class Known:
    """What this incident already read of Slurm for the lineage check: slurmctld's jobs (its
    queue, read at the job stage under the job's lock) and where accounting must still be
    asked (None: nowhere, lineage_window)."""

    queue: list
    since: datetime | None


def lineage_window(job) -> datetime | None:
    """Since when accounting must be searched for reruns of `job`. None while slurmctld still
    holds the job (read from it, not from accounting): a rerun is submitted after its parent
    and, its parent cancelled or ended first, ends after it, and MinJobAge forgets jobs in the
    order they ended, so slurmctld holds every rerun too. Else from the job's submission (no
    rerun is older), an hour earlier for clocks that disagree; 14 days when Slurm gave none."""
    if getattr(job, "source", "") == "scontrol":
        return None
    start = job.submit or job.start
    return start - timedelta(hours=1) if start else datetime.now() - timedelta(days=14)


def submit(
    client,
    script: str,
    args: list[str],
    env: dict[str, str],
    *,
    incident: str,
    parent: str | None = None,
    rung: str | None = None,
    secret: bytes = b"",
    runbook_user: str = "",
    array_task: str | None = None,
    failed_step: int | None = None,
    need: str = "",
    script_args: Sequence[str] = (),
    known: Known | None = None,
    owner: str = "",
) -> Action:
    """sbatch. A rerun carries its lineage in its comment, signed with the site's secret and the
    owner (a rerun is its owner's job), so the next incident knows the rungs tried, and one
    parent and rung are resubmitted once. A claim without a valid signature, or on another
    user's job than the one signed, is not believed."""
    from runbook import lineage as tags

    if parent:
        comment = tags.tag(secret, incident, parent, rung or "", failed_step, need, owner)
        # Before a heterogeneous job's first `:`: the comment is the job's, read on its first
        # component (after the `:` it would be a later component's only).
        at = args.index(":") if ":" in args else len(args)
        args = [*args[:at], f"--comment={comment}", *args[at:]]
        key = f"submit:{parent}:{rung}"
    else:
        key = f"submit:{script}"

    # Comments that claim to be this very rerun and cannot be believed: named with the result,
    # so the report shows who tried (anyone can write a comment; none of them stops the rerun).
    forged: list[str] = []

    def check():
        if not parent:
            return None
        forged.clear()
        found = (
            client.find_lineage(parent, rung or "", known.since, queue=known.queue)
            if known is not None
            else client.find_lineage(parent, rung or "", datetime.now() - timedelta(days=14))
        )
        for job_id, user, comment in found:
            claim = tags.read(job_id, comment, user, secret=secret, runbook_user=runbook_user)
            same = claim is not None and (claim.fields.get("parent"), claim.fields.get("rung")) == (
                parent,
                rung,
            )
            if same and claim.trusted:
                return f"already resubmitted as job {job_id} (same parent and rung)"
            if same and claim is not None:
                forged.append(f"job {job_id} of user {user or '?'} ({claim.why})")
        return None

    def apply():
        job_id = client.submit(script, args, env, script_args)
        if array_task is not None:  # an array of one task: runbook names it by its task
            job_id = f"{job_id}_{array_task}"
        note = (
            "SUSPICIOUS: ignored comment(s) claiming to be this rerun: " + "; ".join(forged)
            if forged
            else ""
        )
        return Outcome(0, f"Submitted batch job {job_id}", job_id, note)

    what = f" (parent {parent}, rung {rung})" if parent else ""
    return Action(
        "submit",
        script,
        client.submit_argv(script, args, env, script_args),
        key,
        f"sbatch {script}{what}",
        check,
        apply,
    )
