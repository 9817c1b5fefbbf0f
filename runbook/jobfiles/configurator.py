"""A program that configures itself by exec(): nanoGPT's shape. The entry file runs a file of the
job's tree (`exec(open('configurator.py').read())`) that runs each bare argument as Python (a
config file: `train.py config/train_gpt2.py`) and then sets the program's globals from
`--key=value` arguments. The value in force of a global is the last of: its assignment in the
entry file, in each config file in order, then `--key=value`. Read from the files' ASTs, never
run. A pure function of the texts handed in, but for `read` (the owner's read of a file)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

from runbook.jobfiles.source_check import nodes
from runbook.record import record


@record
class Configurator:
    file: str  # the file the entry exec()s, as it names it
    proof: str  # where it was read that it takes --key=value and runs bare arguments
    values: dict[str, tuple[int, str]]  # each whole-number global in force: (value, where set)
    comments: dict[str, str]  # each global's comment on its line in the entry file


def _exec_target(tree: ast.AST) -> tuple[str, int] | None:
    """`exec(open('X').read())` at the entry file's top level: ('X', its line)."""
    for node in getattr(tree, "body", []):
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "exec"):
            continue
        inner = call.args[0] if call.args else None
        opened = getattr(getattr(inner, "func", None), "value", None)
        if isinstance(opened, ast.Call) and getattr(opened.func, "id", "") == "open":
            arg = opened.args[0] if opened.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value, node.lineno
    return None


def _takes_overrides(tree: ast.AST) -> int | None:
    """The line where the exec'd file sets globals()[key] inside a loop over sys.argv, exec()ing
    the arguments that are not overrides: None when it does not."""
    for node in nodes(tree):
        if not isinstance(node, ast.For) or "argv" not in ast.unparse(node.iter):
            continue
        body = ast.unparse(node)
        if "exec(" in body and re.search(r"globals\(\)\[\w+\]\s*=", body):
            return node.lineno
    return None


def _int(node: ast.AST) -> int | None:
    """A whole number written as one, or as + - * // of them (`5 * 8`)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)
    ):
        a, b = _int(node.left), _int(node.right)
        if a is None or b is None or (isinstance(node.op, ast.FloorDiv) and b == 0):
            return None
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        return a * b if isinstance(node.op, ast.Mult) else a // b
    return None


def assignments(tree: ast.AST, name: str) -> dict[str, tuple[int, str]]:
    out = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name) and (v := _int(node.value)) is not None:
                out[t.id] = (v, f"{name}:{node.lineno}")
    return out


def _comments(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+)\s*=\s*[^#\n]*#\s*(.+)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def read(
    entry: str, text: str, tree: ast.AST, words: list[str], read_file: Callable[[str], str | None]
) -> Configurator | None:
    """The configurator of the entry file, with the values in force for the arguments `words`
    (the words after the entry file on the job's command). None where the entry exec()s no file
    that takes overrides, or a file it names cannot be read."""
    target = _exec_target(tree)
    if target is None:
        return None
    cfg_text = read_file(str(Path(entry).parent / target[0]))
    if cfg_text is None:
        return None
    try:
        loop = _takes_overrides(ast.parse(cfg_text))
    except SyntaxError:
        return None
    if loop is None:
        return None
    values = assignments(tree, entry)
    for w in words:
        if w.startswith("--") and "=" in w:
            key, _, val = w[2:].partition("=")
            if key in values:
                if not val.isdigit():
                    return None  # set to what runbook does not read as a number: unknown
                values[key] = (int(val), "the command line")
        elif w.endswith(".py"):
            more = read_file(w)
            if more is None:
                return None
            try:
                values |= assignments(ast.parse(more), w)
            except SyntaxError:
                return None
    proof = (
        f"{entry}:{target[1]} exec()s {target[0]}, which runs each bare argument as Python and "
        f"sets the program's globals from --key=value ({target[0]}:{loop})"
    )
    return Configurator(target[0], proof, values, _comments(text))
