"""The options the job's own program takes, read from its source without running it: the entry
file its script runs (`python train.py`, `torchrun ... train.py`, `accelerate launch train.py`)
and the modules of the job's tree it imports. A rung adds a flag to the training command only
where the program is known to take it; where its source cannot be read, that is said.

What counts as an option is what a parser declares (a check is a proof, issue 54): argparse's
`add_argument("--x", ...)`, click's and typer's `option("--x")`; an `HfArgumentParser` (or TRL's
`TrlParser`) that parses the command line (`parse_args_into_dataclasses`) takes the fields of the
dataclasses it is handed, and TrainingArguments' documented fields where one of them is
TrainingArguments (or a TRL config, or a class built on one); `fire.Fire(fn)` takes `fn`'s
parameters, and the program's dataclasses' fields only where `fn` hands its **kwargs on. The
name TrainingArguments appearing in the code proves nothing: a program may build it itself.

Each option's default, where the source states it as a whole number (`default=8`, a dataclass
field's `= 8` or `field(default=8)`, TrainingArguments' documented defaults), is kept with where
it was read: a rung that finds no knob in the script or its configs changes the batch the program
runs at by default (`--batch_size 4` added where the program's default is 8)."""

from __future__ import annotations

import ast
import copy
import posixpath
import re
from dataclasses import field
from pathlib import Path
from typing import Any

from runbook.jobfiles import bash, lightning_cli, mmconfig, yacs_defaults
from runbook.jobfiles.source_check import code_text, job_files, named_entry_files, nodes
from runbook.record import record

# TrainingArguments' documented defaults for the knobs a rung changes (transformers'
# TrainingArguments reference: per_device_train_batch_size and per_device_eval_batch_size 8,
# gradient_accumulation_steps 1); a program's own dataclass field of the same name wins.
HF_DEFAULTS = {
    "--per_device_train_batch_size": 8,
    "--per_device_eval_batch_size": 8,
    "--gradient_accumulation_steps": 1,
}
# TrainingArguments fields a rung may set (transformers' documented arguments).
HF_TRAINING_FLAGS = frozenset(
    {
        "--per_device_train_batch_size",
        "--per_device_eval_batch_size",
        "--gradient_accumulation_steps",
        "--eval_accumulation_steps",
        "--gradient_checkpointing",
    }
)
_HF_NAMES = {"HfArgumentParser", "TrainingArguments", "Seq2SeqTrainingArguments", "TrlParser"}
_HF_NAMES |= {"SFTConfig", "DPOConfig", "GRPOConfig", "RewardConfig", "ORPOConfig", "KTOConfig"}
_OPTION_CALLS = {"add_argument", "option", "Option"}


@record(frozen=True)
class Default:
    """An option's default as the program's source states it."""

    flag: str  # the option string, as the program defines it
    value: int
    where: str  # `train.py:12 (argparse default)`, `TrainingArguments (documented default)`
    aliases: tuple[str, ...] = ()  # every option string of the same option


@record(frozen=True)
class Role:
    """What an option is, in the program's own words: its help text says so."""

    kind: str  # micro_batch, grad_accum or global_batch
    flags: tuple[str, ...]  # every option string of the option
    help: str  # the help text, as the program states it (or the code that proves it)
    where: str  # `main.py:51`
    said_by: str = "its help"  # or "its code": what the program does with the option


@record(frozen=True)
class Constant:
    """A module-level whole number of the entry file that the program divides its batch by to
    derive its accumulation (TinyLlama's `micro_batch_size = 8`, accelerate's example's
    `MAX_GPU_BATCH_SIZE = 16`): the micro-batch, with no option to set it."""

    name: str
    value: int
    file: str  # the entry file, as the job's script names it
    line: int
    col: int  # the value's place on its line
    end_col: int
    proof: str  # `train.py:51: gradient_accumulation_steps = batch_size // micro_batch_size`


@record
class ProgramOptions:
    entry: str | None  # the entry file the script runs, as the script names it
    flags: set[str] | None = None  # None: not known (the source was not read)
    why: str = ""  # why the options are not known, or where they came from
    defaults: dict[str, Default] = field(default_factory=dict)  # by each option string
    roles: list[Role] = field(default_factory=list)  # options whose help says what they are
    constants: list[Constant] = field(default_factory=list)  # micro-batches with no option
    text: str = ""  # the entry file's text, for a copy of it
    configurator: Any = None  # jobfiles.configurator.Configurator: globals set by --key=value
    mm: Any = None  # jobfiles.mmconfig.MMProgram: a Python config under --cfg-options
    mm_config: Any = None  # jobfiles.mmconfig.MMConfig: the config the job names, merged
    cli: Any = None  # jobfiles.lightning_cli.CLIJob: a LightningCLI and what the job gives it
    hydra: str = ""  # where the entry's main is a Hydra app (`@hydra.main`, NeMo's hydra_runner)

    def proven(self, kind: str) -> list[Role]:
        return [r for r in self.roles if r.kind == kind]

    def default_of(self, names) -> Default | None:
        """The default of the first option the program defines under one of `names` (`-` and
        `_` alike inside a name: `--batch-size` is `--batch_size`)."""
        want = [_norm(n) for n in names if n.startswith("-")]
        by_norm = {_norm(f): d for f, d in self.defaults.items()}
        return next((by_norm[w] for w in want if w in by_norm), None)

    def takes(self, names) -> list[str]:
        """The option strings of the program among `names`, `-`/`_` alike, as it spells them."""
        own = {_norm(f): f for f in self.flags or ()}
        return [own[_norm(n)] for n in names if n.startswith("-") and _norm(n) in own]


def _norm(flag: str) -> str:
    """`--batch-size` and `--batch_size` alike; `-b` stays apart from `--b`."""
    lead = "--" if flag.startswith("--") else "-"
    return lead + flag.lstrip("-").replace("-", "_")


def _int_const(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _call_name(node: ast.Call) -> str:
    fn = node.func
    return fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")


def _option_strings(node: ast.Call) -> tuple[str, ...]:
    """The option strings an option call declares (`add_argument("--bs", "--batch-size")`)."""
    return tuple(
        a.value
        for a in node.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
    )


def option_defaults(tree: ast.AST, name: str) -> dict[str, Default]:
    """The whole-number defaults of the argparse/click/typer options of one parsed file, by
    each of the option's strings: a pure function of its AST."""
    out: dict[str, Default] = {}
    for node in nodes(tree):
        if not isinstance(node, ast.Call) or _call_name(node) not in _OPTION_CALLS:
            continue
        strings = _option_strings(node)
        value = next((_int_const(k.value) for k in node.keywords if k.arg == "default"), None)
        if strings and value is not None:
            kind = "argparse" if _call_name(node) == "add_argument" else "click/typer option"
            d = Default(strings[0], value, f"{name}:{node.lineno} ({kind} default)", strings)
            out.update({s: d for s in strings})
    return out


# An option's role from its help text (issue 54: the program's own flags, not only a global list
# of spellings). A batch size is the micro-batch only where its help says it is each GPU's (or
# device's, process's); one of all GPUs is the global batch; accumulation is named as such.
# ConvNeXt: --batch_size 'Per GPU batch size', --update_freq 'gradient accumulation steps'; MAE:
# --batch_size 'Batch size per GPU (effective batch size is ...)', --accum_iter 'Accumulate
# gradient iterations ...'; pytorch/examples' imagenet: -b 'this is the total batch size of all
# GPUs on the current node'.
_BATCH_NAME = re.compile(
    r"(?i)^-{1,2}(?:b|bs|batch[-_]?size(?:[-_]per[-_](?:gpu|device))?|"
    r"(?:train|training)[-_]batch[-_]size)$"
)
PER_GPU = re.compile(
    r"(?i)\b(?:per|each|one|single|a)[- ](?:gpu|device|process|rank|card|worker|core)\b|"
    r"\bper[- ]gpu\b|\bmicro[- ]?batch"
)
_ALL_GPUS = re.compile(r"(?i)\btotal batch size\b|\ball (?:the )?gpus\b|\bglobal batch\b")
_ACCUM_HELP = re.compile(
    r"(?i)\bgrad(?:ient)?s? accumulation\b|\baccumulat\w* (?:the )?grad(?:ient)?s?\b|"
    r"\baccumulation steps\b"
)


# A help that mentions accumulation is not one that says it is the accumulation: timm's
# --train-batches-per-epoch 'Fixed loader batches (before gradient accumulation) per epoch'.
_NOT_ACCUM = re.compile(
    r"(?i)\b(?:before|after|without|per|including|excluding) gradient accumulation"
)
_ACCUM_FLAG = re.compile(r"(?i)acc|update|freq")


def _help(node: ast.Call) -> str:
    h = next((k.value for k in node.keywords if k.arg == "help"), None)
    if isinstance(h, ast.Constant) and isinstance(h.value, str):
        return " ".join(h.value.split())
    return ""


def option_roles(tree: ast.AST, name: str) -> list[Role]:
    """The options of one parsed file whose help text says they are the micro-batch, the
    accumulation or the global batch: a pure function of its AST."""
    out = []
    for node in nodes(tree):
        if not isinstance(node, ast.Call) or _call_name(node) != "add_argument":
            continue
        strings, text = _option_strings(node), _help(node)
        if not strings or not text:
            continue
        where = f"{name}:{node.lineno}"
        batch = any(_BATCH_NAME.match(f) for f in strings)
        if batch and PER_GPU.search(text) and not _ALL_GPUS.search(text.split("(")[0]):
            out.append(Role("micro_batch", strings, text, where))
        elif batch and _ALL_GPUS.search(text):
            out.append(Role("global_batch", strings, text, where))
        elif (
            _ACCUM_HELP.search(text)
            and not _NOT_ACCUM.search(text)
            and _ACCUM_FLAG.search(" ".join(strings))
        ):
            out.append(Role("grad_accum", strings, text, where))
    return out


# What the program's code does with an option proves its role too (issue 54, a check is a proof):
# - `DataLoader(..., batch_size=args.train_batch_size)` (or a loader builder: timm's
#   create_loader): each process's loader batch, the micro-batch, unless the program rewrites
#   that option (imagenet divides its -b by the GPUs);
# - `gradient_accumulation_steps = batch_size // micro_batch_size` (alpaca-lora, TinyLlama): the
#   dividend is the global batch, the divisor the micro-batch, and the accumulation follows.
ACCUM_NAME = re.compile(r"(?i)^(?:grad\w*accum\w*|accum\w*|update_freq)$")


_HANDED = {
    "per_device_train_batch_size": "micro_batch",
    "train_micro_batch_size_per_gpu": "micro_batch",
    "gradient_accumulation_steps": "grad_accum",
}


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def code_roles(tree: ast.AST, name: str, options: dict[str, tuple[str, ...]]) -> list[Role]:
    """Roles of the options (`options`: each one's flags by its name in the code) proven by what
    the code does with them: a pure function of one parsed file."""
    out: list[Role] = []
    rewritten = set()
    for node in nodes(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Attribute):
                    rewritten.add(t.attr)
    evaluating = {id(c) for c, _ in _eval_loaders(tree)}
    for node in nodes(tree):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and _is_loader(node) and id(node) not in evaluating:
            for k in node.keywords:
                key = _named(k.value) if isinstance(k.value, ast.Attribute) else None
                if k.arg == "batch_size" and key in options and key not in rewritten:
                    code = f"DataLoader(..., batch_size=...{key}): each process's loader batch"
                    out.append(Role("micro_batch", options[key], code, where, "its code"))
        if isinstance(node, ast.Call):
            # Handed on under a name that says what it is: TrainingArguments(
            # per_device_train_batch_size=args.batch_size), a DeepSpeed config's
            # train_micro_batch_size_per_gpu (starcoder's finetune.py).
            for k in node.keywords:
                key = _named(k.value) if isinstance(k.value, ast.Attribute) else None
                kind = _HANDED.get(k.arg or "")
                if kind and key in options and key not in rewritten:
                    code = f"{k.arg}=...{key}"
                    out.append(Role(kind, options[key], code, where, "its code"))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
            target = _named(node.targets[0])
            v = node.value
            if target and ACCUM_NAME.match(target) and isinstance(v.op, (ast.FloorDiv, ast.Div)):
                a, b = _named(v.left), _named(v.right)
                code = f"{target} = {a} // {b}: the accumulation follows from them"
                if a in options:
                    out.append(Role("global_batch", options[a], code, where, "its code"))
                if b in options:
                    out.append(Role("micro_batch", options[b], code, where, "its code"))
    return out


# A loader built for evaluation (issue 64): its assignment, its dataset or the function that
# builds it is named for validation, evaluation or testing (`val_loader = DataLoader(val_set, ...)`,
# Lightning's `def val_dataloader(self)`). Its batch is the evaluation's, never the micro-batch.
_EVAL_WORD = re.compile(
    r"(?i)(?:^|_|\.)(?:val|valid|validation|eval|evaluation|test|testing|dev|holdout)"
    r"(?=$|_|\d|loader|set|ds|dl|data)"
)


def _is_loader(node: ast.Call) -> bool:
    return _call_name(node).lower().endswith("loader")


def _eval_loaders(tree: ast.AST) -> list[tuple[ast.Call, str]]:
    """Each loader call of one parsed file built for evaluation, with the code that says so
    (`val_loader = DataLoader(...)`, `DataLoader(val_set, ...)`, `DataLoader(...) in
    val_dataloader()`)."""
    out: list[tuple[ast.Call, str]] = []

    def named(call: ast.Call, around: list[str]) -> str | None:
        data = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "dataset"), None)  # fmt: skip
        loader = _call_name(call)
        size = next((code_text(k.value)[:80] for k in call.keywords if k.arg == "batch_size"), "")
        said: list[tuple[str | None, str]] = [
            (t, f"{{}} = {loader}(..., batch_size={size})") for t in around[1:]
        ]
        said += [
            (_expr_name(data), f"{loader}({{}}, ..., batch_size={size})"),
            (around[0], f"{loader}(..., batch_size={size}) in {{}}()"),
        ]
        return next((how.format(t) for t, how in said if t and _EVAL_WORD.search(t)), None)

    def walk(node: ast.AST, around: list[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            around = [node.name]  # the innermost function's name; an assignment's target below
        for child in ast.iter_child_nodes(node):
            here = around
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and child is node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                here = [*around, *(_expr_name(t) or "" for t in targets)]
            if isinstance(child, ast.Call) and _is_loader(child):
                why = named(child, here)
                if why is not None:
                    out.append((child, why))
            walk(child, here)

    walk(tree, [""])
    return out


def _expr_name(node: ast.AST | None) -> str | None:
    """`val_loader`, `self.val_set` -> their dotted text; None for anything else."""
    return code_text(node) if isinstance(node, (ast.Name, ast.Attribute)) else None


def eval_loader_roles(tree: ast.AST, name: str, options: dict[str, tuple[str, ...]]) -> list[Role]:
    """The options an evaluation's loader takes its batch from (`DataLoader(val_set,
    batch_size=args.batch_size)`, or `args.batch_size * 2`): Role `eval_batch`, the loader's
    line and what names it an evaluation's. Where the same option is the training loader's
    batch, an evaluation OOM is the micro-batch's to halve (planning.ladder)."""
    out: list[Role] = []
    for call, why in _eval_loaders(tree):
        size = next((k.value for k in call.keywords if k.arg == "batch_size"), None)
        if size is None:
            continue
        read = {_named(n) for n in ast.walk(size) if isinstance(n, (ast.Attribute, ast.Name))}
        for key in sorted(k for k in read if k in options):
            out.append(Role("eval_batch", options[key], why, f"{name}:{call.lineno}", "its code"))
    return out


def batch_constants(tree: ast.AST, name: str) -> list[Constant]:
    """The entry file's module-level whole numbers named for a batch that an accumulation is
    derived by dividing by (`ACC = X // C`): each is the micro-batch the program runs at."""
    module = getattr(tree, "body", [])
    consts = {}
    for node in module:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _int_const(node.value) is not None
            and node.value.end_col_offset is not None
        ):
            consts[node.targets[0].id] = node
    out = []
    for node in nodes(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
            target, v = _named(node.targets[0]), node.value
            divisor = _named(v.right) if isinstance(v.right, ast.Name) else None
            if not (target and ACCUM_NAME.match(target) and isinstance(v.op, ast.FloorDiv)):
                continue
            if divisor in consts and "batch" in divisor.lower():
                c = consts[divisor]
                proof = f"{name}:{node.lineno}: {target} = {_named(v.left)} // {divisor}"
                value = c.value
                out.append(
                    Constant(
                        divisor,
                        _int_const(value) or 0,
                        name,
                        value.lineno,
                        value.col_offset,
                        value.end_col_offset or 0,
                        proof,
                    )  # fmt: skip
                )
    return out


def _dests(tree: ast.AST) -> dict[str, tuple[str, ...]]:
    """Each argparse option's name in the code (its dest: `--batch-size` is args.batch_size)."""
    out = {}
    for node in nodes(tree):
        if isinstance(node, ast.Call) and _call_name(node) == "add_argument":
            strings = _option_strings(node)
            long = next((x for x in strings if x.startswith("--")), None)
            dest = next((k.value.value for k in node.keywords if k.arg == "dest"
                         and isinstance(k.value, ast.Constant)), None)  # fmt: skip
            if dest is not None:
                out[str(dest)] = strings
            elif long is not None:
                out[long.lstrip("-").replace("-", "_")] = strings
    return out


# The classes whose fields are TrainingArguments' (and the TRL configs built on them).
_HF_ARGS = _HF_NAMES - {"HfArgumentParser", "TrlParser"}
# An HfArgumentParser that reads the command line (not only a YAML or JSON file, or a dict).
_HF_CLI = {"parse_args_into_dataclasses", "parse_args_and_config"}


@record
class Found:
    """What one parsed file says of the options its program takes (a pure function of its AST)."""

    flags: set[str] = field(default_factory=set)  # argparse/click/typer option strings
    parsed: set[str] = field(default_factory=set)  # classes handed to an HfArgumentParser
    hf_cli: bool = False  # an HfArgumentParser parses the command line here
    hf_subclasses: set[str] = field(default_factory=set)  # local classes on TrainingArguments
    fired: set[str] = field(default_factory=set)  # functions given to fire.Fire
    looped: set[str] = field(default_factory=set)  # dataclasses whose fields a loop adds


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Methods Python calls without naming them: a parser built in one is live with its class.
_IMPLICIT = re.compile(r"^__\w+__$|^forward$")


def _top(body: list[ast.stmt]) -> list[ast.AST]:
    """What runs when a body runs: its statements but the functions it defines (their
    decorators and defaults do run), a class's own body included."""
    out: list[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, _DEFS):
            kw = [d for d in stmt.args.kw_defaults if d is not None]
            out += [*stmt.decorator_list, *stmt.args.defaults, *kw]
        elif isinstance(stmt, ast.ClassDef):
            out += [*stmt.decorator_list, *stmt.bases, *_top(stmt.body)]
        else:
            out.append(stmt)
    return [n for n in out if n is not None]


def live_trees(trees: list[tuple[str, ast.AST]]) -> list[tuple[str, ast.AST]]:
    """The job's files without the functions nothing that runs refers to (issue 54: a flag is
    taken only where a parser that runs declares it; a parser in a function never called
    proves nothing). What runs: each file's top level, then every function named by what runs
    (called, or handed on: `fire.Fire(main)`), until nothing more is named. Copies: the parsed
    trees stay as read."""
    defs: dict[str, list[ast.AST]] = {}
    for _, t in trees:
        for node in nodes(t):
            if isinstance(node, _DEFS):
                defs.setdefault(node.name, []).append(node)
    live: set[int] = set()
    todo: list[ast.AST] = [n for _, t in trees for n in _top(getattr(t, "body", []))]
    todo += [d for name, ds in defs.items() if _IMPLICIT.match(name) for d in ds]
    while todo:
        node = todo.pop()
        if isinstance(node, _DEFS):
            if id(node) in live:
                continue
            live.add(id(node))
            todo += node.body
            continue
        for sub in ast.walk(node):
            name = sub.id if isinstance(sub, ast.Name) else getattr(sub, "attr", None)
            for d in defs.get(name or "", ()):
                if id(d) not in live:
                    todo.append(d)
    dead = {id(d) for ds in defs.values() for d in ds if id(d) not in live}
    if not dead:
        return trees
    out = []
    for name, t in trees:
        marks = {
            (d.lineno, d.col_offset) for d in nodes(t) if isinstance(d, _DEFS) and id(d) in dead
        }
        out.append((name, _Prune(marks).visit(copy.deepcopy(t)) if marks else t))
    return out


class _Prune(ast.NodeTransformer):
    """A copy of a tree without the functions at `marks` (line, column)."""

    def __init__(self, marks: set[tuple[int, int]]):
        self.marks = marks

    def generic_visit(self, node):
        for field_name, value in ast.iter_fields(node):
            if isinstance(value, list):
                kept = [
                    v
                    for v in value
                    if not (isinstance(v, _DEFS) and (v.lineno, v.col_offset) in self.marks)
                ]
                if len(kept) != len(value):
                    setattr(node, field_name, kept or [ast.Pass()])
        return super().generic_visit(node)


def options_in(tree: ast.AST) -> Found:
    """The options one parsed file declares. A flag counts only where a parser declares it:
    `TrainingArguments` named in the code is no parser of `--per_device_train_batch_size`
    (issue 54: a program that built TrainingArguments itself and parsed only `--model`)."""
    out = Found()
    for node in nodes(tree):
        if isinstance(node, ast.ClassDef) and any(
            getattr(b, "id", getattr(b, "attr", "")) in _HF_ARGS for b in node.bases
        ):
            out.hf_subclasses.add(node.name)
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in _OPTION_CALLS:
            out.flags.update(_option_strings(node))
        if name == "Fire" and node.args and isinstance(node.args[0], ast.Name):
            out.fired.add(node.args[0].id)
        if name in ("HfArgumentParser", "TrlParser") and node.args:
            first = node.args[0]
            items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
            out.parsed |= {
                getattr(i, "id", getattr(i, "attr", ""))
                for i in items
                if not isinstance(i, ast.Starred)
            }
        if name in _HF_CLI:
            out.hf_cli = True
    out.looped = _field_loops(tree)
    return out


def _field_loops(tree: ast.AST) -> set[str]:
    """Dataclasses a parser takes field by field: `for f in fields(Args):
    parser.add_argument(f"--{f.name}", ...)` adds one option per field of Args."""
    out = set()
    for node in nodes(tree):
        it = node.iter if isinstance(node, ast.For) else None
        if not (isinstance(it, ast.Call) and _call_name(it) == "fields" and it.args):
            continue
        cls = getattr(it.args[0], "id", None)
        var = getattr(getattr(node, "target", None), "id", None)
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and _call_name(call) in _OPTION_CALLS):
                continue
            first = call.args[0] if call.args else None
            if isinstance(first, ast.JoinedStr) and cls and var:
                text = ast.unparse(first)
                if "--" in text and f"{{{var}.name}}" in text:
                    out.add(cls)
    return out


def fired_options(tree: ast.AST, functions: set[str], name: str):
    """`fire.Fire(fn)`'s options: `--param` for each parameter of `fn` (with its whole-number
    default), and whether `fn` hands its **kwargs on (llama-recipes' `update_config(train_config,
    **kwargs)`: then the program's dataclasses' fields are options too)."""
    flags: dict[str, Default | None] = {}
    forwards = False
    for node in nodes(tree):
        if not isinstance(node, ast.FunctionDef) or node.name not in functions:
            continue
        args = node.args.args + node.args.kwonlyargs
        values = [None] * (len(node.args.args) - len(node.args.defaults)) + list(node.args.defaults)
        values += list(node.args.kw_defaults)
        for a, v in zip(args, values, strict=False):
            n = _int_const(v)
            flag = f"--{a.arg}"
            where = f"{name}:{node.lineno} (fire: {node.name}'s parameter {a.arg})"
            flags[flag] = Default(flag, n, where) if n is not None else None
        if node.args.kwarg is not None:
            forwards |= any(
                isinstance(c, ast.Call) and any(k.arg is None for k in c.keywords)
                for c in ast.walk(node)
            )
    return flags, forwards


ANY_DATACLASS = "*"


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if getattr(f, "id", None) == "dataclass" or getattr(f, "attr", None) == "dataclass":
            return True
    return False


def _dataclass_fields(tree: ast.AST, names: set[str], name: str) -> dict[str, int | None]:
    """`--field` of every field of the named dataclasses, with its whole-number default (`= 8`
    or `field(default=8)`; None: another default or none)."""
    out: dict[str, int | None] = {}
    for node in nodes(tree):
        if isinstance(node, ast.ClassDef) and (
            node.name in names or ANY_DATACLASS in names and _is_dataclass(node)
        ):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    v = stmt.value
                    if isinstance(v, ast.Call) and getattr(v.func, "id", "") == "field":
                        v = next((k.value for k in v.keywords if k.arg == "default"), None)
                    out[f"--{stmt.target.id}"] = _int_const(v)
    return out


def program_options(
    script: str, workdir: str | Path, args: list[str] | None = None
) -> ProgramOptions:
    """The options of the program the job script runs: its first entry file and the modules of
    the job's tree it imports (source_check.job_files), read where the job runs (its working
    folder, over the shared filesystem, as configs and checkpoints are)."""
    entries = named_entry_files(script)
    if not entries:
        return ProgramOptions(None, None, "the job script names no Python file it runs")
    entry = entries[0]
    notes: list[str] = []
    files = list(job_files(script, workdir, notes, entries=[entry]))
    first = files[0] if files and files[0].entry else None
    if first is None or first.tree is None:
        why = "; ".join(notes) if first is None else f"{first.path} is not Python runbook parses"
        return ProgramOptions(entry, None, why or f"{entry} could not be read")
    trees = live_trees([(f.name, f.tree) for f in files if f.tree is not None])
    found = [options_in(t) for _, t in trees]
    flags: set[str] = set().union(*(f.flags for f in found))
    defaults: dict[str, Default] = {}
    roles: list[Role] = []
    for name, t in trees:
        defaults |= {k: v for k, v in option_defaults(t, name).items() if k not in defaults}
        roles += option_roles(t, name)
    # Hugging Face's arguments are options only where an HfArgumentParser over a
    # TrainingArguments class parses the command line.
    training = _HF_ARGS.union(*(f.hf_subclasses for f in found))
    cli = any(f.hf_cli for f in found)
    parsed = set().union(*(f.parsed for f in found)) if cli else set()
    hf = bool(parsed & training)
    handed = set(parsed)  # their own fields (a subclass's default wins over the documented one)
    handed |= set().union(*(f.looped for f in found))
    fired = set().union(*(f.fired for f in found))
    for name, t in trees if fired else ():
        own_flags, forwards = fired_options(t, fired, name)
        flags |= set(own_flags)
        defaults |= {k: v for k, v in own_flags.items() if v is not None and k not in defaults}
        if forwards:
            handed.add(ANY_DATACLASS)
    options = {d: f for _, t in trees for d, f in _dests(t).items()}
    options |= {f[2:]: (f,) for f in flags if f.startswith("--") and f[2:] not in options}
    said = {f for r in roles for f in r.flags}
    for name, t in trees:
        roles += [r for r in code_roles(t, name, options) if not said & set(r.flags)]
        roles += eval_loader_roles(t, name, options)
    whole = [(f.name, f.tree) for f in files if f.tree is not None]
    defaults |= _yacs(script, workdir, entry, trees, whole, options, defaults)
    own: dict[str, int | None] = {}
    for name, t in trees:
        for flag, value in _dataclass_fields(t, handed, name).items():
            own.setdefault(flag, value)
            if value is not None and flag not in defaults:
                defaults[flag] = Default(flag, value, f"{name} (dataclass field {flag[2:]})")
    flags |= set(own)
    if hf:
        flags |= HF_TRAINING_FLAGS
        for flag, value in HF_DEFAULTS.items():
            if flag not in own and flag not in defaults:  # the program's own field wins
                defaults[flag] = Default(flag, value, "TrainingArguments (documented default)")
    how = f"read from {entry}" + (
        f" and {len(files) - 1} {'module' if len(files) == 2 else 'modules'} it imports"
        if len(files) > 1
        else ""
    )
    why = how + (" (Hugging Face arguments)" if hf else "")
    constants = batch_constants(first.tree, entry)
    conf = _configurator(script, workdir, entry, first)
    mm = mmconfig.program(trees, options)
    mm_config = _mm_config(script, workdir, entry, mm, args) if mm is not None else None
    return ProgramOptions(entry, flags, why, defaults, roles, constants, first.text, conf,
                          mm, mm_config, _lightning(script, workdir, entry, trees, files),
                          _hydra_app(first.tree, entry))  # fmt: skip


def _hydra_app(tree: ast.AST, entry: str) -> str:
    """`train.py:12` where a function of the entry file is decorated as a Hydra app (its
    `--cfg job` prints the configuration in force with the command line's overrides)."""
    for node in nodes(tree):
        for d in getattr(node, "decorator_list", []):
            f = d.func if isinstance(d, ast.Call) else d
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            owner = getattr(getattr(f, "value", None), "id", "")
            if (name == "main" and owner == "hydra") or name == "hydra_runner":
                return f"{entry}:{getattr(node, 'lineno', 0)}"
    return ""


def _yacs(script: str, workdir, entry: str, trees, whole, options, defaults) -> dict:
    """Defaults of options that have none of their own but are routed into a yacs config
    (jobfiles.yacs_defaults): the value in force where the job does not give the option."""
    routed = yacs_defaults.routes(trees, set(options))
    yd = yacs_defaults.defaults(whole) if routed else {}
    hit = bash.entry_word(script, entry)
    words = bash.words_after(script, hit.end) if hit is not None else []
    files = [words[i + 1] for i, w in enumerate(words[:-1]) if w in _CONFIG_FLAGS]
    files = [f for f in files if f.endswith((".yaml", ".yml"))]
    out: dict[str, Default] = {}
    for dest, (key, at) in routed.items():
        flags = options.get(dest, ())
        if key not in yd or not flags or any(f in defaults for f in flags) or len(files) > 1:
            continue
        value, where = yd[key]
        if files:
            got, in_file, why = yacs_defaults.in_yaml(key, files[0], _reader(workdir))
            if why or (in_file and type(got) is not int):
                continue
            if in_file:
                value, where = got, f"{in_file}, over {where}"  # type: ignore[assignment]
        said = yacs_defaults.opts_value(words, key)
        if said is not None:
            if not said.isdigit():
                continue
            value, where = int(said), "the job's --opts"
        unset = f", which {files[0]} does not set" if files and where == yd[key][1] else ""
        where = f"{where} (yacs {key}{unset}; {at} sets it from {flags[-1]} only when given)"
        out |= {f: Default(f, value, where, tuple(flags)) for f in flags}
    return out


# The options a yacs program's config file is given by.
_CONFIG_FLAGS = ("--cfg", "--config-file", "--config", "--config_file")


def _lightning(script: str, workdir, entry: str, trees, files):
    """The LightningCLI job (jobfiles.lightning_cli.CLIJob) where the running program (`trees`,
    live) is one. Its classes are read whole (`files`): Lightning calls their methods, the
    program does not."""
    found = lightning_cli.program(trees)
    if found is None:
        return None
    hit = bash.entry_word(script, entry)
    words = bash.words_after(script, hit.end) if hit is not None else []
    roots = [posixpath.dirname(entry) or ".", "."]
    whole = [(f.name, f.tree) for f in files if f.tree is not None]
    return lightning_cli.read_job(found, words, whole, roots, _reader(workdir))


def _reader(workdir):
    from runbook.jobfiles import owner_read

    def read(name: str) -> str | None:
        try:
            return owner_read.read_text(Path(workdir) / name, limit=1 << 20)
        except (OSError, UnicodeDecodeError):
            return None

    return read


def _mm_config(script: str, workdir, entry: str, mm, args):
    """The config an OpenMMLab program's first argument names: the first bare word after its
    entry file, its variables resolved as the job's script and arguments set them."""
    from runbook.jobfiles import bash
    from runbook.jobfiles.configs import resolve_word

    hit = bash.word(script, entry)
    words = bash.words_after(script, hit.end) if hit is not None else []
    first = next((w for w in words if not w.startswith("-")), None)
    path = resolve_word(script, first, args) if first else None
    if path is None or not path.endswith(".py") or ".." in path.split("/") or path[:1] == "/":
        return mmconfig.MMConfig(
            str(first),
            [],
            mmconfig.Unknown(f"the config word {first!r} is not a path runbook reads"),
        )
    return mmconfig.read(path, _reader(workdir))


def _configurator(script: str, workdir, entry: str, first):
    from runbook.jobfiles import bash, configurator

    read = _reader(workdir)
    hit = bash.word(script, entry)
    words = bash.words_after(script, hit.end) if hit is not None else []
    return configurator.read(entry, first.text, first.tree, words, read)
