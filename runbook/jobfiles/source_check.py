"""The static source check (docs/design.md §3.1): the lines of a job's own code that match the known
causes of a growing or misplaced working set. Code is untrusted input: it is parsed with `ast`,
never imported or run. Findings are evidence with file:line, never edits.

- `keeps_graph`: a tensor kept across loop iterations with its graph: `total += loss`,
  `losses.append(outputs)` in a loop that runs backward, without `.item()`, `.detach()`,
  `float()`, `.cpu()` (PyTorch FAQ, "Don't accumulate history across your training loop");
- `no_zero_grad`: a loop that runs backward and an optimizer step with no `zero_grad` in it or
  its function;
- `eval_no_grad`: an evaluation function (or a loop after `model.eval()`) that calls the model
  outside `torch.no_grad()` / `torch.inference_mode()`: it builds a graph it never uses;
- `load_no_map_location`: `torch.load(...)` without `map_location`: every rank restores the
  tensors onto the GPU they were saved from.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

from runbook.jobfiles import owner_read
from runbook.record import record

MAX_FILES = 200
MAX_BYTES = 4 << 20  # all files together
MAX_FILE_BYTES = 1 << 20
_EVAL_NAME = re.compile(
    r"(?i)^_?(?:evaluat\w*|eval|eval_\w+|\w+_eval|\w+_evaluate|validat\w*|\w+_validation\w*|"
    r"valid_step|val_step|\w+_val_step|test|test_step|predict\w*|inference\w*)$"
)
_LOSSY = re.compile(r"(?i)\b(?:loss\w*|\w*_loss|outputs?|logits|preds?|predictions?)\b")
_DETACHED = re.compile(r"\.(?:item|detach|cpu|tolist|numpy)\(|\b(?:float|int)\(")
_NO_GRAD = re.compile(r"\b(?:no_grad|inference_mode|set_grad_enabled\(\s*False)")


@record
class Finding:
    kind: str  # keeps_graph | no_zero_grad | eval_no_grad | load_no_map_location
    file: str
    line: int
    text: str
    why: str
    function: str = ""  # the function it is in ("" at module level)

    def contract(self) -> dict:
        return {"kind": self.kind, "file": self.file, "line": self.line, "text": self.text}

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@record
class SourceReport:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    notes: list[str] = field(default_factory=list)  # what was not read, and why
    # The files read, as (path, name, syntax tree, text): what the program says of its own order
    # is read against the failing traceback's frames (program_order.steps_before).
    programs: list[tuple[str, str, ast.AST, str]] = field(
        default_factory=list, repr=False, compare=False
    )

    def of(self, kind: str, frames: list | None = None) -> list[Finding]:
        """The findings of `kind`; with the failing traceback's frames, only those in a function
        the traceback ran through (the code that failed, not a sibling that did not run)."""
        found = [f for f in self.findings if f.kind == kind]
        if frames:
            ran = {getattr(fr, "func", "").split(".")[-1] for fr in frames}
            found = [f for f in found if f.function in ran]
        return found


@functools.lru_cache(maxsize=32)
def _parse(text: str, name: str) -> ast.AST | None:
    """The file's syntax tree; None for a file that does not parse (it yields no findings).
    Parsed once per process: the program's options and the code check both read the job's files
    (a tree is never changed by its readers)."""
    try:
        return ast.parse(text, filename=name)
    except (SyntaxError, ValueError, RecursionError):
        return None


@functools.lru_cache(maxsize=32)
def nodes(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of a parsed file, walked once: its readers each look at all of them."""
    return tuple(ast.walk(tree))


def check_text(text: str, name: str) -> list[Finding]:
    """The findings in one file's source (a file that does not parse yields none)."""
    tree = _parse(text, name)
    return _findings(tree, text, name) if tree is not None else []


def _findings(tree: ast.AST, text: str, name: str) -> list[Finding]:
    lines = text.splitlines()
    out: list[Finding] = []
    v = _Visitor(name, lines, out)
    v.visit(tree)
    return out


def _src(lines: list[str], node: ast.AST) -> str:
    n = getattr(node, "lineno", 0)
    return lines[n - 1].strip()[:200] if 0 < n <= len(lines) else ""


def code_text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - an odd node only loses its text
        return ""


class _Visitor(ast.NodeVisitor):
    def __init__(self, name: str, lines: list[str], out: list[Finding]):
        self.name, self.lines, self.out = name, lines, out
        self.functions: list[ast.AST] = []
        self.guarded = 0  # depth of with no_grad / inference_mode

    def add(self, kind: str, node: ast.AST, why: str) -> None:
        line = getattr(node, "lineno", 0)
        if any(f.kind == kind and f.line == line and f.file == self.name for f in self.out):
            return
        fn = getattr(self.functions[-1], "name", "") if self.functions else ""
        self.out.append(Finding(kind, self.name, line, _src(self.lines, node), why, fn))

    def visit_FunctionDef(self, node):  # noqa: N802 - ast's visitor names
        self.functions.append(node)
        decorated = any(_NO_GRAD.search(code_text(d)) for d in node.decorator_list)
        if decorated:
            self.guarded += 1
        if _EVAL_NAME.match(node.name) and not decorated and self.guarded == 0:
            self._eval_function(node)
        self.generic_visit(node)
        if decorated:
            self.guarded -= 1
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_With(self, node):  # noqa: N802
        guard = any(_NO_GRAD.search(code_text(item.context_expr)) for item in node.items)
        self.guarded += guard
        self.generic_visit(node)
        self.guarded -= guard

    def _eval_function(self, fn) -> None:
        """An evaluation function that calls a model outside no_grad: a call whose target is
        named like a model (model(...), self.model(...), net(...)) not under a guard."""
        for sub in ast.walk(fn):
            if isinstance(sub, ast.With) and any(
                _NO_GRAD.search(code_text(i.context_expr)) for i in sub.items
            ):
                return  # guarded somewhere in it: the calls under it are fine
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Call) and re.search(
                r"(?i)(?:^|\.)(?:model|net|network|module|encoder|decoder)\w*$", code_text(sub.func)
            ):
                self.add(
                    "eval_no_grad",
                    sub,
                    f"{fn.name}() calls the model outside torch.no_grad()/inference_mode(): "
                    "evaluation builds and keeps an autograd graph",
                )
                return

    def visit_Call(self, node):  # noqa: N802
        if (
            code_text(node.func) == "torch.load"
            and not any(k.arg == "map_location" for k in node.keywords)
            and len(node.args) < 2
        ):
            self.add(
                "load_no_map_location",
                node,
                "torch.load without map_location restores every tensor onto the device it "
                "was saved from (rank 0's GPU for every rank)",
            )
        self.generic_visit(node)

    def _loop(self, node) -> None:
        body = "\n".join(code_text(s) for s in node.body)
        trains = ".backward(" in body
        if trains:
            self._kept_across(node)
            fn = self.functions[-1] if self.functions else None
            scope = code_text(fn) if fn is not None else body
            if re.search(r"\.step\(", body) and "zero_grad" not in scope:
                self.add(
                    "no_zero_grad",
                    node,
                    "a training loop with backward and an optimizer step but no zero_grad",
                )
        self.generic_visit(node)

    visit_For = _loop  # noqa: N815
    visit_While = _loop  # noqa: N815
    visit_AsyncFor = _loop  # noqa: N815

    def _kept_across(self, loop) -> None:
        """`x += loss` / `x = x + loss` / `xs.append(loss)` in a training loop, the value not
        detached."""
        for sub in ast.walk(loop):
            value = None
            if isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.Add):
                value = sub.value
            elif (added := _self_sum(sub)) is not None:  # a real H100 leak's own spelling
                value = added
            elif (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in ("append", "extend")
                and sub.args
            ):
                value = sub.args[0]
            if value is None:
                continue
            text = code_text(value)
            if _LOSSY.search(text) and not _DETACHED.search(text):
                self.add(
                    "keeps_graph",
                    sub,
                    f"`{_src(self.lines, sub)}` keeps {text} across steps with its autograd "
                    "graph (use .item() or .detach())",
                )


def _self_sum(node) -> ast.expr | None:
    """What `x = x + v` (or `x = v + x`) adds to `x`, for a plain name or attribute `x`."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name | ast.Attribute)
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.op, ast.Add)
    ):
        return None
    target = ast.dump(node.targets[0], annotate_fields=False).replace("Store()", "Load()")
    left, right = node.value.left, node.value.right
    if ast.dump(left, annotate_fields=False) == target:
        return right
    if ast.dump(right, annotate_fields=False) == target:
        return left
    return None


def check_tree(root: str | Path) -> SourceReport:
    """Every .py file under `root` (a file or a folder), bounded: MAX_FILES files, MAX_BYTES."""
    root = Path(root)
    report = SourceReport()
    paths = [root] if root.is_file() else _python_files(root)
    used = 0
    for path in paths:
        if report.files >= MAX_FILES or used >= MAX_BYTES:
            report.notes.append(
                f"stopped after {report.files} files ({used} bytes): the check reads at most "
                f"{MAX_FILES} files and {MAX_BYTES} bytes"
            )
            break
        try:
            size = owner_read.size(path)
            if size > MAX_FILE_BYTES:
                report.notes.append(f"{path}: {size} bytes, over {MAX_FILE_BYTES}: not read")
                continue
            text = owner_read.read_text(path, errors="replace")
        except OSError as e:
            report.notes.append(f"{path}: {e.strerror or e}")
            continue
        used += len(text)
        report.files += 1
        name = str(path.relative_to(root)) if root.is_dir() else path.name
        report.findings.extend(check_text(text, name))
        if (tree := _parse(text, name)) is not None:
            report.programs.append((str(path.resolve()), name, tree, text))
    return report


_PY_TOKEN = re.compile(r"""(?P<q>["']?)(?P<path>[^\s"'=;|&<>()$]+\.py)(?P=q)(?=\s|$)""")


# `python -m pkg.train`, `torchrun ... -m pkg.train`: a module the job's tree holds as
# pkg/train.py (launchers' own modules are not the program).
_PY_MODULE = re.compile(
    r"\b(?:python[\d.]*|torchrun|deepspeed|launch)\b(?:[ \t]+(?!-m\b)[^\s|;&]+)*?[ \t]+-m[ \t]+"
    r"(?P<mod>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
)
_LAUNCHER_MODULES = {
    "torch.distributed.run",
    "torch.distributed.launch",
    "accelerate.commands.launch",
    "deepspeed.launcher.runner",
}


def named_entry_files(script: str) -> list[str]:
    """The Python files a job script runs (`python train.py`, `torchrun ... src/train.py`, a
    module `python -m pkg.train` as pkg/train.py), in order, each once; comment lines skipped."""
    out: list[str] = []
    assigned: list[str] = []  # `EXAMPLE=train.py`: a value, run only where a line names it
    for line in script.splitlines():
        if line.lstrip().startswith("#"):
            continue
        code = line.split(" #", 1)[0]
        # A script's arguments are its own (`bash tools/dist_train.sh configs/net.py 8`: a
        # config file, not a program the job runs).
        ran = re.search(r"""(?:^|\s)["']?[^\s"']+\.sh["']?(?=\s|$)""", code)
        code = code[: ran.start()] if ran else code
        tokens = list(_PY_TOKEN.finditer(code))
        found = [m.group("path") for m in tokens if code[m.start() - 1 : m.start()] != "="]
        assigned += [m.group("path") for m in tokens if code[m.start() - 1 : m.start()] == "="]
        if not tokens:  # a file named on the line is the program; else a module run with -m
            found = [
                m.group("mod").replace(".", "/") + ".py"
                for m in _PY_MODULE.finditer(code)
                if m.group("mod") not in _LAUNCHER_MODULES
            ]
        out += [f for f in found if f not in out]
    # A file only assigned to a variable (`PROGRAM=train.py ... python $PROGRAM`) is the program
    # where no line names one; after those that a line runs (a wrapper handed it by name).
    return out + [f for f in dict.fromkeys(assigned) if f not in out]


def _imports(tree: ast.AST, name: str) -> list[str]:
    """Module paths (`a/b`) a file imports, absolute or relative to its own folder."""
    here = str(Path(name).parent)
    out: list[str] = []
    for node in nodes(tree):
        if isinstance(node, ast.Import):
            out.extend(a.name.replace(".", "/") for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = (node.module or "").replace(".", "/")
            base = here if node.level else ""
            out.append(str(Path(base, mod)) if mod else base)
            out.extend(str(Path(base, mod, a.name)) for a in node.names)
    return out


@record
class JobFile:
    """One file of the job's own code, read and parsed (never imported)."""

    path: Path
    name: str  # the entry file's own name, else its path under the job's folders
    text: str
    tree: ast.AST | None  # None: it does not parse
    entry: bool  # a file the job script names, not one it imports


def job_files(
    script: str, workdir: str | Path, notes: list[str], entries: list[str] | None = None
) -> Iterator[JobFile]:
    """The entry files a job script runs (`entries`, or all it names), and the modules of the
    job's own tree they import (under the entry file's folder or `workdir`; anything else,
    site-packages included, is not the job's), bounded by MAX_FILES and MAX_BYTES. What could
    not be read is said in `notes`."""
    work = Path(workdir).resolve()
    names = named_entry_files(script) if entries is None else entries
    queue = [((Path(n) if Path(n).is_absolute() else work / n).resolve(), True) for n in names]
    roots = {work, *(p.parent for p, _ in queue)}
    seen: set[Path] = set()
    used = read = 0
    while queue and read < MAX_FILES and used < MAX_BYTES:
        path, entry = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            if owner_read.size(path) > MAX_FILE_BYTES:
                notes.append(f"{path}: over {MAX_FILE_BYTES} bytes, not read")
                continue
            text = owner_read.read_text(path, errors="replace")
        except OSError as e:
            package = path.with_suffix("") / "__main__.py"  # `python -m pkg`: pkg/__main__.py
            if entry and package not in seen and package.parent.is_dir():
                queue.insert(0, (package, True))
            elif entry:
                notes.append(f"{path}: {e.strerror or e}")
            continue
        used += len(text)
        read += 1
        name = path.name if entry else _relative(path, roots)
        tree = _parse(text, name)
        yield JobFile(path, name, text, tree, entry)
        for mod in _imports(tree, path.name) if tree is not None else []:
            for root in (path.parent, *roots):
                for cand in (root / f"{mod}.py", root / mod / "__init__.py"):
                    c = cand.resolve()
                    if any(r == c.parent or r in c.parents for r in roots):
                        queue.append((c, False))


def check_job(script: str, workdir: str | Path) -> SourceReport:
    """The findings in the job's own code (job_files): read, parsed, never imported."""
    report = SourceReport()
    if not named_entry_files(script):
        report.notes.append("the job script names no Python file")
    for f in job_files(script, workdir, report.notes):
        report.files += 1
        if f.tree is not None:
            report.findings.extend(_findings(f.tree, f.text, f.name))
            report.programs.append((str(f.path), f.name, f.tree, f.text))
    return report


def _relative(path: Path, roots: set[Path]) -> str:
    for r in sorted(roots, key=lambda r: len(str(r)), reverse=True):
        if r in path.parents:
            return str(path.relative_to(r))
    return path.name


def _python_files(root: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        # A virtual environment or a package cache is not the job's own code.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in ("site-packages", "__pycache__", "node_modules")
            and not (Path(dirpath, d) / "pyvenv.cfg").exists()
        )
        out.extend(Path(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
        if len(out) > MAX_FILES * 2:
            break
    return out
