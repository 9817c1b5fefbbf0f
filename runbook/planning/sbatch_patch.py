"""A rung's change of a job, checked: the one place every rung's edits are made and read back.

The rung (runbook.rungs) says what it changes in each place a job keeps its knobs; here it is
asked in order: a runbook-rendered job's template variables (re-rendered exactly), else the plain
script (flags, shell variables, `#SBATCH` lines), else the config files the script names (changed
in copies). The rerun is pointed at its checkpoint, and every edit is checked the same way:
`bash -n`, the global batch re-read from what was patched.

Nothing here touches disk except `bash -n` on a temporary copy: the caller gets the new text, the
unified diff and the checks that passed, and writes through the action executor.
"""

from __future__ import annotations

import dataclasses
import difflib
import shlex
from dataclasses import field

from runbook import rungs
from runbook.errors import InputError, RungNotApplicable
from runbook.jobfiles import bash
from runbook.jobfiles.config_patch import JobFiles
from runbook.jobfiles.templates import read_header, render, template_variables
from runbook.planning import families
from runbook.record import record
from runbook.rungs import ALLOC_VARS, Ask
from runbook.rungs._allocator import set_allocator


@record
class Patch:
    rung: str
    old: str
    new: str
    changes: list[str] = field(default_factory=list)  # one sentence each, for the report
    checks: list[str] = field(default_factory=list)  # what was verified before writing
    template: str | None = None
    variables: dict | None = None
    # Patched copies of config files the script names (their name in the new script -> text),
    # and each copy's diff against the original: written beside the new script, never in place.
    files: dict[str, str] = field(default_factory=dict)
    file_diffs: list[str] = field(default_factory=list)
    # The knob was the program's default: the rung re-read the flags it added against it (the
    # script alone states no batch to compare).
    from_program: bool = False
    # The values after, where the plan read them where the script cannot state them (a program's
    # own config under its command-line overrides: planning.families).
    values_after: dict | None = None
    # The edit was decided and proved by the job's own parser (runbook.asking.fix): its check
    # compares the two parsed configurations, so the script's static re-read is not the proof.
    proved: bool = False

    def diff(self, name: str = "job.sbatch") -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
        ) + "".join(self.file_diffs)


def set_resume(script: str, env_name: str, flag: str, path: str, knobs):
    """Point the rerun at a checkpoint: the script's own assignment of the resume variable if it
    has one (an `export` in the script would override the environment), else a flag added to the
    training command, else nothing to change here (the environment carries it)."""
    quoted = shlex.quote(path)
    hits = bash.find(script, [env_name]) if env_name else []
    if hits:
        return bash.replace(script, [(h, quoted) for h in hits]), f"{env_name}={path}"
    if flag:
        micro = bash.one(
            script, [n for n in knobs.micro_batch if n.startswith("-")], "training command"
        )
        at = bash.Hit(micro.name, "", micro.end, micro.end)
        return bash.replace(script, [(at, f" {flag} {quoted}")]), f"{flag} {path}"
    return script, None


_ROLE_KINDS = ("micro_batch", "grad_accum", "global_batch")


def with_program_roles(knobs, program):
    """The site's knob spellings and the job's program's own options whose help text says what
    they are (jobfiles.program.option_roles): `--batch_size` is a micro-batch where the program
    says 'Per GPU batch size', `--update_freq` an accumulation where it says 'gradient
    accumulation steps'. The site's lists come first."""
    if program is None or not getattr(program, "roles", None):
        return knobs
    more = {}
    for kind in _ROLE_KINDS:
        own = list(getattr(knobs, kind))
        # What the program says an option is wins over the site's spellings: imagenet's
        # --batch-size is in [knobs] micro_batch, and its help says it is all GPUs' batch.
        other = {f for k in _ROLE_KINDS if k != kind for r in program.proven(k) for f in r.flags}
        mine = [f for r in program.proven(kind) for f in r.flags]
        new = [f for f in own if f not in other] + [f for f in mine if f not in own]
        if new != own:
            more[kind] = new
    # The options the program's evaluation loader takes its batch from (`val_loader =
    # DataLoader(val_set, batch_size=args.eval_batch)`) are its evaluation batch, unless it is
    # the training's too (planning.ladder halves it as the micro-batch): the training loader's
    # option, or, where no loader proves which option the training's is, a site spelling of it.
    trains = {f for r in program.proven("micro_batch") for f in r.flags}
    micro = list(more.get("micro_batch", knobs.micro_batch))
    evals = [f for r in program.proven("eval_batch") for f in r.flags
             if not trains & set(r.flags) and (trains or not set(micro) & set(r.flags))]  # fmt: skip
    if evals:
        more["eval_batch"] = list(knobs.eval_batch) + [
            f for f in evals if f not in knobs.eval_batch
        ]
        more["micro_batch"] = [f for f in micro if f not in evals]
    return dataclasses.replace(knobs, **more) if more else knobs


def role_checks(program, changes: list[str]) -> list[str]:
    """The proof of each program option a change used for its role: the program's own words."""
    out = []
    for r in getattr(program, "roles", None) or ():
        if r.kind == "eval_batch":  # the evaluation's loader: said by the plan that uses it
            continue
        used = [f for f in r.flags if any(f"({f}" in c or f" {f} " in c for c in changes)]
        if used:
            what = r.kind.replace("_", "-").replace("grad-accum", "gradient accumulation")
            out.append(f"{used[0]} is the {what}: {r.where} says {r.help[:80]!r} ({r.said_by})")
    return out


def check_global_batch(old: str, new: str, knobs, program=None) -> str:
    """The global batch of the patched script, recomputed from it, equals the original's. An
    accumulation the original does not set is the program's default, where it states one (the
    flag the patch added is then read back against it)."""
    a, b = bash.effective_batch(old, knobs), bash.effective_batch(new, knobs)
    basis = ""
    if a["accum_text"] is None and b["accum_text"] is not None and program is not None:
        d = program.default_of(bash.names(knobs, "grad_accum"))
        if d is not None:
            a = {**a, "accum": d.value}
            basis = f" ({d.flag} {d.value} before: the program's default, {d.where})"
    if a == b:
        return "global batch: micro-batch, accumulation and global batch unchanged"
    if a["global"] is not None or b["global"] is not None:
        if a["global"] == b["global"]:
            return f"global batch stated as {a['global']} before and after: unchanged"
        raise InputError(
            f"the patch changes the stated global batch ({a['global']} -> {b['global']})",
            hint="nothing was written; patch it by hand",
        )
    if None not in (a["micro"], a["accum"], b["micro"], b["accum"]):
        before, after = a["micro"] * a["accum"], b["micro"] * b["accum"]
        if before == after:
            return (
                f"global batch re-read from the patched script: {b['micro']} x {b['accum']} "
                f"= {a['micro']} x {a['accum']} = {before} per data-parallel rank{basis}"
            )
        raise InputError(
            f"the patched script's micro-batch x accumulation is {after}, the "
            f"original's {before}: the global batch would change",
            hint="nothing was written; patch it by hand",
        )
    if a["accum"] is None and a["accum_text"] and a["accum_text"] == b["accum_text"]:
        return (
            f"accumulation {a['accum_text']} is computed in the script from the micro-batch "
            "and was left as it is"
        )
    raise InputError(
        "the global batch of the patched script cannot be re-read to check it",
        hint="state the micro-batch and accumulation as numbers, or patch by hand",
    )


def _rung(rung_id: str) -> rungs.RungDef:
    r = rungs.get(rung_id)
    if r is None:
        raise RungNotApplicable(f"runbook knows no rung {rung_id}")
    return r


def _plain(script: str, r: rungs.RungDef, ask: Ask) -> tuple[str, list[str], list[str]]:
    if r.script is None:
        raise RungNotApplicable(f"runbook has no job-script patch for rung {r.id}")
    return r.script(script, ask)


def _template(script: str, r: rungs.RungDef, template: str, variables: dict, ask: Ask) -> Patch:
    if r.template is None:
        raise RungNotApplicable(f"rung {r.id} has no template variable")
    vars2 = dict(variables)
    changes: list[str] = []
    checks: list[str] = []
    r.template(vars2, ask, changes, checks)
    new = render(template, vars2)
    if r.allocator and any(name not in new for name in ALLOC_VARS):
        # A template that does not export the allocator variables gets them in the script.
        new, more, _ = set_allocator(new, vars2["alloc_conf"])
        changes.extend(more)
    return Patch(r.id, script, new, changes, checks, template, vars2)


def in_configs(script: str, r: rungs.RungDef, files, knobs) -> Patch | None:
    """The Patch for a rung whose knob is in a config file the script names: the new script
    pointed at the copies, and the copies. None when no config holds the knob; RungNotApplicable
    when one does and the rung cannot change it."""
    planned = r.configs(JobFiles.read(script, "job script", files, knobs)) if r.configs else None
    if planned is None:
        return None
    if not planned.applicable:
        raise RungNotApplicable(planned.reason)
    copies = planned.changes[1:]
    changes = [
        f"{c.file}: a copy {c.new_file} with the change; the script points at it" for c in copies
    ]
    changes += [f"{k} -> {v}" for k, v in planned.values_after.items()]
    return Patch(
        r.id,
        script,
        planned.changes[0].new,
        changes,
        list(planned.checks),
        files={c.new_file: c.new for c in copies},
        file_diffs=[c.view()["diff"] for c in copies],
    )


def from_program(script: str, r: rungs.RungDef, ask: Ask, configs, *, why: str) -> Patch:
    """The Patch for a rung whose knob is the default of the job's program (no knob in the script
    or in a config it names): the program's own flag added to its command. RungNotApplicable with
    the script's reason `why`, and the program's where it was read."""
    prog = ask.program
    if r.program is None or prog is None or prog.flags is None:
        raise RungNotApplicable(why)
    unread = [f"{f.name} ({f.why})" for f in configs or () if f.text is None]
    if unread:
        raise RungNotApplicable(
            f"{why}; the script names config files runbook could not read, which may set what "
            f"{prog.entry}'s defaults would: " + "; ".join(unread)
        )
    try:
        new, changes, checks = r.program(script, ask)
    except RungNotApplicable as e:
        why = f"{why}; and in its program: {e.message}"
        fit = ask.fit.micro_batch if ask.fit is not None and ask.fit.known else None
        job = families.ScriptOnly(script, "job script")
        plan = families.script_family(r.id, job, prog, why, fit) if r.fitted else None
        if plan is None:
            raise RungNotApplicable(why, hint=e.hint) from None
        if not plan.applicable:
            raise RungNotApplicable(plan.reason) from None
        checks = [c for c in plan.checks if not c.startswith("bash -n")]  # patch() runs it
        return Patch(r.id, script, plan.changes[0].new, list(plan.lands), checks,
                     from_program=True, values_after=dict(plan.values_after))  # fmt: skip
    return Patch(r.id, script, new, changes, checks, from_program=True)


def patch(
    script: str,
    rung: str,
    knobs,
    *,
    resume=None,
    configs=None,
    world=None,
    fit=None,
    program=None,
    defaults: bool = True,
    edited=None,
) -> Patch:
    """The job script for `rung` (the node rungs: "unchanged", a resubmission as is), checked
    (bash -n, global batch) but not written. `resume` (a CheckpointsSection and a path) points
    the rerun at its checkpoint: the template variable, the script's own assignment, or a flag.
    `configs` (jobfiles.configs.ConfigFile): where the script holds no knob for the rung, the
    config files it names are changed in copies. `world` (nodes before, after) is for the rungs
    that resize the world; `fit` (planning.fit.Fit) for the micro-batch the failure's numbers
    solve; `program` (jobfiles.program.ProgramOptions) for a rung that adds a flag the job's
    program must take, and, with `defaults`, for the knob that is only the program's default
    (asked last: the script, then its configs, then the program). `edited` (asking.fix.Fixed):
    the training command's edit the program's parser proved, taken as the rung's edit."""
    r = _rung(rung)
    knobs = with_program_roles(knobs, program)
    ask = Ask(knobs, world=world, fit=fit, program=program)
    header = read_header(script)
    # The template variable carries the resume path only on a runbook-rendered job whose
    # template has it; every other script is told in its own words (set_resume below).
    extra: dict = {}
    if edited is not None:
        p = Patch(rung, script, edited.script, list(edited.lands), list(edited.checks),
                  values_after=dict(edited.values_after), proved=True)  # fmt: skip
    elif header and r.template is not None:
        template, variables = header
        if resume and resume[0].resume_var in template_variables(template):
            extra = {resume[0].resume_var: resume[1]}
        p = _template(script, r, template, {**variables, **extra}, ask)
        if extra:
            p.changes.append(f"resume from {resume[1]} ({resume[0].resume_var})")
    else:
        try:
            new, changes, checks = _plain(script, r, ask)
            p = Patch(rung, script, new, changes, checks)
        except RungNotApplicable as e:
            found = in_configs(script, r, configs, knobs) if configs else None
            if found is None and not defaults:
                raise
            p = found or from_program(script, r, ask, configs, why=e.message)
    if resume and not extra:
        p.new, how = set_resume(
            p.new, resume[0].resume_env, resume[0].resume_flag, resume[1], knobs
        )
        if how:
            p.changes.append(f"resume from {resume[1]} ({how})")
    p.checks += role_checks(program, p.changes)
    if p.new == p.old and r.kind != rungs.NODE:  # a node rung resubmits the job as it is
        raise RungNotApplicable(f"rung {rung} would not change the script")
    p.checks.append(bash.bash_n(p.new, original=script))
    if not (header or p.files or p.from_program or p.proved or rungs.resizes_world(rung)):
        # a config patch checked the batch on its copies; a resize checks with the nodes
        p.checks.append(check_global_batch(script, p.new, knobs, program))
    return p
