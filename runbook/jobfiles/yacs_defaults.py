"""An option whose default is None that the program routes into a yacs config
(`config.TRAIN.ACCUMULATION_STEPS = args.accumulation_steps`, Swin-Transformer's config.py): when
the job does not give it, the value in force is the yacs default (`_C.TRAIN.ACCUMULATION_STEPS =
1`), then the YAML file the job names (with the files its BASE or _BASE_ names first), then the
job's `--opts KEY VALUE` words. Read from the ASTs and YAML, never run. Pure functions of the
texts handed in, but for `read` (the owner's read of a file)."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable

import yaml

from runbook.jobfiles.source_check import nodes


def _chain(node: ast.AST) -> list[str] | None:
    """`config.TRAIN.ACCUMULATION_STEPS` -> ['config', 'TRAIN', 'ACCUMULATION_STEPS']."""
    out: list[str] = []
    while isinstance(node, ast.Attribute):
        out.insert(0, node.attr)
        node = node.value
    return [node.id, *out] if isinstance(node, ast.Name) else None


def routes(trees: list[tuple[str, ast.AST]], dests: set[str]) -> dict[str, tuple[str, str]]:
    """{dest: (yacs key, where)} for each `cfg.A.B = args.dest` of the running program."""
    out: dict[str, tuple[str, str]] = {}
    for name, tree in trees:
        for n in nodes(tree):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
                continue
            target, value = _chain(n.targets[0]), _chain(n.value)
            if target and len(target) >= 3 and value and len(value) == 2 and value[1] in dests:
                out.setdefault(value[1], (".".join(target[1:]), f"{name}:{n.lineno}"))
    return out


def defaults(trees: list[tuple[str, ast.AST]]) -> dict[str, tuple[int, str]]:
    """{key: (whole number, where)} of each module-level `_C.A.B = N` in a module that makes
    `_C` a yacs CfgNode (`_C = CN()`)."""
    out: dict[str, tuple[int, str]] = {}
    for name, tree in trees:
        roots = {
            t.id
            for s in getattr(tree, "body", [])
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
            and getattr(s.value.func, "id", getattr(s.value.func, "attr", "")) in ("CN", "CfgNode")
            for t in s.targets
            if isinstance(t, ast.Name)
        }  # fmt: skip
        for s in getattr(tree, "body", []):
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
                continue
            chain = _chain(s.targets[0])
            v = s.value.value if isinstance(s.value, ast.Constant) else None
            if chain and chain[0] in roots and len(chain) >= 3 and type(v) is int:
                out.setdefault(".".join(chain[1:]), (v, f"{name}:{s.lineno}"))
    return out


def in_yaml(
    key: str, file: str, read: Callable[[str], str | None], depth: int = 0
) -> tuple[object, str | None, str]:
    """(value, the file that sets it, why not read): the last of the file's BASE/_BASE_ files
    and the file itself to set `key`; (None, None, '') where none does."""
    text = read(file) if depth < 8 else None
    if text is None:
        return None, None, f"{file} could not be read"
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return None, None, f"{file} is not YAML runbook reads"
    if not isinstance(data, dict):
        return None, None, f"{file} is not a mapping"
    found: tuple[object, str | None, str] = (None, None, "")
    bases = data.get("BASE", data.get("_BASE_", []))
    for base in [bases] if isinstance(bases, str) else bases or []:
        if base:
            path = posixpath.normpath(posixpath.join(posixpath.dirname(file), str(base)))
            got = in_yaml(key, path, read, depth + 1)
            if got[2]:
                return got
            found = got if got[1] else found
    node: object = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return (node, file, "") if node is not None else found


def opts_value(words: list[str], key: str) -> str | None:
    """The value the job's `--opts KEY VALUE ...` words give `key` (the last wins)."""
    if "--opts" not in words:
        return None
    pairs = words[words.index("--opts") + 1 :]
    pairs = pairs[: next((i for i, w in enumerate(pairs) if w.startswith("--")), len(pairs))]
    found = [pairs[i + 1] for i in range(0, len(pairs) - 1, 2) if pairs[i] == key]
    return found[-1] if found else None
