"""An OpenMMLab program's Python config: the program loads the file its first argument names
(`Config.fromfile(args.config)`) and merges `--cfg-options key=value` over it
(`cfg.merge_from_dict(args.cfg_options)`), the shape of mmpretrain's, mmpose's and mmaction2's
tools/train.py under their tools/dist_train.sh.

A config file is Python that only assigns: `_base_` names the files it builds on (read first,
in order, each merged into the one before), then its own dicts merge key by key into theirs
(a dict with `_delete_=True` replaces instead). Read from the files' ASTs, never run: a value
written as anything but literals, `dict(...)` and the file's own names is unknown, and a file
that does more than assign (new-style `with read_base():`, loops, calls at top level) is not
read at all. A pure function of the texts handed in, but for `read` (the owner's read)."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable
from typing import Any

from runbook.jobfiles.source_check import nodes
from runbook.record import record

_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
}


class Unknown:
    """A value runbook did not read, with why."""

    def __init__(self, why: str):
        self.why = why

    def __repr__(self) -> str:
        return f"unknown ({self.why})"


class _Dict(dict):
    """A config dict that remembers where each of its keys was set (`file:line`)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.at: dict[str, str] = {}


@record
class MMProgram:
    """An OpenMMLab training program, as its source proves it."""

    engine: str  # mmengine or mmcv (1.x): where it imports Config from
    config_dest: str  # the parser's positional the config path is (`config`)
    proof: str  # where it loads the config and merges --cfg-options over it


@record
class MMConfig:
    file: str  # the config the job names, resolved
    chain: list[str]  # every file read, bases first
    values: Any  # the merged config (_Dict), or Unknown where it could not be read


def program(trees: list[tuple[str, ast.AST]], options: dict[str, tuple[str, ...]]):
    """An MMProgram where the program that runs (`trees`, live) loads its config with
    `Config.fromfile(args.X)` and merges `args.Y` over it with `merge_from_dict`, Y being the
    dest of its own `--cfg-options`; None otherwise."""
    engine = loaded = merged = None
    for name, tree in trees:
        for node in nodes(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "Config" for a in node.names):
                mod = node.module or ""
                engine = engine or ("mmengine" if mod.startswith("mmengine") else None)
                engine = engine or ("mmcv" if mod.startswith("mmcv") else None)
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            arg = node.args[0] if node.args else None
            dest = arg.attr if isinstance(arg, ast.Attribute) else None
            if node.func.attr == "fromfile" and dest and loaded is None:
                loaded = (dest, f"{name}:{node.lineno}")
            if node.func.attr == "merge_from_dict" and dest and merged is None:
                merged = (dest, f"{name}:{node.lineno}")
    if engine is None or loaded is None or merged is None:
        return None
    flags = options.get(merged[0], ())
    if "--cfg-options" not in flags:
        return None
    proof = (
        f"{loaded[1]} loads the config its {loaded[0]} argument names (Config.fromfile, "
        f"{engine}); {merged[1]} merges --cfg-options over it (merge_from_dict)"
    )
    return MMProgram(engine, loaded[0], proof)


def _eval(node: ast.AST, names: dict, file: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id, Unknown(f"{file}:{node.lineno} uses {node.id}, not its own"))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, names, file) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, tuple(_OPS)):  # `128 * 2`
        a, b = _eval(node.left, names, file), _eval(node.right, names, file)
        if all(type(v) is int for v in (a, b)) and not (b == 0 and type(node.op) is ast.FloorDiv):
            return _OPS[type(node.op)](a, b)
        return Unknown(f"{file}:{node.lineno} is not whole-number arithmetic")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _eval(node.operand, names, file)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else Unknown("-")
    pairs: list[tuple[Any, ast.AST]] = []
    if isinstance(node, ast.Dict) and None not in node.keys:
        pairs = [(_eval(k, names, file), v) for k, v in zip(node.keys, node.values, strict=True)]  # type: ignore[arg-type]
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "dict"
        and not node.args
        and all(k.arg for k in node.keywords)
    ):
        pairs = [(k.arg, k.value) for k in node.keywords]
    else:
        return Unknown(f"{file}:{getattr(node, 'lineno', '?')} is not a literal")
    out = _Dict()
    for k, v in pairs:
        out[k] = _eval(v, names, file)
        out.at[k] = f"{file}:{getattr(v, 'lineno', '?')}"
    return out


def _merge(base: Any, child: Any) -> Any:
    if not (isinstance(base, _Dict) and isinstance(child, _Dict)) or child.get("_delete_"):
        return child
    out = _Dict(base)
    out.at = dict(base.at)
    for k, v in child.items():
        out[k] = _merge(base.get(k), v)
        out.at[k] = child.at[k]
    return out


def _file(name: str, read: Callable[[str], str | None], chain: list[str], depth: int) -> Any:
    text = read(name)
    if text is None:
        return Unknown(f"{name} could not be read")
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return Unknown(f"{name} is not Python ({e.msg}, line {e.lineno})")
    names: dict[str, Any] = {}
    merged: Any = _Dict()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if not (
            isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
        ):
            return Unknown(f"{name}:{stmt.lineno} does more than assign (not read)")
        value = _eval(stmt.value, names, name)
        for t in stmt.targets:
            names[t.id] = value  # type: ignore[attr-defined]
    base = names.pop("_base_", [])
    for b in [base] if isinstance(base, str) else base if isinstance(base, list) else [base]:
        if not isinstance(b, str) or "::" in b or depth > 8:
            return Unknown(f"{name}'s _base_ {b!r} is not a file of the job's tree")
        path = posixpath.normpath(posixpath.join(posixpath.dirname(name), b))
        got = _file(path, read, chain, depth + 1)
        if isinstance(got, Unknown):
            return got
        merged = _merge(merged, got)
    chain.append(name)
    own = _Dict({k: v for k, v in names.items() if not k.startswith("__")})
    own.at = {k: f"{name}:{_line(tree, k)}" for k in own}
    return _merge(merged, own)


def _line(tree: ast.Module, key: str) -> int:
    return next(
        s.lineno
        for s in reversed(tree.body)
        if isinstance(s, ast.Assign) and any(getattr(t, "id", None) == key for t in s.targets)
    )


def read(file: str, read_text: Callable[[str], str | None]) -> MMConfig:
    """The config `file` (a path of the job's tree) with its `_base_` chain merged."""
    chain: list[str] = []
    return MMConfig(file, chain, _file(posixpath.normpath(file), read_text, chain, 0))


def get(values: Any, key: str) -> tuple[Any, str | None]:
    """(the value at dotted `key`, where it was set); (None, None) where no file sets it;
    (Unknown, None) where the way down is not read."""
    at = None
    for part in key.split("."):
        if isinstance(values, Unknown):
            return values, None
        if not isinstance(values, _Dict) or part not in values:
            return None, None
        values, at = values[part], values.at.get(part)
    return values, at


def overrides(words: list[str]) -> dict[str, tuple[str, int]]:
    """The job's `--cfg-options key=value ...` pairs: {key: (value, index of its word)}."""
    out: dict[str, tuple[str, int]] = {}
    inside = False
    for i, w in enumerate(words):
        if w.startswith("-"):
            inside = w == "--cfg-options"
            continue
        if inside and "=" in w:
            k, v = w.split("=", 1)
            out[k] = (v, i)
    return out
