"""`runbook plan`: what runbook would do to a job script, rung by rung, without a cluster.

The knobs are looked for in the script (flags and shell variables, the site's [knobs]) and in the
config files it names (planning.configs, the knob catalogue). Every rung of the ladders gets
either the exact change (the diff of the script and of each config copy, the values after, the
global-batch check computed by re-reading what was patched) or the reason it cannot apply.
Reads the script and its configs; writes nothing.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import field
from pathlib import Path

from runbook import rungs
from runbook.errors import RunbookError, UsageError
from runbook.evidence import configs as cfg
from runbook.planning import sbatch_patch as sp
from runbook.record import record

# The rungs that change a job's script or its configs, in ladder order.
PLAN_RUNGS = (
    "expandable_segments",
    "max_split_size",
    "halve_micro_batch",
    "activation_checkpointing",
    "raise_sharding",
    "raise_mem",
    "shrink_world",  # the gpu_fault rung for a partition with no spare node: one node fewer
    "halve_eval_batch",  # an OOM in evaluation (DESIGN §3.1): the evaluation's own batch
)
KNOB_NAMES = ("micro_batch", "grad_accum", "global_batch")


@record
class Knob:
    value: int | None
    file: str
    line: int
    key: str
    kind: str  # flag | env | config | template
    text: str = ""  # the value as written

    def view(self) -> dict:
        return {
            "value": self.value,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "kind": self.kind,
            "as_written": self.text,
        }


@record
class Change:
    file: str
    new_file: str
    old: str
    new: str

    def view(self) -> dict:
        diff = "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.file}",
                tofile=f"b/{self.new_file}",
            )
        )
        return {"file": self.file, "new_file": self.new_file, "diff": diff}


@record
class RungPlan:
    id: str
    applicable: bool
    reason: str = ""
    changes: list[Change] = field(default_factory=list)
    values_after: dict = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)

    def view(self) -> dict:
        if not self.applicable:
            return {"id": self.id, "applicable": False, "reason": self.reason}
        return {
            "id": self.id,
            "applicable": True,
            "changes": [c.view() for c in self.changes],
            "values_after": self.values_after,
            "checks": self.checks,
        }


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def script_knobs(script: str, name: str, knobs) -> dict[str, Knob]:
    out = {}
    for key in KNOB_NAMES:
        hits = sp._find(script, sp.names(knobs, key))
        if hits:
            h = hits[0]
            kind = "flag" if h.name.startswith("-") else "env"
            out[key] = Knob(
                sp._int_value(script, h), name, _line(script, h.start), h.name, kind, h.value
            )
    return out


def config_knobs(files: list[cfg.ConfigFile], cat: cfg.Catalogue) -> dict[str, cfg.ConfigKnob]:
    """The first numeric knob of each kind across the named configs ("auto" and other
    non-numbers defer to elsewhere: not a knob here)."""
    out: dict[str, cfg.ConfigKnob] = {}
    for f in files:
        if f.text is None:
            continue
        for key in KNOB_NAMES:
            for k in cfg.find_knobs(f.name, f.text, getattr(cat, key)):
                if k.number is not None and key not in out:
                    out[key] = k
    return out


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


def _halve_in_configs(
    script: str,
    name: str,
    files: list[cfg.ConfigFile],
    found: dict[str, cfg.ConfigKnob],
    in_script: dict[str, Knob],
    knobs,
) -> RungPlan:
    """halve_micro_batch where the micro-batch lives in a config: the copy with it halved (and the
    accumulation doubled where it is stated, in a config or in the script), the script pointed
    at the copies, the global batch re-read from what was patched."""
    rid = "halve_micro_batch"
    micro = found["micro_batch"]
    m = micro.number or 0
    if m < 2 or m % 2:
        return RungPlan(
            rid,
            False,
            f"micro-batch {micro.key}={micro.value} in {micro.file} "
            "cannot be halved exactly; take the next rung",
        )
    accum = found.get("grad_accum")
    glob = found.get("global_batch") or in_script.get("global_batch")
    texts = {f.name: f.text for f in files if f.text is not None}
    edits: dict[str, list[tuple[cfg.ConfigKnob, int]]] = {micro.file: [(micro, m // 2)]}
    new_script = script
    checks = []
    after = {"micro_batch": m // 2}
    if accum is not None and accum.number:
        edits.setdefault(accum.file, []).append((accum, accum.number * 2))
        after["grad_accum"] = accum.number * 2
        checks.append(
            f"global batch {m} x {accum.number} = {m // 2} x {accum.number * 2} per "
            "data-parallel rank"
        )
    elif "grad_accum" in in_script and in_script["grad_accum"].value:
        a = in_script["grad_accum"]
        try:
            new_script, _, _ = sp.halve_accumulation_only(new_script, knobs, a.value or 0)
        except RunbookError as e:
            return RungPlan(rid, False, str(e).splitlines()[0])
        after["grad_accum"] = (a.value or 0) * 2
        checks.append(
            f"global batch {m} x {a.value} = {m // 2} x {(a.value or 0) * 2} per "
            "data-parallel rank (accumulation in the script)"
        )
    elif glob is not None:
        gv = glob.number if isinstance(glob, cfg.ConfigKnob) else glob.value
        checks.append(
            f"global batch stated as {glob.key}={gv}: unchanged; the framework derives accumulation"
        )
    else:
        return RungPlan(
            rid,
            False,
            f"micro-batch {micro.key} is in {micro.file} but neither an "
            "accumulation nor a global batch is stated anywhere runbook can read: "
            "halving it would change the global batch",
        )
    changes = []
    for fname, file_edits in edits.items():
        text = texts[fname]
        for knob, value in sorted(file_edits, key=lambda e: -e[0].start):
            text = cfg.replace_value(text, knob, value)
        new_name = cfg.copy_name(fname, rid)
        # Re-read the copy: the value is where the knob was, and nothing else moved.
        cat_keys = tuple(k.key for k, _ in file_edits)
        reread = {k.key: k.number for k in cfg.find_knobs(fname, text, cat_keys)}
        for knob, value in file_edits:
            if reread.get(knob.key) != value:
                return RungPlan(
                    rid,
                    False,
                    f"re-reading the patched copy of {fname} found "
                    f"{knob.key}={reread.get(knob.key)}, not {value}",
                )
        changes.append(Change(fname, new_name, texts[fname], text))
        new_script = cfg.point_script_at(new_script, fname, new_name)
    changes.insert(0, Change(name, name, script, new_script))
    checks.append(sp.bash_n(new_script, original=script))
    return RungPlan(rid, True, changes=changes, values_after=after, checks=checks)


def plan_script(
    script: str,
    name: str,
    workdir: str | Path,
    knobs,
    *,
    only: str | None = None,
    cat: cfg.Catalogue | None = None,
) -> dict:
    """The `runbook plan --json` document for one script."""
    cat = cat or cfg.catalogue()
    files = cfg.read_configs(script, workdir)
    in_script = script_knobs(script, name, knobs)
    in_configs = config_knobs(files, cat)
    found: dict[str, Knob | cfg.ConfigKnob] = {**in_configs, **in_script}
    header = sp.read_header(script)
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
    dp = None if files else data_parallel(script, name, header[1] if header else None)
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
    for rid in PLAN_RUNGS if only is None else (only,):
        if rungs.get(rid) is None:
            raise UsageError(
                f"--rung {rid}: not a rung runbook knows", hint=f"one of {', '.join(PLAN_RUNGS)}"
            )
        plans.append(_plan_rung(rid, script, name, files, in_script, in_configs, knobs, cat))
    return {
        "script": name,
        "workdir": str(workdir),
        "configs": [
            {"file": f.name, "read": f.text is not None, "why": f.why or None} for f in files
        ],
        "knobs": {k: _knob_view(found.get(k)) for k in KNOB_NAMES}
        | {"data_parallel": dp.view() if dp else None},
        "global_batch": formula,
        "rungs": [p.view() for p in plans],
    }


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
    hit = sp._maybe(script, names)
    return (sp._int_value(script, hit), _line(script, hit.start)) if hit else None


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
        count = _flag_int(script, sp.NODE_COUNT_FLAGS)
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
    header = sp.read_header(script)
    if header and isinstance(header[1].get("nodes"), int):
        return header[1]["nodes"]
    found = _sbatch_int(script, "--nodes", "-N")
    return found[0] if found else None


def _plan_rung(rid, script, name, files, in_script, in_configs, knobs, cat) -> RungPlan:
    world = None
    if rid == "shrink_world":
        n = script_nodes(script)
        if n is None or n < 2:
            return RungPlan(
                rid,
                False,
                f"the script asks for {n if n else 'no fixed number of'} node(s) "
                "(#SBATCH --nodes): there is no smaller world to plan",
            )
        world = (n, n - 1)
    try:
        p = sp.patch(script, rid, knobs, world=world)
    except RunbookError as e:
        why = str(e).splitlines()[0]
        if (
            rid == "halve_micro_batch"
            and "micro_batch" not in in_script
            and ("micro_batch" in in_configs)
        ):
            return _halve_in_configs(script, name, files, in_configs, in_script, knobs)
        if rid == "activation_checkpointing":
            flipped = _checkpointing_in_configs(script, name, files, cat)
            if flipped is not None:
                return flipped
        unread = [f"{f.name} ({f.why})" for f in files if f.text is None]
        if unread and "no " in why:
            why += "; the script names config files runbook could not read: " + "; ".join(unread)
        return RungPlan(rid, False, why)
    after = sp.effective_batch(p.new, knobs)
    values = {
        k: after[s]
        for k, s in (("micro_batch", "micro"), ("grad_accum", "accum"), ("global_batch", "global"))
        if after[s] is not None
    }
    return RungPlan(
        rid,
        True,
        changes=[Change(name, name, p.old, p.new)],
        values_after=values,
        checks=list(p.checks) + p.changes,
    )


def _checkpointing_in_configs(
    script: str, name: str, files: list[cfg.ConfigFile], cat: cfg.Catalogue
) -> RungPlan | None:
    """activation_checkpointing where a config holds the switch (`gradient_checkpointing:
    false`): the copy with it on; None when no config has the switch."""
    rid = "activation_checkpointing"
    for f in files:
        if f.text is None:
            continue
        for k in cfg.find_knobs(f.name, f.text, cat.activation_checkpointing):
            v = k.value.strip("\"'").lower()
            if v in ("true", "1", "yes"):
                return RungPlan(rid, False, f"{k.key} is already on in {f.name}:{k.line}")
            if v in ("false", "0", "no"):
                on = "1" if v == "0" else "true"
                text = f.text[: k.start] + on + f.text[k.end :]
                new_name = cfg.copy_name(f.name, rid)
                new_script = cfg.point_script_at(script, f.name, new_name)
                return RungPlan(
                    rid,
                    True,
                    changes=[
                        Change(name, name, script, new_script),
                        Change(f.name, new_name, f.text, text),
                    ],
                    values_after={k.key: True},
                    checks=[sp.bash_n(new_script, original=script)],
                )
    return None


def config_patch(script: str, rung: str, files: list[cfg.ConfigFile], knobs, *, why: str):
    """The Patch for a rung whose knob is in a config file the script names (for `runbook oom`):
    the new script pointed at the copies, and the copies. RungNotApplicable (the script's own
    reason, or the configs') when no config holds the knob."""
    from runbook.planning.sbatch_patch import Patch, RungNotApplicable

    cat = cfg.catalogue()
    in_script = script_knobs(script, "job script", knobs)
    in_configs = config_knobs(files, cat)
    planned: RungPlan | None = None
    if (
        rung == "halve_micro_batch"
        and "micro_batch" not in in_script
        and "micro_batch" in in_configs
    ):
        planned = _halve_in_configs(script, "job script", files, in_configs, in_script, knobs)
    elif rung == "activation_checkpointing":
        planned = _checkpointing_in_configs(script, "job script", files, cat)
    if planned is None or not planned.applicable:
        raise RungNotApplicable(planned.reason if planned else why)
    new_script = planned.changes[0].new
    copies = planned.changes[1:]
    changes = [
        f"{c.file}: a copy {c.new_file} with the change; the script points at it" for c in copies
    ]
    changes += [f"{k} -> {v}" for k, v in planned.values_after.items()]
    return Patch(
        rung,
        script,
        new_script,
        changes,
        list(planned.checks),
        files={c.new_file: c.new for c in copies},
        file_diffs=[c.view()["diff"] for c in copies],
    )
