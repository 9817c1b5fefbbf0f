"""`runbook sweep`: triage every job that failed in a window, for cron.

One accounting query for the window (a CUDA OOM ends FAILED, exit 1; OUT_OF_MEMORY is host RAM,
so the state alone says little), plus one slurmctld read for the jobs it still holds (their log
paths come resolved there) and the running jobs (a rank that OOMed leaves the others wedged in a
collective: RUNNING, never FAILED, until the time limit). Logs are confirmed where they are, in
one SSH exec per host for all its candidates. Jobs already handled, and lineages already
resubmitted, are skipped. A verdict the site lets act unattended goes through the same pipeline
as `runbook oom`; any other OOM is listed for a person. Pending verifications are finished in the
same pass. Only one sweep runs at a time.
"""

from __future__ import annotations

import dataclasses
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import field
from datetime import datetime, timedelta

from runbook import lineage, state
from runbook.diagnosis import classify
from runbook.errors import ExitCode, RunbookError
from runbook.evidence import collect, job_metrics, trend
from runbook.evidence.gather import gather
from runbook.hang_diagnosis import WATCHDOG
from runbook.pipeline import handle_incident
from runbook.planning import fit as fitting
from runbook.planning.ladder import ACTING_VERDICTS
from runbook.planning.plan import failing_batch
from runbook.playbook import load as load_playbook
from runbook.record import record
from runbook.slurm.factory import slurm_client
from runbook.transport.ssh import SshHosts, SshSettings
from runbook.trigger import ACTIVE, OOM_KINDS, Options, Trigger


class SweepBusy(RunbookError):
    """Another sweep is running."""

    exit_code = ExitCode.OK


@record
class Line:
    job_id: str
    user: str
    state: str
    verdict: str
    action: str
    incident: str | None = None
    exit_code: int = 0


@record
class SweepResult:
    lines: list[Line] = field(default_factory=list)
    verifications: list[dict] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        codes = [ln.exit_code for ln in self.lines]
        # A rerun whose program refused runbook's change waits for a person.
        codes += [
            int(ExitCode.NEEDS_HUMAN) for v in self.verifications if v.get("state") == "refused"
        ]
        for bad in (int(ExitCode.STEP_FAILED), int(ExitCode.NEEDS_HUMAN)):
            if bad in codes:
                return bad
        return int(ExitCode.OK)


def parse_since(text: str) -> timedelta:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    t = text.strip().lower()
    if len(t) >= 2 and t[:-1].isdigit() and t[-1] in units:
        return timedelta(seconds=int(t[:-1]) * units[t[-1]])
    from runbook.errors import UsageError

    raise UsageError(f"--since {text!r}: expected a number and a unit, e.g. 30m, 2h, 1d")


def run_sweep(
    site, since: timedelta, *, dry_run: bool = False, progress=lambda m: None
) -> SweepResult:
    conn = state.site_db(site, dry_run=dry_run)
    holder = f"sweep:{os.getpid()}:{time.time()}"
    lease = site.state.lease_s
    other = None if dry_run else state.try_lock(conn, "sweep", holder, ttl_s=lease)
    if other is not None:
        raise SweepBusy(
            f"another sweep is running (pid {other['pid']} on {other['host']}, since "
            f"{time.strftime('%H:%M:%S', time.localtime(other['acquired']))}); "
            "this one exits"
        )
    beat = None if dry_run else state.Heartbeat(conn, "sweep", holder, lease)
    try:
        return _sweep(site, conn, since, dry_run, progress)
    finally:
        if beat is not None:
            beat.stop()
            state.release(conn, "sweep", holder)


def _sweep(site, conn, since, dry_run, progress) -> SweepResult:
    res = SweepResult()
    client = slurm_client(site)
    t0 = time.monotonic()
    parts = site.sweep.partitions
    failed, known_all = _queries(client, datetime.now() - since, parts)
    res.stats["slurm_seconds"] = round(time.monotonic() - t0, 3)  # where a period's time goes
    known = {j.job_id: j for j in known_all if not parts or j.partition in parts}
    # The window is one query whatever the job count. Jobs slurmctld has already forgotten
    # (MinJobAge) lost their resolved log paths; their scripts come in one more query, together.
    res.stats["accounting_queries"] = 1
    res.stats["script_queries"] = 0
    running = (
        [j for j in known.values() if j.state == "RUNNING"] if site.sweep.include_running else []
    )
    # slurmctld's record (resolved log paths), with accounting's submit line (--open-mode).
    jobs = {
        j.job_id: dataclasses.replace(known[j.job_id], submit_line=j.submit_line)
        if j.job_id in known
        else j
        for j in failed
    }
    for j in running:
        jobs.setdefault(j.job_id, j)
    handled, candidates = _candidates(site, conn, jobs, known, res)
    progress(f"{len(failed)} failed and {len(running)} running jobs; {len(candidates)} to triage")
    need_scripts = [j.job_id for j in candidates if not j.stdout]
    scripts = client.batch_scripts(need_scripts) if need_scripts else {}
    if need_scripts:
        res.stats["script_queries"] = 1
    # The watch: a running job's logs are read from where the last sweep stopped (issue 65);
    # so are those of a job that ended since a period read them: its incident starts from
    # what the watch holds (_whole).
    held = {}
    for j in candidates:
        h = collect.Held(*state.watch_held(conn, j.job_id, state.watch_run(j)))
        if j.state == "RUNNING" or h.offsets:
            held[j.job_id] = h
    t_read = time.monotonic()
    launches, execs, unreadable = _read_all(site, candidates, scripts, held)
    res.stats["read_seconds"] = round(time.monotonic() - t_read, 3)
    res.stats["ssh_execs_per_host"] = execs
    res.stats["watch_bytes_read"] = sum(
        logs.bytes_read for jid, logs in launches.items() if jid in held
    )
    playbook = load_playbook(site.playbooks.dir)  # once per sweep, passed to every incident
    for j in sorted(candidates, key=lambda j: int(j.job_id.split("_")[0])):
        try:
            _triage(
                site,
                conn,
                j,
                launches.get(j.job_id),
                playbook,
                dry_run,
                res,
                unreadable.get(j.job_id, "logs not readable"),
            )
        except Exception as e:  # one job's surprise must not stop the sweep of the others
            why = f"error: {type(e).__name__}: {e}"
            res.lines.append(
                Line(j.job_id, j.user, j.state, "unknown", why, None, int(ExitCode.STEP_FAILED))
            )
            continue  # what it read is not held: the next sweep reads it again
        logs = launches.get(j.job_id)
        running = j.state == "RUNNING"
        if running and j.job_id in held and logs is not None and logs.watched and not dry_run:
            state.save_watch(
                conn, j.job_id, state.watch_run(j), logs.watched, logs.series, logs.excerpts
            )
    if not dry_run:
        watching = {jid for jid in held if jobs.get(jid) and jobs[jid].state == "RUNNING"}
        res.stats["watch_dropped"] = state.drop_watch(conn, watching)
    res.lines.extend(_shrunk_jobs(site, client, known.values(), handled, dry_run))
    if not dry_run:
        res.verifications = _verify_pending(site, conn)
    res.stats["seconds"] = round(time.monotonic() - t0, 3)
    res.stats["jobs_triaged"] = len(candidates)
    return res


def _queries(client, since: datetime, parts) -> tuple[list, list]:
    """Accounting's failed jobs of the window (one query) and slurmctld's jobs: at once where the
    backend runs Slurm's commands (two processes; a watch period waits for the longer, not both,
    issue 65), one after the other for a library backend, whose calls share its state."""
    if client.name != "cli":
        return client.failed_jobs(since, partitions=parts), client.known_jobs()
    with ThreadPoolExecutor(2) as pool:
        failed = pool.submit(client.failed_jobs, since, partitions=parts)
        known = pool.submit(client.known_jobs)
        return failed.result(), known.result()


def _candidates(site, conn, jobs: dict, known: dict, res: SweepResult):
    """The jobs no incident has handled and no rerun of runbook's replaced; each other one is
    said, with why it is skipped. Also the handled jobs, by id, for the shrunk-job check."""
    # Handled: an incident that finished, needs a person, or runs now. One that stopped (a step
    # failed, evidence was incomplete) or was interrupted is tried again.
    handled = {
        r["job_id"]: r["id"]
        for r in conn.execute("SELECT job_id, id, status FROM incidents ORDER BY created")
        if state.incident_state(conn, r) in ("complete", "needs_human", "running")
    }
    # Parents of runbook's own reruns (signed tags only: a comment anyone can write is no proof).
    secret, me = lineage.site_secret(site), lineage.runbook_user(site)
    claims = (
        lineage.read(j.job_id, j.comment, j.user, secret=secret, runbook_user=me)
        for j in list(jobs.values()) + list(known.values())
    )
    children = {c.fields.get("parent") for c in claims if c is not None and c.trusted}
    children |= {
        r["job_id"]
        for r in conn.execute("SELECT i.job_id FROM incidents i WHERE i.new_job_id IS NOT NULL")
    }
    candidates = []
    for j in jobs.values():
        if j.job_id in handled:
            res.skipped.append((j.job_id, f"already handled by incident {handled[j.job_id]}"))
        elif j.job_id in children:
            res.skipped.append((j.job_id, "already resubmitted on its lineage"))
        else:
            candidates.append(j)
    return handled, candidates


def _triage(site, conn, j, logs, playbook, dry_run, res, unreadable: str) -> None:
    if logs is None:
        res.lines.append(
            Line(j.job_id, j.user, j.state, "unknown", unreadable, None, int(ExitCode.STEP_FAILED))
        )
        return
    launch = logs.launch
    ff = launch.first_failure
    if logs.watched and (j.state not in ACTIVE or (ff and ff.kind in OOM_KINDS)):
        # An incident's evidence is the whole log, not a period's (an ended job's last read is
        # the rest after what the watch held).
        logs = _whole(site, j, logs, res)
        launch, ff = logs.launch, logs.launch.first_failure
    if j.state in ACTIVE and not (ff and ff.kind in OOM_KINDS):
        why = stalled(site, conn, j, logs, time.time())
        if why:  # the hung-job runbook: the capture reads only; acting follows [policy]
            from runbook.hang import handle_hang

            logs = _whole(site, j, logs, res)
            r = handle_hang(
                Trigger(j.job_id, "sweep", "runbook sweep", logs=logs, reason=why),
                site,
                Options(dry_run=dry_run),
            )
            res.lines.append(_result_line(j, r, "unknown", f"hung ({why}): "))
        elif seen := trend.watch(job_metrics.running_series(j, launch), site.ladder.fit_margin):
            # Before it dies: its worst rank said; prevented where the job and the site allow
            # it (runbook prevent), else nothing changed.
            # The handlers' declarations are at the log's start: asked of the whole log.
            whole = _whole(site, j, logs, res)
            if _may_prevent(site, whole.launch, j):
                res.lines.append(_prevent(site, j, whole, dry_run))
            else:
                said = _pressure(site, j, seen)
                res.lines.append(Line(j.job_id, j.user, j.state, seen.kind, said))
                if not dry_run:
                    tell_once(conn, site, j.job_id, seen.kind, said)
        return  # a healthy running job is none of the sweep's business
    verdict = classify(
        gather(launch=launch, slurm=collect.slurm_text(j), job_id=j.raw),
        playbook.thresholds,
    ).verdict
    if verdict not in ACTING_VERDICTS:
        res.lines.append(Line(j.job_id, j.user, j.state, verdict, "report only: not an OOM"))
    elif verdict in site.policy.unattended_verdicts:
        # The logs just read are the incident's evidence: not read a second time.
        r = handle_incident(
            Trigger(j.job_id, "sweep", "runbook sweep", logs=logs),
            site,
            Options(dry_run=dry_run, playbook=playbook),
        )
        res.lines.append(_result_line(j, r, verdict))
    else:
        res.lines.append(
            Line(
                j.job_id,
                j.user,
                j.state,
                verdict,
                f"needs a person: runbook oom --job {j.job_id}",
                None,
                int(ExitCode.NEEDS_HUMAN),
            )
        )


def tell_once(conn, site, job_id: str, kind: str, said: str) -> bool:
    """The on-call sink told of a running job heading for an OOM, once per job and kind (the
    cron's next sweeps see it again: one message, not one every period). True when queued."""
    from runbook import notify

    key = f"watch-{job_id}-{kind}"
    with conn.write():
        if conn.execute("SELECT 1 FROM outbox WHERE incident = ?", (key,)).fetchone():
            return False
        queued = notify.queue(conn, site, key, f"job {job_id} {kind}: {said}", None)
    if queued:
        notify.flush(conn, site)
    return bool(queued)


def read_running(site, job_id: str):
    """(its logs, whether it heads for an OOM) of a running job, read as the sweep reads them
    (one exec on its batch host): heading when its log holds no OOM but its worst rank's series
    heads for one. (None, False) when the job does not run, or Slurm or the node cannot answer
    now (the runbook then reads and says so itself). What the hook does with a delivery for a
    job still training: the prevention runbook decides from there."""
    try:
        job = slurm_client(site).job(job_id)
        if job.state != "RUNNING":
            return None, False
        logs = _read_all(site, [job], {})[0].get(job.job_id)
    except RunbookError:
        return None, False
    if logs is None:
        return None, False
    ff = logs.launch.first_failure
    if ff is not None and ff.kind in OOM_KINDS:
        return logs, False
    series = job_metrics.running_series(job, logs.launch)
    return logs, trend.watch(series, site.ladder.fit_margin) is not None


def _may_prevent(site, launch, job) -> bool:
    """Whether [policy] unattended_prevent lets the sweep ask this job: every rank of its world
    declared that it checkpoints on request (counted against Slurm's figures for `job`), and
    (under "opted_in") its owner set RUNBOOK_PREVENT=1. The prevention runbook decides again
    from its own read; this only spares an incident per reported job."""
    from runbook.evidence import handler

    mode = site.policy.unattended_prevent
    if mode == "never":
        return False
    h = handler.read(launch.instrument, job, handler.seen_ranks(launch))
    return h.request is not None and (mode == "declared" or h.opted_in)


def _prevent(site, j, logs, dry_run) -> Line:
    from runbook.prevent import handle_prevent

    r = handle_prevent(
        Trigger(j.job_id, "sweep", "runbook sweep", logs=logs), site, Options(dry_run=dry_run)
    )
    return _result_line(j, r, "unknown")


def _result_line(j, r, verdict: str, why: str = "") -> Line:
    """The sweep's line for a job a runbook handled: its result's verdict (else `verdict`) and
    what it did (its summary after the verdict and job), after `why`."""
    action = r.summary.split("; ", 1)[1] if "; " in r.summary else r.summary
    return Line(
        j.job_id, j.user, j.state, r.verdict or verdict, why + action, r.incident, r.exit_code
    )


def _pressure(site, j, seen) -> str:
    """A running job's worst rank heading for an OOM (evidence.trend.watch), said with the
    micro-batch runbook would fit from that rank's own series (planning.fit.from_series), before
    it happens. Report only."""
    t = seen.trend
    f = None
    if fitting.fittable(t):  # the script (its micro-batch) is read only where it can serve
        try:
            script = slurm_client(site).batch_script(j.job_id) or ""
        except RunbookError:
            script = ""
        m, a = failing_batch(script, site.knobs)
        f = fitting.from_series(t, micro_batch=m, grad_accum=a, margin=site.ladder.fit_margin)
    rank = f"rank {seen.rank}: " if seen.rank is not None else ""
    return (
        f"report only: {rank}{seen.why}: likely to run out of GPU memory ({_would(f)}); "
        f"nothing changed, `runbook oom --job {j.job_id}` when it does"
    )


def _would(f) -> str:
    if f is None:
        return "no micro-batch fitted (the series names no card size, or the script no micro-batch)"
    peak = (
        f"at micro-batch {f.from_micro_batch} its step peaks at {f.needed_mib / 1024:.1f} of "
        f"{f.card_mib / 1024:.1f} GiB"
    )
    if f.needed_mib <= f.limit_mib:  # it fits: the cache is fragmented, not too small
        return f"{peak}, within the margin: fragmentation, the allocator setting's case"
    if f.micro_batch is not None:
        return f"{peak}; runbook would fit micro-batch {f.micro_batch}"
    return f"{peak}: {f.reasons[-1]}"


def _shrunk_jobs(site, client, known, handled, dry_run) -> list[Line]:
    """Jobs runbook shrank (signed shrink_world tags) that run while their partition has a
    node more than they use: grown back by `runbook grow` when [policy] unattended_grow allows
    it (it waits for a checkpoint and the lineage's full size itself), else named for a person.
    One sinfo per partition; a partition whose nodes never came back costs nothing more."""
    from runbook.evidence.collect import usable_nodes
    from runbook.planning.grow import SHRINK_RUNGS

    secret, me = lineage.site_secret(site), lineage.runbook_user(site)
    out: list[Line] = []
    usable: dict[str, set[str] | None] = {}
    for j in known:
        if j.state != "RUNNING" or j.job_id in handled or not j.num_nodes:
            continue
        claim = lineage.read(j.job_id, j.comment, j.user, secret=secret, runbook_user=me)
        if claim is None or not claim.trusted or claim.fields.get("rung") not in SHRINK_RUNGS:
            continue
        part = (j.partition or "").split(",")[0]
        if part not in usable:
            usable[part] = usable_nodes(client, j)
        nodes = usable[part]
        if nodes is None or len(nodes) <= j.num_nodes:
            continue
        if not site.policy.unattended_grow:
            out.append(
                Line(
                    j.job_id,
                    j.user,
                    j.state,
                    "shrunk",
                    f"nodes may be back: runbook grow --job {j.job_id}",
                )
            )
            continue
        from runbook.grow import handle_grow

        r = handle_grow(Trigger(j.job_id, "sweep", "runbook sweep"), site, Options(dry_run=dry_run))
        out.append(_result_line(j, r, "unknown"))
    return out


def _whole(site, j, logs, res=None):
    """A watched job's whole log, for a runbook that acts on it: its evidence and gates (the
    handlers' declarations, the command line) are not only this period's. What the watch held
    of every file from its start and this period's read, where it holds that (no read again);
    else one more read of the whole; the watched read where the whole cannot be read now."""
    if not logs.watched:
        return logs
    whole = logs.whole() if logs.whole is not None else None
    how = "whole_from_held" if whole is not None else "whole_reads"
    if whole is None:
        whole = _read_all(site, [j], {})[0].get(j.job_id)
    if res is not None:
        res.stats[how] = res.stats.get(how, 0) + 1
    return whole if whole is not None else logs


def stalled(site, conn, j, logs, now: float) -> str | None:
    """Why a RUNNING job counts as hung, or None ([hang] stall_minutes; 0: never). A watchdog
    timeout in its log while it runs; else no new training step for the stall time, across
    sweeps (the step pattern); else, when it prints no step, no write to its logs for as long."""
    minutes = site.hang.stall_minutes
    if j.state != "RUNNING" or minutes <= 0:
        return None
    watchdog = [ln for ln in logs.raw.splitlines() if WATCHDOG.search(ln)]
    if watchdog:
        return f"a collective timed out while the job runs: {watchdog[0].strip()[:160]}"
    limit = minutes * 60
    last = logs.failed_step - 1 if logs.failed_step else None
    if last is None and logs.watched:
        # A period that read only new lines without a step: the step last seen still stands.
        last = state.last_step(conn, j.job_id)
    if last is not None:
        held = state.step_unchanged_for(conn, j.job_id, last, now)
        if held >= limit:
            return f"no new training step for {held / 60:.1f} min (still step {last})"
        return None
    if logs.quiet_s is not None and logs.quiet_s >= limit:
        return f"no step printed and no log written for {logs.quiet_s / 60:.1f} min"
    return None


def _read_all(site, candidates, scripts, held=None) -> tuple[dict, dict, dict]:
    """Every candidate's log, one exec per host (its batch host: its first node); a job in
    `held` (the watch's running jobs) from where the last sweep stopped."""
    with SshHosts(SshSettings.from_site(site)) as hosts:
        logs, errors = collect.read_logs_many(
            site,
            [(j, scripts.get(j.job_id, "")) for j in candidates],
            hosts,
            step_pattern=site.logs.step_pattern,
            held=held,
        )
        execs = {h: t["execs"] for h, t in hosts.stats().items()}
    unreadable = {
        jid: f"logs not readable on {collect.log_host(j) or 'this host'}: "
        f"{str(errors[jid]).splitlines()[0]}"
        for j in candidates
        if (jid := j.job_id) in errors
    }
    return logs, execs, unreadable


def _verify_pending(site, conn) -> list[dict]:
    from runbook.verify import verify_incident

    out = []
    rows = conn.execute(
        "SELECT id FROM incidents WHERE new_job_id IS NOT NULL AND status = "
        "'complete' AND (data IS NULL OR data NOT LIKE 'verification passed%' "
        "AND data NOT LIKE 'verification failed%' AND data NOT LIKE 'verification refused%')"
    ).fetchall()
    for row in rows:
        try:
            v = verify_incident(site, conn, row["id"])
        except RunbookError as e:
            v = {"state": "error", "details": [str(e)]}
        out.append({"incident": row["id"], **v})
    return out


def write_metrics(path: str, result: SweepResult | None, seconds: float, error: str = "") -> None:
    """The sweep's figures for node_exporter's textfile collector, written atomically (a temp
    file renamed over the old one). On a failed sweep the last success time is carried over from
    the file, so an alert on its age fires however the sweeps fail."""
    from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

    reg = CollectorRegistry()
    now = time.time()
    last_ok = (
        now
        if result is not None
        else _previous(path, "runbook_sweep_last_success_timestamp_seconds")
    )

    def gauge(name, doc, value, labels=None):
        g = Gauge(name, doc, list(labels or {}), registry=reg)
        (g.labels(**labels) if labels else g).set(value)
        return g

    gauge("runbook_sweep_last_run_timestamp_seconds", "When the last sweep ended", now)
    gauge(
        "runbook_sweep_success", "1 when the last sweep ran to its end", float(result is not None)
    )
    gauge("runbook_sweep_duration_seconds", "How long the last sweep took", seconds)
    if last_ok is not None:
        gauge(
            "runbook_sweep_last_success_timestamp_seconds",
            "When a sweep last ran to its end",
            last_ok,
        )
    if result is not None:
        gauge("runbook_sweep_exit_code", "The last sweep's exit code", result.exit_code)
        by = Gauge(
            "runbook_sweep_jobs",
            "Jobs the last sweep triaged, by verdict and whether an incident was started",
            ["verdict", "incident"],
            registry=reg,
        )
        for ln in result.lines:
            by.labels(ln.verdict, "yes" if ln.incident else "no").inc()
        gauge("runbook_sweep_skipped", "Jobs skipped as already handled", len(result.skipped))
        ver = Gauge(
            "runbook_sweep_verifications",
            "Reruns verified by the last sweep, by state",
            ["state"],
            registry=reg,
        )
        for v in result.verifications:
            ver.labels(v.get("state", "?")).inc()
    try:
        write_to_textfile(path, reg)
    except OSError as e:
        raise RunbookError(
            f"cannot write the sweep's metrics to {path}: {e.strerror or e}",
            hint="check [sweep] metrics_file and its folder's permissions",
        ) from None


def _previous(path: str, name: str) -> float | None:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(name + " "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None
