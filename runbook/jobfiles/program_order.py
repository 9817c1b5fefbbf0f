"""Whether the job's own program ran a training step before the line a traceback stopped at: a
pure function of its syntax tree (read, never run).

A log that prints nothing before its OOM does not say whether steps ran (phase.py says `when
unknown`); the program that wrote it can. Python runs a block's statements in order, so a frame
stopped at line L has completed, in that same pass, every plain statement before L's in each
block around it: the loop body's `loss = train()` before its `test()`, an `opt.step()` before
the `if step % 100 == 0: evaluate()` under it. Where one of those statements runs an optimizer's
step (`optimizer.step()`, a grad scaler's, DeepSpeed's engine's), directly or through a function of
the same file, a training step completed before the failure in this process. A backward alone is
not one: an OOM in the first step's optimizer step comes after its backward.

Only what the program says is read: a statement inside a branch or a loop before L's (it may
not have run), and a library's own loop (`trainer.fit()`, `learn.fit()`: its body is not the
job's file), say nothing; the answer is then None, and `when` stays unknown.
"""

from __future__ import annotations

import ast
import re

from runbook.jobfiles.source_check import code_text

# What ends a training step: an optimizer's, a grad scaler's or a DeepSpeed engine's step()
# (a scheduler's step is not one).
_STEPPER = re.compile(r"(?i)^(?!.*sched)(?:.*optim|opt\w*$|.*scaler$|.*engine$)")
DEPTH = 3  # own functions calling own functions: deep enough for train() -> train_one_epoch()

# Statements that run whole once reached: their calls have completed when the next one starts.
_PLAIN = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)


def _functions(tree: ast.AST) -> dict[str, ast.AST]:
    """The file's own functions and methods, by name (a name defined twice: the last)."""
    return {
        n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _called_name(call: ast.Call) -> str | None:
    """The own function a call runs: `train()`, or a method of the object itself
    (`self.train_epoch()`). `model.train()` is the model's, not the file's `train`."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if (
        isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.value.id in ("self", "cls")
    ):
        return f.attr
    return None


def _step_in(node: ast.AST) -> tuple[int, str] | None:
    """The optimizer step `node` itself calls (its line and code), or None."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "step"
                and _STEPPER.search(_last(f.value))
            ):
                return n.lineno, code_text(n)
    return None


def _stepping(funcs: dict[str, ast.AST]) -> dict[str, tuple[int, str]]:
    """The file's functions that step an optimizer, directly or through its other functions
    (DEPTH calls deep), each with the step's line: worked out once per file, each function's
    body walked once a round."""
    found = {name: got for name, fn in funcs.items() if (got := _step_in(fn)) is not None}
    calls = {
        name: [c for n in ast.walk(fn) if isinstance(n, ast.Call) and (c := _called_name(n))]
        for name, fn in funcs.items()
    }
    for _ in range(DEPTH):
        more = {
            name: found[callee]
            for name, callees in calls.items()
            if name not in found
            for callee in callees
            if callee in found
        }
        if not more:
            break
        found.update(more)
    return found


def _trains(node: ast.AST, stepping: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    """The optimizer step that running `node` runs (its line and code), or None."""
    if (got := _step_in(node)) is not None:
        return got
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and (name := _called_name(n)) in stepping:
            return stepping[name]
    return None


def _last(node: ast.AST) -> str:
    """The last name of `optimizer`, `self.optimizer`, `opts[0]`."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _chain(body: list[ast.stmt], line: int) -> list[tuple[list[ast.stmt], int]]:
    """The blocks from the file's top to the innermost statement holding `line`, each with the
    index of the statement in it that holds the line."""
    out: list[tuple[list[ast.stmt], int]] = []
    block: list[ast.stmt] | None = body
    while block:
        at = next(
            (
                i
                for i, s in enumerate(block)
                if s.lineno <= line <= (getattr(s, "end_lineno", None) or s.lineno)
            ),
            None,
        )
        if at is None:
            break
        out.append((block, at))
        block = _inner_block(block[at], line)
    return out


def _inner_block(stmt: ast.stmt, line: int) -> list[ast.stmt] | None:
    """The block of `stmt` (a body, an else, a handler's) whose statements hold `line`."""
    blocks: list[list[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        got = getattr(stmt, name, None)
        if isinstance(got, list) and got and isinstance(got[0], ast.stmt):
            blocks.append(got)
    for h in getattr(stmt, "handlers", []) or []:
        blocks.append(h.body)
    for c in getattr(stmt, "cases", []) or []:  # match statements
        blocks.append(c.body)
    for b in blocks:
        if b[0].lineno <= line <= (getattr(b[-1], "end_lineno", None) or b[-1].lineno):
            return b
    return None


def _ran_before(block: list[ast.stmt], at: int) -> list[ast.stmt]:
    """The statements of `block` before its `at`-th that ran whole before it: plain statements,
    and the plain statements of a `with` block's body (it runs once reached)."""
    out: list[ast.stmt] = []
    for s in block[:at]:
        if isinstance(s, _PLAIN):
            out.append(s)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out.extend(x for x in s.body if isinstance(x, _PLAIN))
    return out


def placed(text: str, line: int, code: str) -> int | None:
    """The line of the file now that a frame's `line` and `code` (its code line as the traceback
    printed it) name: `line` where it still reads `code`, else the one line that does (the file
    was edited since the run); None where no line or several do. A frame printed without its
    code is taken at its line."""
    lines = text.splitlines()
    want = code.strip()
    if not want:
        return line if 0 < line <= len(lines) else None
    if 0 < line <= len(lines) and lines[line - 1].strip() == want:
        return line
    found = [i + 1 for i, x in enumerate(lines) if x.strip() == want]
    return found[0] if len(found) == 1 else None


def trained_before(tree: ast.AST, line: int, name: str) -> str | None:
    """Why the program had run a training step when its frame at `line` was reached, in words
    that cite its lines (None: the program does not say it had)."""
    stepping = _stepping(_functions(tree))
    for block, at in reversed(_chain(getattr(tree, "body", []), line)):
        for stmt in reversed(_ran_before(block, at)):
            if (how := _trains(stmt, stepping)) is None:
                continue
            said = f"{name}:{stmt.lineno} `{code_text(stmt)[:80]}`"
            step_line, step = how
            if step_line != stmt.lineno:
                said += f", which runs `{step[:60]}` ({name}:{step_line})"
            return (
                f"{said} completed before {name}:{line} in the same pass: a training step ran "
                "before the failure (read from the program, not from its log)"
            )
    return None


def steps_before(programs: list[tuple[str, str, ast.AST, str]], frames: list) -> str | None:
    """Why the program had run a training step before the failing traceback's frames, the
    innermost frame of the job's own files first; None: it does not say. `programs` are the
    files the source check read (SourceReport.programs)."""
    for fr in reversed(frames):
        line = getattr(fr, "line", None)
        found = _program_of(programs, getattr(fr, "file", ""))
        if found is None or not line:
            continue
        name, tree, text = found
        now = placed(text, line, getattr(fr, "code", ""))
        if now is not None and (said := trained_before(tree, now, name)):
            return said
    return None


def _program_of(
    programs: list[tuple[str, str, ast.AST, str]], file: str
) -> tuple[str, ast.AST, str] | None:
    """The file read that a frame's file is: the same path, else the one file read whose name
    ends it (the process may see the job's folder under another mount)."""
    if not file or not file.endswith(".py"):
        return None
    for path, name, tree, text in programs:
        if path == file:
            return name, tree, text
    ends = [(n, t, x) for _, n, t, x in programs if file.endswith("/" + n) or file == n]
    return ends[0] if len(ends) == 1 else None
