"""A program that is a LightningCLI: `python main.py fit -c config.yaml --data.batch_size 8`.

The options are the classes' own parameters: `data` is the datamodule's `__init__` (given in the
code, or named by the config's `class_path` with its `init_args`), `trainer` Lightning's Trainer.
The value in force is the last of: the parameter's default, each `--config` file in order, each
`--section.key value` after it. Which parameter is the micro-batch is read from the datamodule's
own `train_dataloader`: the `batch_size=` of the loader it builds, traced to `self.X = X` in its
`__init__` (or `self.hparams.X`). Read from the files' ASTs and YAML, never run. Pure functions of
the texts handed in, but for `read` (the owner's read of a file)."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable
from typing import Any

import yaml

from runbook.jobfiles.source_check import nodes
from runbook.record import record

_CLI_NAMES = {"LightningCLI"}


@record
class CLIProgram:
    proof: str  # where the program runs LightningCLI
    run: bool  # it takes a subcommand (fit, validate, ...): not run=False
    datamodule: str | None  # the datamodule class the code gives it, by name
    model: str | None  # the model class the code gives it, by name


@record
class DataClass:
    """The datamodule's class as its source states it."""

    file: str
    name: str
    micro: str  # the __init__ parameter that is the train loader's batch_size
    proof: str  # `pair_loader.py:200 train_dataloader: DataLoader(batch_size=self.batch_size)...`
    default: int | None  # the parameter's default, where it is a whole number


def program(trees: list[tuple[str, ast.AST]]) -> CLIProgram | None:
    """A CLIProgram where the running program (`trees`, live) calls LightningCLI."""
    for name, tree in trees:
        for node in nodes(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            called = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if called not in _CLI_NAMES:
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            pos = list(node.args)
            model = kw.get("model_class", pos[0] if pos else None)
            data = kw.get("datamodule_class", pos[1] if len(pos) > 1 else None)
            run = kw.get("run")
            return CLIProgram(
                f"{name}:{node.lineno} runs LightningCLI",
                not (isinstance(run, ast.Constant) and run.value is False),
                data.id if isinstance(data, ast.Name) else None,
                model.id if isinstance(model, ast.Name) else None,
            )
    return None


def arguments(words: list[str], run: bool) -> tuple[list[str], dict[str, tuple[str, int]], str]:
    """(the config files, in order; {key: (value, index of the value's word)} of each
    `--section.key value`; '' or why the words are not read). With subcommands, only `fit` with
    its own `-c`/`--config` is read."""
    configs: list[str] = []
    over: dict[str, tuple[str, int]] = {}
    i = 0
    if run:
        if not words or words[0] != "fit":
            return [], {}, f"the subcommand is {words[0] if words else 'missing'!r}, not fit"
        i = 1
    while i < len(words):
        w = words[i]
        key, eq, value = w.partition("=")
        if not key.startswith("-"):
            return configs, over, f"the word {w!r} is not an option runbook reads"
        if not eq:
            if i + 1 >= len(words):
                return configs, over, f"{w} has no value"
            value, i = words[i + 1], i + 1
        if key in ("-c", "--config"):
            configs.append(value)
        else:
            over[key[2:]] = (value, i)
        i += 1
    return configs, over, ""


def merged(files: list[tuple[str, str]]) -> tuple[dict, dict[str, str]]:
    """The config files' YAML merged in order (a later mapping's keys over an earlier's), and
    where each dotted key was last set."""
    out: dict = {}
    at: dict[str, str] = {}

    def merge(base: dict, new: dict, prefix: str, name: str) -> None:
        for k, v in new.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict) and isinstance(base.get(k), dict) and "class_path" not in v:
                merge(base[k], v, key + ".", name)
            else:
                base[k] = v
                at[key] = name
                for sub in _keys(v, key + "."):
                    at[sub] = name

    for name, text in files:
        data = yaml.safe_load(text) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{name} is not a mapping")
        merge(out, data, "", name)
    return out, at


def _keys(v: Any, prefix: str) -> list[str]:
    if not isinstance(v, dict):
        return []
    return [
        k for key, sub in v.items() for k in [prefix + str(key), *_keys(sub, f"{prefix}{key}.")]
    ]


def dig(data: dict, key: str) -> Any:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _self_attr(node: ast.AST | None) -> str | None:
    """`self.X` or `self.hparams.X` (or `self.hparams["X"]`): X."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    if isinstance(node, ast.Attribute) and getattr(node.value, "attr", "") == "hparams":
        return node.attr
    if isinstance(node, ast.Subscript) and getattr(node.value, "attr", "") == "hparams":
        s = node.slice
        return s.value if isinstance(s, ast.Constant) and isinstance(s.value, str) else None
    return None


def data_class(tree: ast.AST, file: str, name: str) -> DataClass | str:
    """The datamodule `name` of `tree`: which __init__ parameter its train loader's batch_size
    is, or why that is not read."""
    cls = next((n for n in nodes(tree) if isinstance(n, ast.ClassDef) and n.name == name), None)
    if cls is None:
        return f"{file} defines no class {name}"
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    init, train = methods.get("__init__"), methods.get("train_dataloader")
    if init is None or train is None:
        return f"{name} ({file}) has no __init__ and train_dataloader of its own"
    found = _loader_batch(train, methods)
    if found is None:
        return f"{name}.train_dataloader ({file}:{train.lineno}) passes no one self.X as batch_size"
    attr, field, line = found
    params = [a.arg for a in init.args.args[1:]]
    source = attr if attr in params else None
    for n in nodes(init):  # `self.bs = batch_size`
        if isinstance(n, ast.Assign) and any(_self_attr(t) == attr for t in n.targets):
            source = n.value.id if isinstance(n.value, ast.Name) and n.value.id in params else None
    if source is None:
        return f"{name}.{attr} ({file}) is not one of __init__'s parameters"
    defaults = dict(
        zip(params[len(params) - len(init.args.defaults) :], init.args.defaults, strict=True)
    )
    d = defaults.get(source)
    value = d.value if isinstance(d, ast.Constant) and type(d.value) is int else None
    via = f"self.{attr}" + (f"'s {field}" if field else "")
    proof = f"{file}:{line} {name}.train_dataloader builds its loader with batch_size={via}, __init__'s {source}"
    if field:  # a field of a parameter (a dataclass of the loader's settings): no default read
        return DataClass(file, name, f"{source}.{field}", proof, None)
    return DataClass(file, name, source, proof, value)


def _batch_kw(fn: ast.FunctionDef) -> list[tuple[ast.AST, int]]:
    return [
        (k.value, call.lineno)
        for call in nodes(fn)
        if isinstance(call, ast.Call)
        for k in call.keywords
        if k.arg == "batch_size"
    ]


def _loader_batch(train: ast.FunctionDef, methods: dict) -> tuple[str, str | None, int] | None:
    """(X, None, line) where train_dataloader builds its loader with batch_size=self.X; (A, F,
    line) where it hands self.A to a method of its class that builds one with batch_size=P.F, P
    being the parameter self.A fills (Vocos's `_get_dataloder(self.train_config)`)."""
    loads = _batch_kw(train)
    attrs = {_self_attr(v) for v, _ in loads}
    if loads:
        one = attrs.pop() if len(attrs) == 1 else None
        return (one, None, loads[0][1]) if one is not None else None
    for call in nodes(train):
        if not isinstance(call, ast.Call):
            continue
        f = getattr(call, "func", None)
        helper = methods.get(f.attr) if isinstance(f, ast.Attribute) and _self_attr(f) else None
        if helper is None:
            continue
        params = [a.arg for a in helper.args.args[1:]]
        for value, line in _batch_kw(helper):
            owner = getattr(value, "value", None)
            if not (isinstance(value, ast.Attribute) and isinstance(owner, ast.Name)):
                continue
            if owner.id in params and params.index(owner.id) < len(call.args):
                attr = _self_attr(call.args[params.index(owner.id)])
                if attr is not None:
                    return attr, value.attr, line
    return None


def module_file(dotted: str) -> str:
    """`source.dataloader.pair_loader.ProteinPairDataModule` -> (`source/dataloader/pair_loader.py`)."""
    return posixpath.join(*dotted.split(".")[:-1]) + ".py"


def imported_from(tree: ast.AST, name: str) -> str | None:
    """The module `tree` imports `name` from (`from training.dataloaders.datamodule import X`)."""
    for n in nodes(tree):
        if isinstance(n, ast.ImportFrom) and n.module and any(a.name == name for a in n.names):
            return n.module
    return None


def optimization_is_manual(tree: ast.AST) -> int | None:
    """The line where a module sets `self.automatic_optimization = False` (Lightning then never
    accumulates on its own)."""
    for n in nodes(tree):
        off = isinstance(n, ast.Assign) and getattr(n.value, "value", None) is False
        if off and any(getattr(t, "attr", None) == "automatic_optimization" for t in n.targets):  # type: ignore[attr-defined]
            return getattr(n, "lineno", None)
    return None


def read_class(dotted: str, roots: list[str], read: Callable[[str], str | None]):
    """(file, text) of the module a dotted class path names, under the first of `roots` that
    holds it; None where none does."""
    rel = module_file(dotted)
    for root in roots:
        path = posixpath.normpath(posixpath.join(root, rel))
        text = read(path)
        if text is not None:
            return path, text
    return None


@record
class CLIJob:
    """What a LightningCLI job runs with, as far as runbook read it."""

    program: CLIProgram
    configs: list[str]  # the config files the job names, in order
    values: dict  # the configs merged
    at: dict[str, str]  # where each dotted key was last set
    over: dict[str, tuple[str, int]]  # the job's `--section.key value` words
    data: DataClass | None
    prefix: str  # `data.` or `data.init_args.`: where the datamodule's parameters are keyed
    manual: str | None  # where the model turns automatic optimization off
    why: str  # what was not read ('' when all was)


def read_job(
    cli: CLIProgram,
    words: list[str],
    trees: list[tuple[str, ast.AST]],
    roots: list[str],
    read: Callable[[str], str | None],
) -> CLIJob:
    """The LightningCLI job: its words after the entry file, the program's trees (live), the
    folders a dotted class path is looked up under (the entry's, the job's), `read` as its owner."""
    configs, over, why = arguments(words, cli.run)
    job = CLIJob(cli, configs, {}, {}, over, None, "data.", None, why)
    if why:
        return job
    texts = []
    for c in configs:
        text = read(c) if "$" not in c and not c.startswith("/") and ".." not in c else None
        if text is None:
            job.why = f"the config {c} could not be read"
            return job
        texts.append((c, text))
    try:
        job.values, job.at = merged(texts)
    except (yaml.YAMLError, ValueError) as e:
        job.why = f"a config is not YAML runbook reads ({str(e).splitlines()[0]})"
        return job
    found = _data_class(cli, job, trees, roots, read)
    if isinstance(found, str):
        job.why = found
        return job
    job.data = found
    job.manual = _manual(cli, job, trees, roots, read)
    return job


def _data_class(cli, job: CLIJob, trees, roots, read) -> DataClass | str:
    path = over_path = job.over.get("data", (None,))[0] or dig(job.values, "data.class_path")
    if isinstance(path, str) and "." in path:
        job.prefix = "data.init_args."
        got = read_class(path, roots, read)
        if got is None:
            return f"the datamodule {path} is not a file of the job's tree"
        try:
            tree = ast.parse(got[1])
        except SyntaxError:
            return f"{got[0]} is not Python runbook parses"
        return data_class(tree, got[0], path.rsplit(".", 1)[1])
    if over_path is not None or cli.datamodule is None:
        return "the datamodule is neither given in the code nor named by a class_path"
    for name, tree in trees:
        if any(isinstance(n, ast.ClassDef) and n.name == cli.datamodule for n in nodes(tree)):
            return data_class(tree, name, cli.datamodule)
    for _, tree in trees:
        module = imported_from(tree, cli.datamodule)
        if module:
            got = read_class(f"{module}.{cli.datamodule}", roots, read)
            if got is not None:
                try:
                    return data_class(ast.parse(got[1]), got[0], cli.datamodule)
                except SyntaxError:
                    break
    return f"the datamodule {cli.datamodule} was not found in the job's tree"


def _manual(cli, job: CLIJob, trees, roots, read) -> str | None:
    """Where the model (its class_path's module, or the program's own files) turns automatic
    optimization off; '?' where the model's module could not be read."""
    path = dig(job.values, "model.class_path")
    found = list(trees)
    if isinstance(path, str) and "." in path:
        got = read_class(path, roots, read)
        try:
            found.append((got[0], ast.parse(got[1])))  # type: ignore[index]
        except (TypeError, SyntaxError):
            return f"? (the model {path} could not be read)"
    for name, tree in found:
        line = optimization_is_manual(tree)
        if line is not None:
            return f"{name}:{line}"
    return None
