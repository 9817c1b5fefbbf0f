"""Which rung of the remediation ladder (playbooks/oom.yaml) this incident takes.

The lineage is in Slurm itself: a job resubmitted by runbook carries
`--comment=runbook:incident=<id>,parent=<job>,rung=<rung>`, so walking the parents names every
rung already tried on this training run. A rung already tried is never applied again (never
resume into the same OOM); a rung that cannot apply to this job is passed over with the reason;
a rung that changes the science, or an exhausted ladder, stops for a person.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from runbook import rungs, words
from runbook.asking import fix
from runbook.checkpoints import Checkpoint
from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.jobfiles.templates import render
from runbook.planning import ask as ask_program
from runbook.planning import walk
from runbook.planning.sbatch_patch import Patch, patch
from runbook.record import record
from runbook.rungs._allocator import set_allocator
from runbook.rungs.unchanged import RUNG as AS_IT_IS

# How many of the partition's nodes could run the job without the failing one: a number, None
# (unknown), or a call that asks Slurm (only a rung that places the job makes it).
Capacity = int | Callable[[], int | None] | None

ACTING_VERDICTS = ("true_oom", "fragmentation", "co_tenant", "gpu_fault", "host_oom")


@record
class Plan:
    verdict: str
    rung: str | None = None
    rung_what: str = ""
    why: str = ""
    tried: list[tuple[str, str]] = field(default_factory=list)  # (job id, rung) up the lineage
    passed_over: list[tuple[str, str]] = field(default_factory=list)  # (rung, why not)
    needs_human: bool = False
    human_action: str = ""
    patch: Patch | None = None
    drain: str | None = None
    exclude: list[str] = field(default_factory=list)
    checkpoint: Checkpoint | None = None
    checkpoints_skipped: list[Checkpoint] = field(default_factory=list)
    sbatch_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    # The rerun's environment (planning.environment): the job's own, never runbook's. env_file
    # goes to --export-file (None: none); sbatch_env is set in sbatch's own environment.
    env_file: dict[str, str] | None = None
    sbatch_env: dict[str, str] = field(default_factory=dict)
    env_notes: list[str] = field(default_factory=list)
    failed_step: int | None = None
    # The prevention runbook's: failed_step is the step the job stopped at when asked to
    # checkpoint (no failure), which its rerun must run past all the same.
    stopped_when_asked: bool = False
    # Job comments that claimed a runbook lineage and were not believed (unsigned, other user).
    suspicious: list[str] = field(default_factory=list)
    # After sbatch: the original's and the new job's world size and GPUs, as Slurm records them.
    readback: dict | None = None
    # The allocator setting the rerun runs with: an allocator rung's, or the one a thin pool adds
    # to the first true-OOM rung (docs/design.md §3); verify checks it was in force.
    allocator: str | None = None
    # shrink_world: the job's nodes before and after (the sbatch arguments and the read-back
    # follow it).
    world: tuple[int, int] | None = None
    # The micro-batch solved from the failure's numbers (planning.fit.Fit), when they allow it.
    fit: Any = None
    # Nodes the job excluded that may run it again (grow_world: drained, then returned to
    # service): the rerun no longer excludes them.
    readmit: list[str] = field(default_factory=list)
    # A heterogeneous job's components after the first: each one's own sbatch options, given
    # after a `:` on the rerun's line (sbatch_args are the first component's and the job's).
    het_groups: list[list[str]] = field(default_factory=list)
    # The job's own arguments (what followed the script on its sbatch line: $1..$N), given
    # again after the rerun's script.
    script_args: list[str] = field(default_factory=list)

    @property
    def acts(self) -> bool:
        return self.rung is not None and not self.needs_human


def plan(
    verdict: str,
    ladder: dict,
    *,
    causes: dict,
    script: str,
    knobs,
    tried: list[tuple[str, str]],
    node: str | None,
    resume=None,
    only_sharding: str | None = None,
    with_allocator: bool = False,
    configs: list | None = None,
    nodes: int | None = None,
    capacity: Capacity = None,
    host_request_mib: float | None = None,
    fit=None,
    cause=None,
    program=None,
    ask=None,
) -> Plan:
    """Choose the rung and build the patched script; raise nothing for a rung that does not
    apply, say why instead. `only_sharding` (a reason) passes over the activation rungs;
    `with_allocator` (a thin unallocated pool) adds expandable_segments to a script rung.
    `nodes` is the job's node count and `capacity` how many of its partition's nodes could run
    it without the failing one (None: unknown): a rung that keeps the job's size is passed over
    when the partition cannot hold it any more, and shrink_world is taken only then.
    `host_request_mib`: one host allocation the job was refused (c10's CPU allocator); doubling
    --mem is passed over when even the doubled memory could not hold that one request.
    `fit` (planning.fit.Fit): with the fixed cost known, halve_micro_batch sets the fitted
    micro-batch, and is passed over when none is predicted to fit. `cause` (runbook.cause.Cause,
    docs/design.md §3.1): a cause no batch rung can help stops for a person; an evaluation OOM takes
    halve_eval_batch and nothing else; an optimizer's state passes over the activation rungs.
    `program` (jobfiles.program.ProgramOptions): the options the job's program takes, so a flag
    is added only where it takes it. `causes`: the playbook's preference of each cause
    (playbook.Preference)."""
    p = Plan(verdict=verdict, tried=tried, fit=fit)
    if verdict not in ladder:  # the playbook's ladder names the verdicts it acts on
        p.why = f"verdict {verdict}: report only, nothing is changed"
        return p
    done = {r for _, r in tried}
    pref = walk.preference(cause, causes)
    if walk.for_a_person(pref):
        return for_a_person(p, walk.reasons(cause))
    if pref is not None and pref.take:
        return _taken_alone(
            p, rungs.REGISTRY[pref.take], script, knobs, resume, configs, done, program
        )
    situation = rungs.Situation(script, fit, host_request_mib)
    for rung in walk.ordered(verdict, ladder, pref):
        r = rungs.get(rung.id)
        again = r is not None and r.again is not None and r.again(situation)
        skip = done - {rung.id} if again else done
        why_not = _passed_over(rung.id, r, skip, only_sharding, situation)
        if why_not := why_not or (walk.reasons(cause) if walk.passes_over(pref, rung.id) else None):
            p.passed_over.append((rung.id, why_not))
            continue
        if rung.human_only or (r is not None and r.kind == rungs.HUMAN):
            p.rung, p.rung_what = rung.id, rung.what
            return for_a_person(p, f"next rung `{rung.id}` is for a person: {rung.what}", rung.what)
        script_rung, world, why_not = _placement(p, rung.id, r, node, nodes, capacity)
        if why_not:
            p.passed_over.append((rung.id, why_not))
            continue
        edit = {"resume": resume, "configs": configs, "world": world, "fit": fit}
        if why_not := _patched(p, script, script_rung, knobs, program=program, ask=ask, **edit):
            p.passed_over.append((rung.id, why_not))
            continue
        return _chosen(p, rung, r, world, with_allocator, again=again and rung.id in done)
    return for_a_person(
        p,
        "the ladder is exhausted: " + "; ".join(f"{r}: {w}" for r, w in p.passed_over),
        "decide by hand: every automatic rung was tried or cannot apply",
    )


def _patched(p: Plan, script: str, rung_id: str, knobs, ask=None, **how) -> str | None:
    """The rung's edit of the job's files into the plan; why it does not apply, else None (the
    node to exclude or drain goes with an edit that is not made). `ask` (the job's interpreter,
    how to run it as its owner): the edit checked against the program's own answer
    (planning.ask); a disagreement passes the rung over."""
    fixed = None
    if ask is not None and rung_id in fix.PARSER_RUNGS:
        python, run, said, ran = ask
        fixed = fix.for_script(script, how.get("program"), python, run, said, knobs, how.get("fit"),
                               ran, rung_id)  # fmt: skip
    try:
        p.patch = patch(script, rung_id, knobs, edited=fixed if fixed and fixed.script else None,
                        **how)  # fmt: skip
    except RungNotApplicable as e:
        p.exclude, p.drain = [], None
        return fix.refused_both(fixed, e.message) if fixed and fixed.asked else e.message
    if fixed is not None and fixed.asked:
        if not fixed.script:
            proof, refused = fix.static_proof(fixed, p.patch.new, p.patch.changes,
                                              bool(p.patch.files), rung_id)  # fmt: skip
            if refused:
                p.patch, p.exclude, p.drain = None, [], None
                return f"{refused} (asked first: {fixed.why})"
            p.patch.checks.append(proof)
        return None
    if ask is not None:
        pt = p.patch
        check, refusal = ask_program.verdict(pt.old, pt.new, pt.values_after or {}, pt.changes,
                                             how.get("program"), *ask[:3])  # fmt: skip
        if refusal:
            p.patch, p.exclude, p.drain = None, [], None
            return refusal
        if check:
            pt.checks.append(check)
    return None


def _chosen(p: Plan, rung, r, world, with_allocator: bool, *, again: bool = False) -> Plan:
    """The rung taken: the first of the ladder not yet tried that applies (or the micro-batch
    rung taken again with the fit the lineage's two attempts measured)."""
    p.rung, p.rung_what = rung.id, rung.what
    p.world = world
    p.allocator = r.allocator if r is not None else None
    if with_allocator and r is not None and r.kind == rungs.SCRIPT:
        _add_allocator(p, rungs.EXPANDABLE)
    tried_text = ", ".join(t for _, t in p.tried) or "none"
    p.why = (
        f"first rung of the {p.verdict} ladder not yet tried (tried on this lineage: {tried_text})"
    )
    if again:
        p.why = (
            f"{rung.id} again (tried on this lineage: {tried_text}): the lineage's two failed "
            f"attempts measured the micro-batch that fits ({p.fit.micro_batch})"
        )
    return p


def _passed_over(rung_id, r, done, only_sharding, situation) -> str | None:
    """Why a rung is passed over before it is tried: the lineage took it, the fixed cost rules
    the activation rungs out, or the rung's own test of the situation (more RAM could not hold
    the one refused request; no smaller micro-batch is predicted to fit)."""
    if rung_id in done:
        return "already tried on this lineage"
    if only_sharding and r is not None and r.shrinks_activations:
        return only_sharding
    if r is not None and r.applies is not None:
        return r.applies(situation)
    return None


def _placement(p: Plan, rung_id: str, r, node, nodes, capacity):
    """(the script rung to patch, the world it shrinks to, why it cannot apply here): a node
    rung patches nothing in the script (it is resubmitted as it is) and excludes (and may drain) the node; a
    shrinking rung runs on one node fewer."""
    if r is not None and r.kind in (rungs.SHRINK, rungs.NODE) and callable(capacity):
        capacity = capacity()  # asked of Slurm only by a rung that places the job
    if r is not None and r.kind == rungs.SHRINK:
        why_not = _cannot_shrink(node, nodes, capacity)
        if why_not:
            return None, None, why_not
        assert node is not None and nodes is not None
        p.exclude, p.drain = [node], node
        return rung_id, (nodes, nodes - 1), None
    if r is None or r.kind != rungs.NODE:
        return rung_id, None, None
    if r.needs_node and node and nodes is not None and capacity is not None and capacity < nodes:
        return (
            None,
            None,
            f"the partition has {words.count(capacity, 'usable node')} without {node}, the job "
            f"needs {nodes}: the rerun would wait for a node that will not come",
        )
    if r.needs_node:
        if not node:
            return None, None, "the failing node is not known"
        p.exclude = [node]
        p.drain = node if r.drains else None
    return AS_IT_IS.id, None, None


def for_a_person(p: Plan, why: str, action: str | None = None) -> Plan:
    p.needs_human = True
    p.why = why
    p.human_action = action or "decide by hand: " + why
    return p


def _taken_alone(
    p: Plan, r, script: str, knobs, resume, configs, done: set[str], program=None
) -> Plan:
    """The rung a cause takes alone (the playbook's `causes`: an evaluation's own batch), or a
    person: never the ladder's rungs, which would not change it (docs/design.md §3.1)."""
    if r.id in done:
        return for_a_person(p, r.tried_again)
    try:
        p.patch = patch(script, r.id, knobs, resume=resume, configs=configs, program=program)
    except RungNotApplicable as e:
        p.passed_over.append((r.id, e.message))
        shared = _shared_eval_batch(program, knobs) if r.id == fix.EVAL_RUNG else None
        if shared is not None:
            return _halved_with_training(p, shared, script, knobs, resume, configs, done, program)
        return for_a_person(
            p, r.refused_because.format(reason=e.message), f"{r.by_hand}, then resubmit"
        )
    p.rung, p.rung_what = r.id, r.setting
    p.why = r.taken_because
    return p


def _shared_eval_batch(program, knobs):
    """(the evaluation loader's Role, the training's) where the job's program builds its
    evaluation's loader from the same option as its training micro-batch (jobfiles.program:
    `val_loader = DataLoader(val_set, batch_size=args.batch_size)` beside the training loader's
    `batch_size=args.batch_size`, or an option the site's [knobs] micro_batch names): that option
    is the evaluation's batch. None otherwise (issue 64: an evaluation OOM never halves the
    training batch unless it is the evaluation's too)."""
    roles = getattr(program, "roles", None) or []
    site = set(bash.names(knobs, "micro_batch"))
    trains = [r for r in roles if r.kind == "micro_batch"]
    for ev in (r for r in roles if r.kind == "eval_batch"):
        for tr in trains:
            if set(ev.flags) & set(tr.flags):
                return ev, tr
        # The site's spelling stands for the training's only where the program's code does not
        # prove another option is (its training loader's batch).
        if not trains and site & set(ev.flags):
            return ev, None
    return None


def _halved_with_training(p: Plan, shared, script, knobs, resume, configs, done, program) -> Plan:
    """An evaluation OOM whose evaluation batch is the training micro-batch's option: that
    option halved with the accumulation raised (halve_micro_batch: the global batch kept), which
    halves the evaluation's batch too; the report says both batches changed and why."""
    ev, tr = shared
    flag = ev.flags[-1]
    same = (f"the evaluation's loader takes its batch from {flag} ({ev.where}: {ev.help}), the "
            + (f"training loader's micro-batch ({tr.where})" if tr else "training micro-batch "
               "([knobs] micro_batch)"))  # fmt: skip
    if fix.PARSER_RUNG in done:
        return for_a_person(
            p,
            f"the OOM is in evaluation again after the lineage halved {flag}; {same}: check the "
            "evaluation loop (no_grad, predictions kept on the GPU)",
            "lower the evaluation's batch where the program builds its loader, then resubmit",
        )
    try:
        p.patch = patch(
            script, fix.PARSER_RUNG, knobs, resume=resume, configs=configs, program=program
        )
    except RungNotApplicable as e:
        p.passed_over.append((fix.PARSER_RUNG, e.message))
        return for_a_person(
            p,
            f"the OOM is in evaluation and {same}; halving it with the global batch kept "
            f"cannot apply: {e.message}",
            f"halve {flag} and double the accumulation by hand, then resubmit",
        )
    p.patch.changes.append(f"evaluation batch halved with it ({flag}: {ev.where})")
    p.patch.checks.append(f"{same}: halving it halves the evaluation's batch")
    p.rung, p.rung_what = fix.PARSER_RUNG, rungs.REGISTRY[fix.PARSER_RUNG].setting
    p.why = (f"the OOM is in evaluation and {same}: the one option is halved, the training's "
             "accumulation raised to keep the global batch")  # fmt: skip
    return p


def _cannot_shrink(node: str | None, nodes: int | None, capacity: int | None) -> str | None:
    """Why the job cannot (or need not) continue on one node fewer; None when it should."""
    if not node:
        return "the failing node is not known"
    if nodes is None or nodes < 2:
        return f"the job runs on {words.count(nodes, 'node')}: there is no smaller world"
    if capacity is None:
        return "the partition's usable nodes are not known: the job keeps its size"
    if capacity >= nodes:
        return f"the partition has {words.count(capacity, 'usable node')} without {node}: the job keeps its {nodes}"
    if capacity < nodes - 1:
        return f"the partition has {words.count(capacity, 'usable node')}, fewer than {nodes - 1}"
    return None


def _add_allocator(p: Plan, setting: str) -> None:
    """The allocator setting on top of a script rung (a thin pool: docs/design.md §3). A script that
    already sets it keeps its own; the rung stands either way."""
    assert p.patch is not None
    patch_ = p.patch
    if patch_.template and patch_.variables is not None and "alloc_conf" in patch_.variables:
        # A rendered template keeps the setting in its variables, so a later rung keeps it too.
        items = [i for i in str(patch_.variables["alloc_conf"]).split(",") if i]
        if setting not in items:
            patch_.variables["alloc_conf"] = ",".join([*items, setting])
            patch_.new = render(patch_.template, patch_.variables)
            patch_.changes.append(f"alloc_conf -> {patch_.variables['alloc_conf']}")
        p.allocator = setting
        p.rung_what += f", with {setting}"
        return
    try:
        new, changes, checks = set_allocator(p.patch.new, setting)
    except RungNotApplicable:
        p.allocator = setting
        return
    p.patch.new = new
    p.patch.changes.extend(changes)
    p.patch.checks.extend(checks)
    p.allocator = setting
    p.rung_what += f", with {setting}"
