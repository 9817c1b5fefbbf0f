"""The engine's rooms stay enterable: no long function where the next work lands, and no import
circle between runbook's modules (checked on the source, as Python parses it)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "runbook"
# Every module of the package: a function that grows past this is split into named parts.
MAX_LINES = 80


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def test_no_function_in_the_package_is_over_the_limit():
    long = []
    for f in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_LINES:
                    long.append(f"{f.relative_to(PACKAGE)}:{node.lineno} {node.name} ({n})")
    assert not long, long


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The runbook modules `name` imports, at any depth in its code (a lazy import counts)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = (
                ".".join([*base, *([node.module] if node.module else [])])
                if node.level
                else node.module or ""
            )
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in modules and m != name}


def test_no_import_circle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ may import its own submodules (the recognizers' registry does, by
    # name); a submodule importing its package back is the usual shape, not a circle.
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, circles


def test_every_design_reference_points_into_the_repository_s_own_design_document():
    """Code cites docs/design.md by section; each section it cites exists there (a clone can read
    the contract the code points to), and no code cites a document outside the repository."""
    import re

    design = (PACKAGE.parent / "docs" / "design.md").read_text()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", design, re.M))
    cited, outside = set(), []
    for f in sorted(PACKAGE.rglob("*")):
        if f.suffix not in (".py", ".yaml", ".j2", ".html", ".md", ".toml") or not f.is_file():
            continue
        text = f.read_text()
        if "DESIGN" in text:
            outside.append(str(f.relative_to(PACKAGE)))
        cited |= {m for m in re.findall(r"design\.md §(\d+(?:\.\d+)?)", text)}
    assert not outside, outside
    assert cited and cited <= sections, sorted(cited - sections)


def test_no_rung_id_is_written_outside_its_own_module():
    """A rung is one module (runbook/rungs/<id>.py) and its place in the playbook: no other code
    names it, so adding one touches nothing else. Log parsers (evidence/) read PyTorch's own
    words (`expandable_segments` in an allocator message), and a knob kind may share a rung's
    name (the site's `[knobs] eval_accumulation`): neither names a rung."""
    from runbook import rungs
    from runbook.site import SiteConfig

    ids = set(rungs.REGISTRY)
    knob_kinds = set(vars(SiteConfig().knobs))
    found = []
    for name, path in _modules().items():
        if name.startswith("runbook.evidence") or name.removeprefix("runbook.rungs.") in ids:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            value = getattr(node, "value", None) if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and value in ids and value not in knob_kinds:
                found.append(f"{name}:{node.lineno}: {value!r}")
    assert not found, found


def test_every_rung_module_defines_the_rung_it_is_named_after():
    from runbook import rungs

    stems = {p.stem for p in (PACKAGE / "rungs").glob("*.py") if not p.stem.startswith("_")}
    assert stems == set(rungs.REGISTRY)
    assert all(rungs.REGISTRY[s].id == s for s in stems)


def test_the_diagnosis_evidence_is_built_in_one_place():
    """The incident, the sweep and `diagnose` hand what they read to evidence.gather, which
    derives every fact once: no other module of the package builds the record itself."""
    builders = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.relative_to(PACKAGE).as_posix() == "evidence/gather.py":
            continue
        for node in ast.walk(ast.parse(f.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, (ast.Name, ast.Attribute))
                and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
                == "Evidence"
            ):
                builders.append(f"{f.relative_to(PACKAGE)}:{node.lineno}")
    assert not builders, builders
