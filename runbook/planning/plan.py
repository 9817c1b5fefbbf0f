"""The whole plan for one incident, from values: the diagnosis, the playbook, the site, the job,
its script, its lineage and its checkpoints (all gathered as evidence before). Returns a complete
Plan: the rung and its patched script, the checkpoint to resume from, the sbatch arguments and
the environment of the rerun. Reads nothing from the cluster, so it is tested as data in, data
out.
"""

from __future__ import annotations

import os
import re
import shlex

from runbook import rungs
from runbook.diagnosis import Diagnosis, human_mib
from runbook.errors import InputError
from runbook.evidence.collect import CheckpointEvidence, LineageEvidence
from runbook.instrument import estimate_fixed_mib
from runbook.planning import environment, ladder, resources
from runbook.planning import fit as fitting
from runbook.slurm.client import Submission
from runbook.slurm.hostlist import expand
from runbook.slurm.submit_line import script_arguments


def only_sharding(diagnosis: Diagnosis) -> str | None:
    """Why the activation rungs cannot help, when the fixed training cost alone fills the card
    (runbook.instrument's dump counts parameters); else None."""
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


def host_request_mib(diagnosis: Diagnosis) -> float | None:
    """The one host allocation the failing rank was refused, when that was the failure."""
    launch = diagnosis.evidence.launch
    ff = launch.first_failure if launch else None
    return ff.request_mib if ff is not None and diagnosis.verdict == "host_oom" else None


def failing_batch(script: str, knobs) -> tuple[int | None, int | None]:
    """(micro-batch, accumulation) the failing run used, as its script states them (a runbook
    template's variables, else the knobs); accumulation None where the framework derives it."""
    from runbook.jobfiles import bash
    from runbook.jobfiles.templates import read_header

    header = read_header(script)
    if header:
        v = header[1]
        m, a = v.get("micro_batch"), v.get("grad_accum")
        return (
            m if isinstance(m, int) else None,
            a if isinstance(a, int) and "global_batch" not in v else None,
        )
    b = bash.effective_batch(script, knobs)
    m, a = b.get("micro"), b.get("accum")
    return (m if isinstance(m, int) else None, a if isinstance(a, int) else None)


def _fixed_training(diagnosis: Diagnosis, oom) -> float | None:
    """Weights, gradients and optimizer state from the parameter count: the job's dump's, else
    the one runbook.instrument's start line printed."""
    dump_fixed = (diagnosis.evidence.dump or {}).get("fixed_training_mib")
    if dump_fixed:
        return dump_fixed
    launch = diagnosis.evidence.launch
    params = launch.params_of(oom.rank) if launch is not None else None
    return estimate_fixed_mib(params) if params else None


def fit_of(
    diagnosis: Diagnosis, script: str, knobs, margin: float, parent_need=None
) -> fitting.Fit | None:
    """The fitted micro-batch of a true OOM (planning.fit), from its message, the job's dump
    (the parameter count), its script (the micro-batch it ran with) and, for a rerun, what its
    parent needed at its own micro-batch (the lineage's signed tag: two attempts); None when
    the numbers are not there."""
    oom = diagnosis.oom
    if diagnosis.verdict != "true_oom" or oom is None:
        return None
    m, a = failing_batch(script, knobs)
    if m is None:
        return None
    f = fitting.of_diagnosis(
        diagnosis,
        micro_batch=m,
        fixed_training_mib=_fixed_training(diagnosis, oom),
        grad_accum=a,
        margin=margin,
    )
    if f is None or parent_need is None:
        return f
    return fitting.refit(f, parent_need, outside_mib=f.outside_mib, grad_accum=a, margin=margin)


def _standing_in(job, own: dict[str, str]) -> tuple[dict[str, str], bool]:
    """runbook's environment as the stand-in for the job's: for another account's job, with the
    owner's HOME, USER and LOGNAME (environment.for_owner)."""
    import pwd

    from runbook.identity import me

    user = getattr(job, "user", "")
    if not user or user == me().name:
        return own, False
    try:
        home: str | None = pwd.getpwnam(user).pw_dir
    except KeyError:
        home = None
    return environment.for_owner(own, user, home), True


def make_plan(
    diagnosis: Diagnosis,
    playbook,
    site,
    *,
    job,
    script: str,
    run: LineageEvidence,
    checkpoints: CheckpointEvidence,
    configs: list | None = None,
    node: str | None,
    failed_step: int | None,
    node_events: int = 0,
    capacity: ladder.Capacity = None,
    submission: Submission | None = None,
    own_env: dict[str, str] | None = None,
    program=None,
    ask=None,
    env_head: tuple[str, str] | None = None,
) -> ladder.Plan:
    """`node_events`: events in the failing node's history within the site's window (runbook
    nodes); at [nodes] drain_after_events or more, a rung that only excludes the node drains it.
    `capacity`: the partition's usable nodes without the failing one (collect.capacity_of).
    `env_head`: (the job's script as submitted, the assignments environment.with_env put in
    `script`): the job's environment's config paths read as the job reads them; the rerun's
    script has them taken back out but for one the rung pointed at a copy."""
    chosen = checkpoints.chosen
    resume = (site.checkpoints, chosen.path) if chosen else None
    p = ladder.plan(
        diagnosis.verdict,
        playbook.ladder,
        script=script,
        knobs=site.knobs,
        tried=run.tried,
        node=node,
        resume=resume,
        only_sharding=only_sharding(diagnosis),
        with_allocator=diagnosis.with_allocator,
        configs=configs,
        program=program,
        ask=ask,
        nodes=job.num_nodes,
        capacity=capacity,
        host_request_mib=host_request_mib(diagnosis),
        fit=fit_of(diagnosis, script, site.knobs, site.ladder.fit_margin, run.parent_need),
        cause=diagnosis.cause,
        causes=playbook.causes,
    )
    p.checkpoint, p.checkpoints_skipped, p.failed_step = chosen, checkpoints.skipped, failed_step
    p.suspicious = run.suspicious
    if env_head and env_head[1] and p.patch is not None:
        new = environment.without_env(p.patch.new, script, env_head[1])
        if new is None:
            p.patch = None
            return ladder.for_a_person(
                p, "the rung's change moved the job's environment's assignments: runbook cannot "
                "say what the rerun would read", "apply the rung by hand")  # fmt: skip
        p.patch.old, p.patch.new = env_head[0], new
        p.patch.changes.append(
            "read with the job's environment: "
            + ", ".join(ln.split("=", 1)[0] for ln in env_head[1].splitlines())
        )
    limit = site.nodes.drain_after_events
    if p.acts and node and p.exclude and not p.drain and limit and node_events >= limit:
        p.drain = node
        p.why += (
            f"; {node} has {node_events} events in its history within "
            f"{site.nodes.window_days:g} days ([nodes] drain_after_events = {limit}): drained, "
            "not only excluded"
        )
    p = resubmission(p, site, job, chosen, script, submission, own_env)
    if len(_components(job)) > 1:
        p.why += f"; a heterogeneous job: {failing_component(job, node)}" + (
            f", and each of its {len(_components(job))} components is resubmitted with its own "
            "resources"
            if p.acts
            else ""
        )
    return p


_SCRIPT_PINS = re.compile(r"(?m)^#SBATCH[ \t]+(?:--nodelist|-w)\b")


def pinned_nodes(p: ladder.Plan, job, script: str, exclude: list[str]) -> list[str] | None:
    """The node list the rerun is pinned to: the original's (as Slurm recorded it, from the
    script or the command line) less the nodes the rerun excludes, at most as many as it runs
    on. None: refused (the script itself pins only excluded nodes: a command line cannot lift
    an #SBATCH --nodelist), said in the plan."""
    want = (getattr(job, "resources", None) or {}).get("nodelist")
    if not want:
        return []
    try:
        pinned = expand(want)
    except InputError:  # a list runbook cannot expand is passed over, not guessed at
        return []
    left = [n for n in pinned if n not in exclude]
    if not left and _SCRIPT_PINS.search(script or ""):
        p.needs_human = True
        p.human_action = (
            f"the script pins its nodes (#SBATCH --nodelist={want}) and the rung excludes "
            f"{', '.join(n for n in pinned if n in exclude)}: resubmit with another node list"
        )
        return None
    count = p.world[1] if p.world else job.num_nodes
    return left[:count] if count else left


_HETJOB = re.compile(r"(?m)^#SBATCH[ \t]+(?:hetjob|packjob)\b")


def _components(job) -> list:
    """A heterogeneous job's components (slurm.client.JobInfo.components); [] for a plain one."""
    return getattr(job, "components", None) or []


def het_groups(p: ladder.Plan, job, script: str) -> list[list[str]] | None:
    """The sbatch options of a heterogeneous job's components after the first, each as Slurm
    recorded it (an option given once on sbatch's line would apply to every component). None:
    refused, said in the plan: a rung that changes resources (Slurm takes them per component),
    or components slurmctld no longer holds that the script does not state."""
    comps = _components(job)
    if len(comps) < 2:
        return []
    r = rungs.get(p.rung or "")
    if p.world or (r is not None and r.sbatch_options):
        changes = ", ".join(sorted(r.sbatch_options)) if r is not None and not p.world else "nodes"
        p.needs_human = True
        p.human_action = (
            f"job {job.job_id} is heterogeneous ({len(comps)} components) and {p.rung} changes "
            f"its {changes}, which Slurm takes per component: change the failing component's "
            "#SBATCH lines by hand and resubmit"
        )
        return None
    if not any(c.resources for c in comps):
        if _HETJOB.search(script or ""):
            return []  # the script's own `#SBATCH hetjob` sections state every component
        p.needs_human = True
        p.human_action = (
            f"job {job.job_id} is heterogeneous ({len(comps)} components), slurmctld no longer "
            "holds their resources and its script has no #SBATCH hetjob lines (they were "
            "given on sbatch's line): resubmit it by hand with each component's options"
        )
        return None
    # --exclude given on the first component carries to the others (sbatch propagates it).
    return [resources.options(c.resources, None) for c in comps[1:]]


def failing_component(job, node: str | None) -> str:
    """Which component of a heterogeneous job ran the failing rank: its offset and nodes."""
    comps = _components(job)
    hit = [c for c in comps if node and node in c.nodes]
    if not hit:
        return f"the failure's component is not known ({len(comps)} components)"
    c = hit[0]
    return f"the failure is in component {c.het_offset} ({c.node_expr or ', '.join(c.nodes)})"


def rung_patch(
    p: ladder.Plan, script: str, rung: str, site, checkpoint, by_hand: str, **ask
) -> bool:
    """`p` given `rung`'s patch of `script` (resuming from `checkpoint`), for a runbook that
    takes one rung on its own (grow, prevent): True; or, where the rung cannot apply, `p` says
    a person is needed (`by_hand`, with the reason) and False."""
    from runbook import rungs
    from runbook.errors import RungNotApplicable
    from runbook.planning.sbatch_patch import patch

    resume = (site.checkpoints, checkpoint.path) if checkpoint else None
    try:
        p.patch = patch(script, rung, site.knobs, resume=resume, **ask)
    except RungNotApplicable as e:
        p.passed_over = [(rung, e.message)]
        p.needs_human = True
        p.why = f"{rung} cannot apply: {e.message}"
        p.human_action = f"{by_hand} ({e.message})"
        return False
    p.rung, p.rung_what = rung, rungs.REGISTRY[rung].setting
    p.checkpoint = checkpoint
    return True


def resubmission(
    p: ladder.Plan,
    site,
    job,
    chosen,
    script: str = "",
    submission: Submission | None = None,
    own_env: dict[str, str] | None = None,
) -> ladder.Plan:
    """The rerun's sbatch arguments and environment, for a plan that acts: the original's
    folder and recorded resources (less what the rung changes), its node list less the nodes it
    excludes, its own environment (never runbook's), and the checkpoint to resume from."""
    if p.acts:
        # A heterogeneous job's ExcNodeList is Slurm's own (each component excludes the
        # others' nodes): only the rung's exclusions are given again.
        kept = set() if len(_components(job)) > 1 else set(job.excluded)
        exclude = sorted((kept | set(p.exclude)) - set(p.readmit))
        p.sbatch_args = [f"--chdir={job.work_dir}"] if job.work_dir else []
        if (task := getattr(job, "array_task", None)) is not None:
            # One task of an array: the rerun is that index of a new array (the script picks its
            # shard by SLURM_ARRAY_TASK_ID, and %a in its log names resolve as before).
            p.sbatch_args.append(f"--array={task}")
        # The same job: the resources Slurm recorded for it, given again (command-line options
        # of the original sbatch are in no script), less what the rung itself changes.
        p.sbatch_args += resources.options(job.resources, p.rung)
        if p.world:
            p.sbatch_args += resources.resized(job, *p.world)
        if exclude:
            p.sbatch_args.append(f"--exclude={','.join(exclude)}")
        pinned = pinned_nodes(p, job, script, exclude)
        if pinned is None:
            p.sbatch_args = []
            return p
        if pinned:
            p.sbatch_args.append(f"--nodelist={','.join(pinned)}")
        groups = het_groups(p, job, script)
        if groups is None:
            p.sbatch_args = []
            return p
        p.het_groups = groups
        if chosen and site.checkpoints.resume_env:
            p.env = {**p.env, site.checkpoints.resume_env: chosen.path}
        sub = submission or Submission(notes=["Slurm's record of the submission was not read"])
        own, replaced = _standing_in(job, dict(os.environ) if own_env is None else own_env)
        rerun = environment.rerun_environment(sub.line, sub.env, p.env, own)
        p.sbatch_args.append(f"--export={rerun.export}")
        p.env_file, p.sbatch_env = rerun.file_env, rerun.sbatch_env
        p.env_notes = [*sub.notes, *rerun.notes]
        if sub.env is None and replaced:
            p.env_notes.append(f"{job.user}'s HOME, USER and LOGNAME stand in for runbook's own")
        args = sub.args if sub.args is not None else script_arguments(sub.line)
        p.script_args = args or []
        if sub.args:
            p.env_notes.append(
                f"the job's arguments, as its batch script's process was started with them (read "
                f"on its node before the cancel): {' '.join(shlex.quote(a) for a in args or [])}"
            )
        elif args:
            # Slurm keeps the line space-joined (SubmitLine and Command= alike, Slurm 22.05).
            p.env_notes.append(
                f"the job's arguments, as Slurm recorded its sbatch line: {' '.join(args)} "
                "(Slurm keeps no quoting: an argument that held a space comes back as several)"
            )
        if args is None and sub.line:
            p.env_notes.append(
                f"the job's own arguments could not be read from its sbatch line "
                f"({sub.line[:200]!r}): the rerun is given none after its script"
            )
    return p


def make_hang_plan(
    diagnosis,
    playbook,
    site,
    *,
    job,
    script: str,
    run: LineageEvidence,
    checkpoints: CheckpointEvidence,
    capacity: ladder.Capacity = None,
    submission: Submission | None = None,
    own_env: dict[str, str] | None = None,
) -> ladder.Plan:
    """The hung-job runbook's plan (playbooks/hang.yaml): the first rung of the verdict's ladder
    not yet tried on the lineage (so a repeat escalates), the suspect node excluded when the
    suspects stand on one node, the playbook's debug settings on the rerun for a rung that asks
    for them."""
    nodes = diagnosis.suspect_nodes
    node = nodes[0] if len(nodes) == 1 else None
    chosen = checkpoints.chosen
    p = ladder.plan(
        diagnosis.verdict,
        playbook.ladder,
        script=script,
        knobs=site.knobs,
        tried=run.tried,
        node=node,
        resume=(site.checkpoints, chosen.path) if chosen else None,
        nodes=job.num_nodes,
        capacity=capacity,
        causes=playbook.causes,
    )
    if len(nodes) > 1:
        p.passed_over = [
            (rung, f"{why}: the suspects stand on {len(nodes)} nodes ({', '.join(nodes)})")
            if why == "the failing node is not known"
            else (rung, why)
            for rung, why in p.passed_over
        ]
    p.checkpoint, p.checkpoints_skipped = chosen, checkpoints.skipped
    p.suspicious = run.suspicious
    r = rungs.get(p.rung or "")
    if p.acts and r is not None and r.debug_env:
        p.env.update(playbook.debug_env)
    resubmission(p, site, job, chosen, script, submission, own_env)
    return p
