"""`runbook plan`: what runbook would do to a job script, rung by rung, without a cluster.

The knobs are looked for in the script (flags and shell variables, the site's [knobs]) and in the
config files it names (planning.configs, the knob catalogue). Every rung of the ladders gets
either the exact change (the diff of the script and of each config copy, the values after, the
global-batch check computed by re-reading what was patched) or the reason it cannot apply.
Reads the script and its configs; writes nothing.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path

from runbook import playbook, rungs
from runbook.asking import fix
from runbook.errors import RunbookError, UsageError
from runbook.jobfiles import bash
from runbook.jobfiles import configs as cfg
from runbook.jobfiles.config_patch import KNOB_NAMES, Change, JobFiles, Knob, RungPlan, _line
from runbook.jobfiles.program import program_options
from runbook.jobfiles.run_script import RunScript, run_script
from runbook.jobfiles.templates import read_header
from runbook.planning import ask as ask_program
from runbook.planning import environment, walk
from runbook.planning import sbatch_patch as sp
from runbook.rungs._program import entry_word


def _knob_view(k: Knob | cfg.ConfigKnob | None) -> dict | None:
    if k is None:
        return None
    if isinstance(k, Knob):
        return k.view()
    return {
        "value": k.number,
        "file": k.file,
        "line": k.line,
        "key": k.key,
        "kind": "config",
        "as_written": k.value,
    }


def plan_script(
    script: str,
    name: str,
    workdir: str | Path,
    knobs,
    *,
    only: str | None = None,
    cat: cfg.Catalogue | None = None,
    book: playbook.Playbook | None = None,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    ask: tuple[str, ask_program.Run] | None = None,
) -> dict:
    """The `runbook plan --json` document for one script: every rung that changes a job's files
    in the order of the playbook `book` (None: the packaged one), or `only` that rung. `args`:
    the words after the script on its sbatch line ($1..$N; None: not given). `env`: the
    environment the job is submitted with (`CONFIG_FILE=... sbatch job.sh`): read as
    assignments before the script's first command; a rung that would change one of them is
    refused (it is the job's submission, not its script). `ask`: (the job's interpreter, how to
    run it as the job's owner in its folder): each plan the program can answer for is checked
    against its own answer (planning.ask)."""
    script, head = environment.with_env(script, dict(env or {}))
    doc, plans = _planned(script, name, workdir, knobs, only, cat, book, args, ask)
    doc["rungs"] = [_without_env(p, name, script, head).view() for p in plans]
    return doc | ({"environment": dict(env)} if env else {})


def _without_env(p: RungPlan, name: str, script: str, head: str) -> RungPlan:
    """The plan with the submission's environment taken back out of the job's script; a value
    of it the rung changed (a config's path pointed at its copy, a knob the environment set)
    becomes an assignment in the script, where the rerun reads it, saying what it was."""
    if not head or not p.applicable:
        return p
    at = script.index(head)
    changes = []
    for c in p.changes:
        if c.file != name:
            changes.append(c)
            continue
        new = environment.without_env(c.new, script, head)
        if new is None:
            return RungPlan(p.id, False, "the change moved the job's environment's assignments: "
                            "runbook cannot say what the rerun would read")  # fmt: skip
        changes.append(dataclasses.replace(c, old=script[:at] + script[at + len(head) :], new=new))
    return dataclasses.replace(p, changes=changes)


def _planned(script, name, workdir, knobs, only, cat, book, args, ask=None):
    inner = run_script(script, workdir)
    if inner is not None and (passed := _passed(inner, script)) is not None:
        # The script hands the job's own words to its program ("$@"): plan the program's line
        # with them in place, and change them where the job writes them.
        virtual, prefix, suffix, rest = passed
        doc = _plan(virtual, inner.path, workdir, knobs, only, cat, book, inner.args, ask)
        plans = [_own_words(p, inner, script, name, prefix, suffix, rest) for p in doc.pop("plans")]
        return {**doc, "script": name, "runs": inner.path, "arguments": args}, plans
    if inner is not None:  # the training command is in a script the job runs: plan that one
        doc = _plan(inner.text, inner.path, workdir, knobs, only, cat, book, inner.args, ask)
        plans = [_through(p, inner, script, name) for p in doc.pop("plans")]
        return {**doc, "script": name, "runs": inner.path, "arguments": args}, plans
    doc = _plan(script, name, workdir, knobs, only, cat, book, args, ask)
    return doc, doc.pop("plans")


_ALL_ARGS = re.compile(r"""(?<![\w$])"?\$(?:@|\{@(?::(?P<from>[1-9]))?\})"?(?![\w])""")
# The folder of the running script (`$(dirname "$0")/train.py`): the run script's own folder.
_DIRNAME = re.compile(
    r"""(["']?)\$\([ \t]*dirname[ \t]+["']?\$(?:0|\{0\}|\{BASH_SOURCE\[0\]\})["']?[ \t]*\)\1"""
)


def _passed(inner: RunScript, script: str):
    """(the script the program's line would be with the job's words in place of its one "$@",
    the text before them, the text after them, (start, end) of those words in the job's script);
    None where it has no such line. Words the script takes with `shift` first stay out, and
    those before `${@:N}`'s Nth."""
    inert = bash.inert_spans(inner.text)  # a comment that says `${@:3}` runs nothing
    found = [
        m for m in _ALL_ARGS.finditer(inner.text) if not any(a <= m.start() < b for a, b in inert)
    ]
    if len(found) != 1:
        return None
    shifts = len(re.findall(r"(?m)^[ \t]*shift[ \t]*$", inner.text[: found[0].start()]))
    shifts += int(found[0].group("from") or 1) - 1
    end = len(script[: bash.command_end(script, inner.end)].rstrip())
    start = inner.end
    for _ in range(shifts):  # past each word the script shifts away
        m = re.match(r"[ \t\\\n]*\S+", script[start:end])
        if m is None:
            return None
        start += m.end()
    rest = script[start:end].strip()
    start = script.index(rest, start) if rest else end
    folder = posixpath.dirname(inner.path.removeprefix("./")) or "."
    prefix, suffix = inner.text[: found[0].start()], inner.text[found[0].end() :]
    prefix, suffix = _DIRNAME.sub(folder, prefix), _DIRNAME.sub(folder, suffix)
    return prefix + rest + suffix, prefix, suffix, (start, start + len(rest))


def _refused_in(p: RungPlan, inner: RunScript, name: str) -> RungPlan:
    return dataclasses.replace(p, reason=f"in {inner.path}, which {name} runs: {p.reason}")


def _own_words(p: RungPlan, inner, script, name, prefix, suffix, rest) -> RungPlan:
    """A rung planned on the program's line with the job's words in it, as a change of those
    words where the job's script writes them; a change anywhere else in the run script refuses."""
    if not p.applicable:
        return _refused_in(p, inner, name)
    new = p.changes[0].new
    if len(p.changes) > 1 or not (new.startswith(prefix) and new.endswith(suffix)):
        return RungPlan(p.id, False, f"the change for {inner.path} is not in the words {name} "
                        "passes it")  # fmt: skip
    words = (new[len(prefix) : len(new) - len(suffix)] if suffix else new[len(prefix) :]).strip()
    if rest[0] == rest[1] and words:  # the job passed no words there: the new ones follow its last
        words = " " + words
    new_script = script[: rest[0]] + words + script[rest[1] :]
    lands = [f'the job\'s own words, which {inner.path} hands its program ("$@")', *p.lands]
    checks = [*p.checks, f"{name}: {bash.bash_n(new_script, original=script)}"]
    return dataclasses.replace(
        p, changes=[Change(name, name, script, new_script)], lands=lands, checks=checks
    )


def _through(p: RungPlan, inner: RunScript, script: str, name: str) -> RungPlan:
    """A rung planned on the script the job runs, as the job's change: the patched script in a
    copy beside it (the original stays for other jobs), the job's script pointed at the copy.
    A knob the job's line sets in the script's environment (`MICRO=8 bash run.sh`) is not the
    script's default to change: refused."""
    if not p.applicable:
        return _refused_in(p, inner, name)
    own = p.changes[0]
    if own.file != inner.path:
        return RungPlan(p.id, False, f"the plan for {inner.path} changed {own.file} first")
    edited = {ln[1:] for ln in own.view()["diff"].splitlines() if ln.startswith("-")}
    for var, value in inner.env.items():
        # The script's own value of a variable the job's line sets (`GPUS=${GPUS:-8}` under
        # `GPUS=16 sh run.sh`): the plan read the script's, so it holds only where they agree.
        hits = bash.find(inner.text, [var])
        said = bash.int_value(inner.text, hits[0]) if hits else None
        if any(re.search(rf"\b{re.escape(var)}\b", ln) for ln in edited) or (
            hits and str(said) != value
        ):
            return RungPlan(
                p.id,
                False,
                f"{name} sets {var}={value} for {inner.path}, which reads it as "
                f"{hits[0].value if hits else var}: the plan is made from the script's own values",
            )
    copy = cfg.copy_name(inner.path, p.id)
    new_script = script[: inner.start] + copy + script[inner.end :]
    changes = [Change(name, name, script, new_script), Change(inner.path, copy, own.old, own.new)]
    lands = [f"{inner.path} (which {name} runs) in a copy, {copy}", *p.lands]
    checks = [*p.checks, f"{name}: {bash.bash_n(new_script, original=script)}"]
    return dataclasses.replace(p, changes=changes + p.changes[1:], lands=lands, checks=checks)


def _plan(script, name, workdir, knobs, only, cat, book, args, ask=None) -> dict:
    program = program_options(script, workdir, args)  # the flags a rung may add must be its own
    knobs = sp.with_program_roles(knobs, program)  # and the options it says are the batch's
    job = JobFiles.read(script, name, cfg.read_configs(script, workdir, args), knobs, cat)
    files = job.files
    found: dict[str, Knob | cfg.ConfigKnob] = {**job.in_configs, **job.in_script}
    header = read_header(script)
    if header:
        variables = header[1]
        for key, var in (
            ("micro_batch", "micro_batch"),
            ("grad_accum", "grad_accum"),
            ("global_batch", "global_batch"),
        ):
            if isinstance(variables.get(var), int):
                found[key] = Knob(variables[var], name, 1, var, "template", str(variables[var]))
    micro = _value(found.get("micro_batch"))
    accum = _value(found.get("grad_accum"))
    glob = _value(found.get("global_batch"))
    # A config file the script names may set the model-parallel sizes (nanotron's
    # parallelism.tp/pp): with one, the script's own numbers do not give the data-parallel size.
    configs = [f for f in files if not cfg.is_shell(f.name)]
    dp = None if configs else data_parallel(script, name, header[1] if header else None)
    if glob is not None:
        formula = {
            "formula": "global_batch (stated; the framework derives accumulation)",
            "value": glob,
        }
    else:
        per_rank = micro * (accum or 1) if micro is not None else None
        formula = {
            "formula": "micro_batch * grad_accum * data_parallel",
            "value": per_rank * dp.value if per_rank is not None and dp and dp.value else None,
            "per_data_parallel_rank": per_rank,
        }
    plans = []
    pb = book or playbook.load()
    shown = walk.plan_rungs(pb.ladder, pb.causes)
    for rid in shown if only is None else (only,):
        if rungs.get(rid) is None:
            raise UsageError(
                f"--rung {rid}: not a rung runbook knows", hint=f"one of {', '.join(shown)}"
            )
        planned = _plan_rung(rungs.REGISTRY[rid], job, program)
        plans.append(_asked(rid, planned, script, name, program, knobs, ask) if ask else planned)
    return {
        "plans": plans,
        "script": name,
        "workdir": str(workdir),
        "arguments": list(args) if args is not None else None,
        "configs": [
            {"file": f.name, "read": f.text is not None, "why": f.why or None} for f in files
        ],
        "knobs": {k: _knob_view(found.get(k)) for k in KNOB_NAMES}
        | {"data_parallel": dp.view() if dp else None},
        "global_batch": formula,
    }


def _asked(rid: str, planned, script: str, name: str, program, knobs, ask):
    """A rung's plan once the job's program was asked: the micro-batch rung decided and proved
    by its parser (asking.fix) where it answers; every other plan checked against its answer
    (planning.ask)."""
    if rid in fix.PARSER_RUNGS:
        fixed = fix.for_script(script, program, ask[0], ask[1], "", knobs, rung=rid)
        planned = fix.decided(rid, planned, fixed, script, name)
        if fixed.asked:
            return planned
    return ask_program.asked(planned, program, *ask)


def _value(k) -> int | None:
    if k is None:
        return None
    return k.value if isinstance(k, Knob) else k.number


# Flags that state the world in numbers (launchers) and the model-parallel sizes that divide it
# (Megatron-style); a flag that reads Slurm's variables is not a number here.
PROCESSES = ["--num_processes", "--num-processes"]  # accelerate: every process of the job
PER_NODE = ["--nproc_per_node", "--nproc-per-node"]  # torchrun: processes per node
MODEL_PARALLEL = [
    "--tensor-model-parallel-size",
    "--tensor_model_parallel_size",
    "--pipeline-model-parallel-size",
    "--pipeline_model_parallel_size",
    "--context-parallel-size",
    "--context_parallel_size",
]


def _sbatch_int(script: str, long: str, short: str | None = None) -> tuple[int, int] | None:
    """(value, line) of an `#SBATCH --long=N` (or `-s N`) directive with a plain number."""
    names = re.escape(long) + r"(?:=|[ \t]+)" + (rf"|{re.escape(short)}[ \t]*" if short else "")
    # A comment after the option is common (sbatch reads the option only).
    m = re.search(rf"(?m)^#SBATCH[ \t]+(?:{names})(\d{{1,6}})[ \t]*(?:#.*)?$", script)
    return (int(m.group(1)), _line(script, m.start())) if m else None


def _flag_int(script: str, names: list[str]) -> tuple[int | None, int] | None:
    """(value or None when not a number, line) of the first such flag in words that run."""
    hit = bash.maybe(script, names)
    return (bash.int_value(script, hit), _line(script, hit.start)) if hit else None


def data_parallel(script: str, name: str, variables: dict | None = None) -> Knob | None:
    """The data-parallel size, where the script states every factor as a number: the ranks
    (a template's nodes x ranks_per_node; accelerate's --num_processes; torchrun's --nnodes x
    --nproc_per_node; else #SBATCH --nodes x --ntasks-per-node, or --ntasks) over the
    model-parallel sizes
    (tensor, pipeline, context). None when a factor is missing or not a number: the global batch
    is then not computed, never guessed."""
    nodes = _sbatch_int(script, "--nodes", "-N")
    world: tuple[int, int, str] | None = None  # (ranks, line, how)
    v = variables or {}
    if isinstance(v.get("nodes"), int) and isinstance(v.get("ranks_per_node"), int):
        world = (v["nodes"] * v["ranks_per_node"], 1, f"{v['nodes']} nodes x {v['ranks_per_node']}")
    elif (procs := _flag_int(script, PROCESSES)) is not None:
        if procs[0] is None:
            return None
        world = (procs[0], procs[1], f"{procs[0]} processes")
    elif (per := _flag_int(script, PER_NODE)) is not None:
        count = _flag_int(script, bash.NODE_COUNT_FLAGS)
        n = count[0] if count is not None else (nodes[0] if nodes else None)
        if per[0] is None or n is None:
            return None
        world = (per[0] * n, per[1], f"{n} nodes x {per[0]}")
    elif nodes and (tasks := _sbatch_int(script, "--ntasks-per-node")):
        world = (nodes[0] * tasks[0], nodes[1], f"{nodes[0]} nodes x {tasks[0]} tasks")
    elif total := _sbatch_int(script, "--ntasks", "-n"):  # one rank per task (srun)
        world = (total[0], total[1], f"{total[0]} tasks")
    if world is None:
        return None
    split, parts = 1, []
    for i in range(0, len(MODEL_PARALLEL), 2):
        f = _flag_int(script, MODEL_PARALLEL[i : i + 2])
        if f is None:
            continue
        if f[0] is None:
            return None
        split *= f[0]
        parts.append(f"{MODEL_PARALLEL[i].strip('-').split('-')[0]} {f[0]}")
    if split < 1 or world[0] % split:
        return None
    how = world[2] + (f" / ({' x '.join(parts)})" if parts else "")
    return Knob(world[0] // split, name, world[1], "data_parallel", "derived", how)


def script_nodes(script: str) -> int | None:
    """The node count the script asks for (`#SBATCH --nodes=N`, `-N N`, a template's `nodes`);
    a range (`--nodes=2-4`) or nothing: None."""
    header = read_header(script)
    if header and isinstance(header[1].get("nodes"), int):
        return header[1]["nodes"]
    found = _sbatch_int(script, "--nodes", "-N")
    return found[0] if found else None


def with_program_names(knobs, program):
    """The site's knob names with the program's own spellings of them (`--batch_size` where the
    site lists `--batch-size`): what a flag the rung added to the program is read back by."""
    kinds = ("micro_batch", "grad_accum", "global_batch")
    more = {k: program.takes(bash.names(knobs, k)) for k in kinds}
    more = {
        k: [*getattr(knobs, k), *(n for n in v if n not in getattr(knobs, k))]
        for k, v in more.items()
    }
    for k in kinds:
        d = program.default_of(bash.names(knobs, k))
        if d is not None:
            more[k] += [a for a in (d.aliases or (d.flag,)) if a not in more[k]]
    return dataclasses.replace(knobs, **more)


def _constant(rid: str, job: JobFiles, program, why: str) -> RungPlan:
    """The micro-batch that is a module constant of the job's program (jobfiles.program.Constant),
    halved in a copy of the program beside it (its imports resolve as the original's), the job
    pointed at the copy; the accumulation the program derives from it follows, the global batch
    stays. The copy is re-parsed and its constant read back."""
    import ast

    c = program.constants[0]
    if c.value < 2 or c.value % 2:
        return RungPlan(rid, False, f"{why}; {c.name} = {c.value} in {c.file} cannot be halved")
    entry = entry_word(job.script, program.entry)
    if entry is None or not program.text:
        return RungPlan(rid, False, f"{why}; {program.entry} is not a word runbook can repoint")
    lines = program.text.splitlines(keepends=True)
    line = lines[c.line - 1]
    lines[c.line - 1] = line[: c.col] + str(c.value // 2) + line[c.end_col :]
    new_text = "".join(lines)
    back = [
        getattr(n.value, "value", None)
        for n in ast.parse(new_text).body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == c.name
    ]
    if back != [c.value // 2]:
        return RungPlan(rid, False, f"re-reading the copy of {c.file} found {c.name} = {back}")
    word = job.script[: entry.start].rsplit(None, 1)[-1] if entry.start else ""
    copy = cfg.copy_name(word or program.entry, rid)
    new_script = job.script[: entry.start - len(word)] + copy + job.script[entry.start :]
    checks = [
        f"{c.name} is the micro-batch: {c.proof} (the accumulation is derived from it, the "
        "global batch kept)",
        f"{copy}: {c.name} = {c.value // 2} re-read from the parsed copy",
        bash.bash_n(new_script, original=job.script),
    ]
    changes = [
        Change(job.name, job.name, job.script, new_script),
        Change(c.file, copy, program.text, new_text),
    ]
    lands = [f"{c.file}:{c.line} in a copy, {copy}: {c.name} {c.value} -> {c.value // 2}"]
    return RungPlan(rid, True, changes=changes, values_after={"micro_batch": c.value // 2},
                    checks=checks, lands=lands)  # fmt: skip


def _plan_rung(r: rungs.RungDef, job: JobFiles, program=None) -> RungPlan:
    rid, script, name, files, knobs = r.id, job.script, job.name, job.files, job.knobs
    world = None
    if r.kind == rungs.SHRINK:
        n = script_nodes(script)
        if n is None or n < 2:
            return RungPlan(
                rid,
                False,
                f"the script asks for {'1 node' if n == 1 else 'no fixed number of nodes'} "
                "(#SBATCH --nodes): there is no smaller world to plan",
            )
        world = (n, n - 1)
    try:
        p = sp.patch(script, rid, knobs, world=world, program=program, defaults=False)
    except RunbookError as e:
        why = str(e).splitlines()[0]
        in_configs = r.configs(job) if r.configs is not None else None
        if in_configs is not None:  # the knob in a config the script names: changed in a copy
            return in_configs
        try:  # the knob is only the program's default (asked after the configs)
            p = sp.patch(script, rid, knobs, world=world, program=program, configs=files)
        except RunbookError as e2:
            why = str(e2).splitlines()[0]  # the script's reason, and the program's where read
            unread = [f"{f.name} ({f.why})" for f in files if f.text is None]
            if unread and "no " in why and "could not read" not in why:
                why += "; the script names config files runbook could not read: " + "; ".join(
                    unread
                )
            if r.fitted and program is not None and program.constants:
                return _constant(rid, job, program, why)
            return RungPlan(rid, False, why)
    after = bash.effective_batch(
        p.new, with_program_names(knobs, program) if p.from_program else knobs
    )
    values = p.values_after or {
        k: after[s]
        for k, s in (("micro_batch", "micro"), ("grad_accum", "accum"), ("global_batch", "global"))
        if after[s] is not None
    }
    lands = list(p.changes)
    if world is not None:
        said = _sbatch_int(script, "--nodes", "-N")
        lands.append(
            f"sbatch --nodes={world[1]} on the resubmission's command line"
            + (
                f": it overrides #SBATCH --nodes={said[0]} ({name}:{said[1]}), left as written"
                if said
                else ""
            )
        )
    return RungPlan(
        rid,
        True,
        changes=[Change(name, name, p.old, p.new)],
        values_after=values,
        checks=list(p.checks),
        lands=lands,
    )
