"""handle_incident: the one function that runs the runbook for one job.

trigger -> job (Slurm) -> logs (filtered on the node) -> scancel (when the job is wedged on an
OOM) -> node health -> diagnosis -> plan (the ladder, the lineage, the checkpoint) -> actions
(through the executor) -> report. The incident folder is written after every stage, so a stage
that fails still leaves everything gathered before it, and the report says where it stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runbook import checkpoints, lineage, state
from runbook.actions import steps
from runbook.actions.executor import Action, Executor
from runbook.diagnosis import Diagnosis, Evidence, classify, human_mib
from runbook.errors import ExitCode, RunbookError
from runbook.evidence import xid
from runbook.evidence.gpu_health import NodeHealth, probe_nodes
from runbook.evidence.launcher_log import LaunchReport, scan_parts
from runbook.evidence.log_filter import parse_grep_output, remote_grep_argv
from runbook.planning import ladder, resources
from runbook.playbook import load as load_playbook
from runbook.report.files import write_atomic, write_reports
from runbook.report.model import Incident, Step, plain
from runbook.site import SiteConfig
from runbook.slurm.factory import slurm_client
from runbook.slurm.paths import locate, srun_log_patterns, task_of
from runbook.slurm.text import SlurmJobText
from runbook.transport.local import LocalTransport
from runbook.transport.ssh import SshHosts, SshSettings
from runbook.verify import training_steps

ACTIVE = {"RUNNING", "PENDING", "SUSPENDED", "CONFIGURING", "REQUEUED", "RESIZING", "STOPPED"}
OOM_KINDS = {"oom", "host_oom"}


@dataclass
class Trigger:
    job_id: str
    source: str = "cli"  # cli | hook | sweep
    actor: str = "runbook oom"
    incident_id: str | None = None  # chosen by the caller (the hook answers with it at once)


def new_incident_id(job_id: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{job_id}"


@dataclass
class Options:
    dry_run: bool = False
    assume_yes: bool = False
    confirm: Callable[[Action], bool] | None = None  # a person at a terminal, asked per step
    progress: Callable[[str], None] = lambda message: None
    force: bool = False  # handle a job that already has a finished incident
    # How this run chose its settings (["--site", "prod"]), so that next-step commands in the
    # output and the report can be copied as they stand.
    site_flags: list[str] = field(default_factory=list)


@dataclass
class Result:
    incident: str | None
    folder: str | None
    verdict: str | None
    exit_code: int
    summary: str
    new_job_id: str | None = None
    actions: list = field(default_factory=list)


class _Stop(Exception):
    """A stage failed: the report says where, the exit code says 1."""


class Recorder:
    """The incident folder, written as the run goes: raw outputs, each stage's JSON, the report."""

    def __init__(self, folder: Path, incident: Incident):
        self.folder = folder
        self.incident = incident
        folder.mkdir(parents=True, exist_ok=True)

    def raw(self, name: str, text: str) -> None:
        write_atomic(self.folder / "raw" / name, text)

    def stage(self, name: str, data) -> None:
        write_atomic(self.folder / f"{name}.json", json.dumps(plain(data), indent=2,
                                                               default=str) + "\n")  # fmt: skip

    def save(self) -> None:
        data = self.incident.to_json()
        write_reports(self.folder, data)
        write_atomic(
            self.folder / "ledger.jsonl",
            "".join(json.dumps(a, default=str) + "\n" for a in data["actions"]),
        )

    @contextlib.contextmanager
    def step(self, name: str, progress: Callable[[str], None]):
        s = Step(name=name, started=time.time())
        self.incident.timeline.append(s)
        progress(f"{name} ...")
        try:
            yield s
        except RunbookError as e:
            s.status, s.finished, s.detail = "failed", time.time(), str(e).splitlines()[0]
            self.incident.errors.append(f"{name}: {e}")
            self.incident.status, self.incident.stopped_at = "stopped", name
            progress(f"{name}: FAILED: {e}")
            self.save()
            raise _Stop(name) from e
        else:
            s.finished = time.time()
            if s.status == "running":
                s.status = "ok"
            progress(f"{name}: {s.status}{': ' + s.detail if s.detail else ''}")
            self.save()


def _confirm_policy(site, verdict: str | None, trigger: Trigger, opts: Options):
    """Who says yes to a mutating step: --yes; a person at the terminal; or the site policy, which
    names the verdicts that may act unattended. Otherwise the step is declined and a person is
    needed (exit 4), with the exact commands in the report."""
    if opts.assume_yes or site.policy.assume_yes:
        return None
    if opts.confirm is not None:
        return opts.confirm
    if verdict in site.policy.unattended_verdicts:
        return None
    return lambda action: False


def _log_patterns(job, script: str) -> list[str]:
    """StdOut/StdErr as slurmctld resolved them, else the script's #SBATCH lines, else Slurm's
    default (slurm-%j.out, in the working directory)."""
    found = [p for p in (job.stdout, job.stderr) if p and p != "/dev/null"]
    srun = srun_log_patterns(script)
    if not found:
        for m in re.finditer(r"(?m)^#SBATCH[ \t]+(?:--output|--error|-o|-e)(?:=|[ \t]+)(.+)$",
                             script or ""):  # fmt: skip
            try:  # sbatch reads quotes in directives, mid-word too
                words = shlex.split(m.group(1), comments=True)
            except ValueError:  # unbalanced quotes: take the first word as written
                words = m.group(1).split()[:1]
            if words:
                found.append(words[0])
    # Per-task files of `srun --output=...` in the script hold the ranks' own tracebacks; the
    # batch log may hold only srun's notices.
    return list(dict.fromkeys([*found, *srun])) or [""]


def handle_incident(trigger: Trigger, site, opts: Options | None = None) -> Result:
    """Run the runbook for one job. Never raises for what happens on the cluster: the outcome,
    the exit code and the report say it."""
    opts = opts or Options()
    dry = opts.dry_run or site.policy.dry_run
    client = slurm_client(site)
    job_id = trigger.job_id
    playbook = load_playbook(site.playbooks.dir)  # once per incident, passed down
    conn = state.site_db(site, dry_run=dry)
    if not dry:
        try:
            state.check_free_space(site.path(site.state.dir), site.state.min_free_mib)
        except state.StateUnavailable as e:
            return Result(None, None, None, int(ExitCode.STEP_FAILED), e.message)
    # An incident of this job that stopped or whose process died is resumed, not started anew:
    # the ledger skips what it already did.
    resumed = None if dry or trigger.incident_id else state.resumable_incident(conn, job_id)
    incident_id = trigger.incident_id or resumed or new_incident_id(job_id)
    holder = f"{trigger.source}:{os.getpid()}:{incident_id}"
    try:
        lock = contextlib.nullcontext(None) if dry else state.job_lock(conn, job_id, holder)
        with lock as lock_name:
            if not opts.force:
                done = conn.execute(
                    "SELECT id, new_job_id, verdict FROM incidents WHERE job_id = ? AND status "
                    "IN ('complete', 'needs_human') ORDER BY created DESC LIMIT 1",
                    (job_id,),
                ).fetchone()
                if done is not None:
                    msg = (
                        f"job {job_id} was already handled by incident {done['id']} "
                        f"({done['verdict']}, new job {done['new_job_id'] or 'none'})"
                    )
                    return Result(done["id"], None, done["verdict"], int(ExitCode.OK), msg,
                                  done["new_job_id"])  # fmt: skip
            base = (
                Path(tempfile.mkdtemp(prefix="runbook-dry-run-"))
                if dry
                else site.path(site.state.dir) / "incidents"
            )
            folder = base / incident_id
            inc = Incident(id=incident_id, job_id=job_id, source=trigger.source,
                           actor=trigger.actor, site=site.site.name, dry_run=dry)  # fmt: skip
            rec = Recorder(folder, inc)
            if not dry:
                # The same incident id again (the hook's queue after a crash mid-incident, whose
                # lock the dead holder lost above) resumes that incident: the ledger skips the
                # steps it already applied.
                conn.execute(
                    "INSERT INTO incidents(id, job_id, source, created, status, folder) "
                    "VALUES (?, ?, ?, ?, 'running', ?) ON CONFLICT(id) DO UPDATE SET "
                    "status = 'running'",
                    (incident_id, job_id, trigger.source, time.time(), str(folder)),
                )
            return _run(trigger, site, playbook, opts, client, conn, rec, lock_name, holder, dry)
    except state.LockBusy as e:
        return Result(None, None, None, int(ExitCode.OK), e.message)


def _run(trigger, site, playbook, opts, client, conn, rec: Recorder, lock_name, holder,
         dry) -> Result:  # fmt: skip
    inc = rec.incident
    ex = Executor(conn, incident=inc.id, actor=f"{trigger.source}:{trigger.actor}", dry_run=dry,
                  lock=lock_name, lock_holder=holder)  # fmt: skip
    hosts = SshHosts(SshSettings.from_site(site))
    diagnosis: Diagnosis | None = None
    plan: ladder.Plan | None = None
    job = None
    try:
        with rec.step("job", opts.progress) as s:
            job = client.job(inc.job_id)
            inc.job = plain(job)
            script = client.batch_script(inc.job_id)
            rec.raw("batch_script.sh", script)
            rec.stage("job", job)
            s.detail = f"{job.state} on {job.node_expr or '?'} ({job.source})"

        with rec.step("logs", opts.progress) as s:
            launch, failed_step, notes = _read_logs(site, job, script, hosts, rec)
            inc.evidence.update(
                first_failure=launch.first_failure.contract() if launch.first_failure else None,
                timed_out_ranks=launch.timed_out_ranks, failing_ranks=launch.failing_ranks,
                failed_step=failed_step, notes=notes,
            )  # fmt: skip
            ff = launch.first_failure
            dump = _fetch_dump(site, job, launch, hosts, rec)
            if dump:
                inc.evidence["dump"] = {k: v for k, v in dump.items() if k != "snapshot"}
            s.detail = (f"first failure {ff.kind} rank {ff.ranks} on {ff.node or '?'}" if ff
                        else "no failure found in the logs")  # fmt: skip

        wedged = job.state in ACTIVE and ff is not None and ff.kind in OOM_KINDS
        preliminary = Evidence(launch=launch, slurm=_slurm_text(job), job_id=job.job_id)
        prelim_verdict = classify(preliminary, playbook.thresholds).verdict
        ex.confirm = _confirm_policy(site, prelim_verdict, trigger, opts)
        with rec.step("cancel", opts.progress) as s:
            if wedged:
                r = ex.run(steps.cancel(client, job.job_id))
                s.status = "ok" if r.ok else ("skipped" if r.status == "declined" else "failed")
                s.detail = f"{r.status}: {r.message}"
                if r.status == "failed":
                    raise RunbookError(
                        f"scancel {job.job_id} failed: {r.message}",
                        hint=f"cancel it by hand (scancel {job.job_id}) so its ranks "
                        "free the GPUs, then run `runbook oom` again",
                    )
            else:
                s.status = "skipped"
                s.detail = (f"job is {job.state}" if job.state not in ACTIVE else
                            "no OOM in the logs: not runbook's to stop")  # fmt: skip

        with rec.step("node health", opts.progress) as s:
            node = ff.node if ff and ff.node else None
            targets = [node] if node else job.nodes[: site.ssh.max_parallel]
            health = probe_nodes(hosts, targets, job.job_id, site.probes, since=job.start,
                                 max_parallel=site.ssh.max_parallel) if targets else {}  # fmt: skip
            for n, h in health.items():
                for name, text in h.raw.items():
                    rec.raw(f"{n}.{name}.txt", text)
            inc.evidence["node_health"] = {
                n: _health_view(h, job.job_id) for n, h in health.items()
            }
            oom_health = (
                health.get(node)
                if node
                else next((h for h in health.values() if h.gpu_fault_reasons()), None)
            )
            unknown = {n: h.unknowns() for n, h in health.items() if h.unknowns()}
            s.detail = f"{len(health)} node(s) probed"
            if unknown:  # a probe that failed is not a healthy node
                s.status = "unknown"
                s.detail += "; health unknown on " + "; ".join(
                    f"{n} ({', '.join(u)})" for n, u in unknown.items())

        with rec.step("diagnosis", opts.progress) as s:
            evidence = Evidence(launch=launch, slurm=_slurm_text(job), node_health=oom_health,
                                job_id=job.job_id, dump=dump)  # fmt: skip
            diagnosis = classify(evidence, playbook.thresholds)
            inc.diagnosis = diagnosis.contract()
            rec.stage("diagnosis", inc.diagnosis)
            s.detail = diagnosis.verdict

        with rec.step("plan", opts.progress) as s:
            plan = _plan(site, playbook, client, job, script, diagnosis, node, failed_step)
            inc.plan = _plan_view(plan)
            for note in plan.suspicious:  # said where a reader looks first
                inc.evidence.setdefault("notes", []).append(f"SUSPICIOUS: {note}")
            rec.stage("plan", inc.plan)
            s.detail = (
                f"rung {plan.rung}"
                if plan.acts
                else ("needs a person: " + plan.why if plan.needs_human else plan.why)
            )

        ex.confirm = _confirm_policy(site, diagnosis.verdict, trigger, opts)
        with rec.step("actions", opts.progress) as s:
            if plan.acts:
                _act(ex, client, site, job, plan, rec, diagnosis)
                inc.plan = _plan_view(plan)  # with the read-back of the new job
                sub = next((r for r in ex.results if r.kind == "submit"), None)
                inc.new_job_id = sub.value if sub and sub.status in ("applied", "skipped") else None
                if plan.readback and plan.readback["mismatches"]:
                    inc.new_job_id = None  # submitted, found not the same job, cancelled
                failed = [r for r in ex.results if r.status == "failed"]
                if failed:
                    s.status, s.detail = "failed", failed[0].message
                elif sub and sub.status == "dry_run":
                    s.detail = f"would run: {' '.join(sub.argv)}"
                else:
                    s.detail = (
                        f"new job {inc.new_job_id}" if inc.new_job_id else "nothing submitted"
                    )
            else:
                s.status, s.detail = "skipped", "nothing to change"
    except _Stop:
        pass
    finally:
        inc.evidence["ssh"] = hosts.stats()
        hosts.close()
        inc.actions = [plain(r) for r in ex.results]
        _conclude(inc, job, diagnosis, plan, ex, dry, opts, site)
        inc.finished = time.time()
        rec.save()
        if not dry:
            # complete: handled; needs_human: a person decides; failed/stopped: worth another run
            status = {0: "complete", 4: "needs_human"}.get(inc.exit_code, "failed")
            conn.execute(
                "UPDATE incidents SET status = ?, verdict = ?, new_job_id = ?, data = ? "
                "WHERE id = ?",
                (status, inc.diagnosis.get("verdict"), inc.new_job_id, inc.summary, inc.id),
            )
            from runbook import notify

            notify.queue(conn, site, inc.id, inc.summary, str(rec.folder))
            notify.flush(conn, site)
    return Result(inc.id, str(rec.folder), inc.diagnosis.get("verdict"), inc.exit_code,
                  inc.summary, inc.new_job_id, inc.actions)  # fmt: skip


def _slurm_text(job) -> SlurmJobText:
    return SlurmJobText(format=job.source, job_id=job.job_id, state=job.state,
                        exit_code=job.exit_code, nodes=job.nodes or None)  # fmt: skip


def _read_logs(site, job, script, hosts, rec) -> tuple[LaunchReport, int | None, list[str]]:
    """The job's logs filtered where they are: matching lines, context and tails only."""
    notes: list[str] = []
    host = job.batch_host or (job.nodes[0] if job.nodes else "")
    transport = LocalTransport() if site.logs.read_on == "local" or not host else hosts[host]
    parts: list[tuple[str, int | None]] = []
    tails: list[str] = []
    for n, pattern in enumerate(_log_patterns(job, script)):
        where = locate(pattern, job_id=job.job_id, work_dir=job.work_dir or ".",
                       job_name=job.name, user=job.user, array_job_id=job.array_job_id,
                       array_task_id=job.array_task_id)  # fmt: skip
        r = transport.run(remote_grep_argv(where.directory, where.name_glob,
                                           tail=site.logs.tail_lines))  # fmt: skip
        rec.raw(f"log-excerpt-{n}.txt", r.stdout)
        excerpts = parse_grep_output(r.stdout)
        if not excerpts:
            notes.append(f"no log file matched {where.pattern} on {transport.host}")
        for path, e in sorted(excerpts.items()):
            parts.append((e.text(), task_of(where, path)))
            tails.extend(e.tail)
            if e.truncated:
                notes.append(f"{path}: excerpt cut at the 1 MiB cap; the earliest lines were kept")
    launch = scan_parts(parts, nodes=job.nodes, tasks_per_node=job.tasks_per_node,
                        world_size=job.num_tasks)  # fmt: skip
    launch.tails = tails
    if not parts:
        launch.incomplete.append(
            f"no log of the job was found ({'; '.join(notes)}; the job's paths came from "
            f"{job.source})")
    launch.incomplete.extend(n for n in notes if "cut at" in n)
    last = training_steps(tails, site.logs.step_pattern)
    return launch, (last + 1 if last is not None else None), notes


def _fetch_dump(site, job, launch: LaunchReport, hosts, rec) -> dict | None:
    """runbook.instrument's dump for the failing rank, when the job wrote one (one more read)."""
    ff = launch.first_failure
    marks = [i for i in launch.instrument if i.kind == "oom-dump" and i.fields.get("path")]
    mine = [i for i in marks if ff and i.rank in ff.ranks] or marks
    if not mine:
        return None
    host = job.batch_host or (job.nodes[0] if job.nodes else "")
    transport = LocalTransport() if site.logs.read_on == "local" or not host else hosts[host]
    r = transport.run(["head", "-c", str(8 << 20), "--", mine[0].fields["path"]])
    if not r.ok:
        return None
    rec.raw("oom-dump.json", r.stdout)
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return None


def _health_view(h: NodeHealth, job_id: str) -> dict:
    view = h.contract()
    for x in view["xids"]:
        entry = xid.lookup(x["xid"])
        x["meaning"] = entry.meaning if entry else "not in runbook's catalog"
    apps = None
    if h.apps is not None:
        foreign = {a.pid for a in h.foreign_apps(job_id)}
        apps = [{"pid": a.pid, "gpu": a.gpu, "used_mib": a.used_mib, "type": a.type,
                 "owner": h.owners[a.pid].user if a.pid in h.owners else None,
                 "job": a.pid not in foreign} for a in h.apps]  # fmt: skip
    return {**view, "error": h.error, "apps": apps, "unavailable": h.unavailable,
            "unknown": h.unknowns(),
            "stale_dropped": h.kernel.stale_dropped if h.kernel else 0,
            "fault_reasons": h.gpu_fault_reasons()}  # fmt: skip


def _only_sharding(diagnosis: Diagnosis) -> str | None:
    dump, oom = diagnosis.evidence.dump or {}, diagnosis.oom
    fixed = dump.get("fixed_training_mib")
    total = oom.total_mib if oom else None
    if fixed and total and fixed >= 0.9 * total:
        return (
            f"weights, gradients and Adam state alone take {human_mib(fixed)} "
            f"({dump.get('params')} parameters x 18 bytes) of the {human_mib(total)} card: "
            "only sharding can help"
        )
    return None


def _lineage_start(site, client, job, tried: list[tuple[str, str]]) -> float | None:
    """When this training run's first job started: the parent of the oldest signed rerun in the
    lineage, else the job itself."""
    root = job
    if tried:
        try:
            last = client.job(tried[-1][0])
            claim = lineage.read(last.job_id, last.comment, last.user,
                                 secret=lineage.site_secret(site),
                                 runbook_user=lineage.runbook_user(site))  # fmt: skip
            root = client.job(claim.fields["parent"]) if claim and claim.trusted else last
        except (RunbookError, KeyError):
            return None
    t = root.start or root.submit
    return t.timestamp() if t else None


def _plan(site, playbook, client, job, script, diagnosis, node, failed_step) -> ladder.Plan:
    found = checkpoints.find(site.checkpoints.pattern, workdir=job.work_dir or ".",
                             marker=site.checkpoints.marker,
                             load_max_mib=site.checkpoints.load_check_max_mib)  # fmt: skip
    tried, suspicious = ladder.lineage(client, job, secret=lineage.site_secret(site),
                                       runbook_user=lineage.runbook_user(site))  # fmt: skip
    found = checkpoints.of_lineage(found, since=_lineage_start(site, client, job, tried),
                                   until=job.end.timestamp() if job.end else None)  # fmt: skip
    chosen, skipped = checkpoints.newest_valid(found)
    resume = (site.checkpoints, chosen.path) if chosen else None
    p = ladder.plan(diagnosis.verdict, playbook.ladder, script=script, knobs=site.knobs,
                    tried=tried, node=node, resume=resume,
                    only_sharding=_only_sharding(diagnosis),
                    with_allocator=diagnosis.with_allocator)  # fmt: skip
    p.checkpoint, p.checkpoints_skipped, p.failed_step = chosen, skipped, failed_step
    p.suspicious = suspicious
    if p.acts:
        exclude = sorted(set(job.excluded) | set(p.exclude))
        p.sbatch_args = [f"--chdir={job.work_dir}"] if job.work_dir else []
        # The same job: the resources Slurm recorded for it, given again (command-line options
        # of the original sbatch are in no script), less what the rung itself changes.
        p.sbatch_args += resources.options(job.resources, p.rung)
        if exclude:
            p.sbatch_args.append(f"--exclude={','.join(exclude)}")
        if chosen and site.checkpoints.resume_env:
            p.env = {site.checkpoints.resume_env: chosen.path}
    return p


def _plan_view(p: ladder.Plan) -> dict:
    return {
        "verdict": p.verdict, "rung": p.rung, "rung_what": p.rung_what, "why": p.why,
        "tried": p.tried, "passed_over": p.passed_over, "needs_human": p.needs_human,
        "human_action": p.human_action, "drain": p.drain, "exclude": p.exclude,
        "sbatch_args": p.sbatch_args, "env": p.env, "failed_step": p.failed_step,
        "suspicious": p.suspicious, "readback": p.readback, "allocator": p.allocator,
        "checkpoint": plain(p.checkpoint), "checkpoints_skipped": plain(p.checkpoints_skipped),
        "changes": p.patch.changes if p.patch else [], "checks": p.patch.checks if p.patch else [],
        "diff": p.patch.diff("job.sbatch") if p.patch else "",
        "template": p.patch.template if p.patch else None,
        "variables": p.patch.variables if p.patch else None,
    }  # fmt: skip


def _act(ex: Executor, client, site, job, plan: ladder.Plan, rec: Recorder, d: Diagnosis) -> None:
    if plan.drain:
        reasons = (d.reasons[0] if d.reasons else d.verdict)[:200]
        r = ex.run(steps.drain(client, plan.drain, f"runbook {ex.incident}: {d.verdict}: "
                               f"{reasons}", ex.incident))  # fmt: skip
        if not r.ok:
            return
    script = str(rec.folder / f"job.{plan.rung}.sbatch")
    w = ex.run(steps.write_file(script, plan.patch.new))
    if not w.ok:
        return
    sub = ex.run(steps.submit(client, script, plan.sbatch_args, plan.env, incident=ex.incident,
                              parent=job.job_id, rung=plan.rung,
                              secret=lineage.site_secret(site),
                              runbook_user=lineage.runbook_user(site)))  # fmt: skip
    if sub.status != "applied" or not sub.value:
        return
    # Read the new job back: the same world size and GPUs, or it is not the same job.
    try:
        new = client.job(sub.value)
    except RunbookError as e:
        plan.needs_human = True
        plan.human_action = f"check new job {sub.value} by hand: it could not be read back ({e})"
        return
    wrong = resources.mismatches(job, new, plan.rung)
    plan.readback = {"original": resources.world(job), "new": resources.world(new),
                     "mismatches": wrong}  # fmt: skip
    if wrong:
        ex.run(steps.cancel(client, sub.value))
        plan.needs_human = True
        plan.human_action = (f"new job {sub.value} did not get the original's resources "
                             f"({'; '.join(wrong)}): it was cancelled; resubmit by hand")  # fmt: skip


def _cmd(opts: Options, site, *words: str) -> str:
    """A runbook command line for the next steps, with this run's --site/--config (the hook
    and the sweep name the file their settings came from)."""
    flags = opts.site_flags
    if not flags and site.source != SiteConfig().source:
        flags = ["--config", shlex.quote(site.source)]
    return " ".join(["runbook", *flags, *(shlex.quote(w) for w in words)])


def _conclude(inc: Incident, job, d: Diagnosis | None, plan: ladder.Plan | None, ex, dry,
              opts: Options, site) -> None:  # fmt: skip
    """The summary line, what a person should do next, and the exit code (DESIGN §4.3)."""
    results = ex.results
    failed = [r for r in results if r.status == "failed"]
    declined = [r for r in results if r.status == "declined"]
    if inc.status == "running" and d is not None and d.evidence_incomplete:
        # Not handled: the next `runbook oom`, hook delivery or sweep tries again.
        inc.status, inc.stopped_at = "stopped", "logs"
        inc.errors.append("logs: evidence incomplete: " + "; ".join(d.evidence.launch.incomplete))
    if inc.status == "running":
        inc.status = "complete"
    verdict = d.verdict if d else "not reached"
    ff = d.evidence.launch.first_failure if d and d.evidence.launch else None
    where = ""
    if ff and ff.ranks:
        where = f"rank {', '.join(map(str, ff.ranks))}" + (f" on {ff.node}" if ff.node else "")
    did = []
    for r in results:
        if r.status in ("applied", "dry_run") and r.kind == "cancel":
            did.append(("would cancel" if dry else "cancelled") + f" {r.target}")
        elif r.status in ("applied", "dry_run") and r.kind == "drain":
            did.append(("would drain" if dry else "drained") + f" {r.target}")
        elif r.status in ("applied", "dry_run", "skipped") and r.kind == "submit":
            new = r.value or "(dry run)"
            did.append(f"{'would resubmit' if dry else 'resubmitted as'} {new} with rung "
                       f"{plan.rung}" + (f" from {Path(plan.checkpoint.path).name}"
                                         if plan and plan.checkpoint else ""))  # fmt: skip
    numbers = ""
    if d and d.oom and d.oom.tried_mib is not None:
        numbers = f" (asked {human_mib(d.oom.tried_mib)}, {human_mib(d.oom.free_mib)} free)"
    inc.summary = (
        f"{verdict}: job {inc.job_id}"
        + (f", {where}" if where else "")
        + numbers
        + ("; " + "; ".join(did) if did else "; nothing changed")
    )
    if inc.status == "stopped":
        inc.summary += f"; STOPPED at {inc.stopped_at}"
    nxt = inc.next_steps
    if inc.status == "stopped":
        nxt.append(
            f"Fix what stopped the runbook at `{inc.stopped_at}` (see Errors), then run "
            f"`{_cmd(opts, site, 'oom', inc.job_id)}` again: steps already done are skipped."
        )
    if plan and plan.needs_human:
        nxt.append(f"A person decides: {plan.human_action or plan.why}")
    for r in declined:
        nxt.append(
            f"Not done (needs confirmation): `{' '.join(r.argv)}`. Run it by hand, or "
            f"rerun with --yes, or allow verdict {verdict} in [policy] unattended_verdicts."
        )
    for r in failed:
        nxt.append(f"Failed: `{' '.join(r.argv)}`: {r.message}")
    if inc.new_job_id and not dry:
        nxt.append(f"Check the rerun later: `{_cmd(opts, site, 'verify', '--incident', inc.id)}`.")
    if verdict in ("not_oom", "unknown") and job is not None:
        nxt.append("Not an OOM runbook can act on: read the report's evidence and the job log.")
    if dry:
        nxt.append("This was a dry run: nothing was changed. Run without --dry-run to act.")
    if inc.status == "stopped" or failed:
        inc.exit_code = int(ExitCode.STEP_FAILED)
    elif (plan and plan.needs_human) or declined:
        inc.exit_code = int(ExitCode.NEEDS_HUMAN)
    else:
        inc.exit_code = int(ExitCode.OK)
