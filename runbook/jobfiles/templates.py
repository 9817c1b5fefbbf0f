"""runbook's job templates (`runbook submit`): a sandboxed jinja2 render whose output's header
records the template and its variables, so a later change re-renders exactly. Knows no rung."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from runbook.errors import InputError, UsageError

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment

HEADER_TEMPLATE = "# runbook:template="
HEADER_VARS = "# runbook:vars="


class _Unquoted(str):
    """A value the template author asked to render as is (several words, say)."""


def _shell_safe(value):
    """Every rendered value is shell-quoted (a safe one stays bare): variables are job names,
    paths and checkpoint locations, and a path holding `$(...)` must not run on the rerun. Quotes
    are understood by bash and by sbatch's #SBATCH parser alike, mid-word too."""
    if isinstance(value, _Unquoted):
        return str(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return str(value)
    return shlex.quote(str(value)) if value != "" else ""


def _env() -> SandboxedEnvironment:
    # jinja2 is imported when a template is rendered or read, never by a reader of a header:
    # `runbook diagnose` loads the rungs, which read headers.
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        finalize=_shell_safe,
    )
    env.filters["unquoted"] = lambda v: _Unquoted(v)
    return env


def parse_vars(pairs: list[str]) -> dict:
    """`k=v` strings; integers and floats become numbers, so `{{ micro_batch // 2 }}` works."""
    out: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise UsageError(f"--var {pair!r}: expected NAME=VALUE with a Python identifier NAME")
        if re.fullmatch(r"-?\d+", value):
            out[key] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            out[key] = float(value)
        else:
            out[key] = value
    return out


def render(template_path: str, variables: dict) -> str:
    """Render a template into a job script whose header records the template and variables."""
    import jinja2

    path = Path(template_path).resolve()
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(
            f"template {template_path}: cannot read: {e.strerror or e}",
            hint="check the path; the job's recorded template may have moved",
        ) from None
    try:
        text = _env().from_string(source).render(**variables)
    except jinja2.UndefinedError as e:
        raise UsageError(
            f"template {template_path}: {e.message}",
            hint=f"give it with --var NAME=VALUE (given: {', '.join(sorted(variables)) or 'none'})",
        ) from None
    except jinja2.TemplateSyntaxError as e:
        raise InputError(
            f"template {template_path}, line {e.lineno}: {e.message}",
            hint="fix the template and run again; nothing was submitted",
        ) from None
    except jinja2.exceptions.SecurityError as e:
        raise InputError(
            f"template {template_path}: refused by the sandbox: {e}",
            hint="templates may only use variables and filters; move logic into the job script",
        ) from None
    header = [f"{HEADER_TEMPLATE}{path}", f"{HEADER_VARS}{json.dumps(variables, sort_keys=True)}"]
    lines = text.splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    return "".join(lines[:at] + [h + "\n" for h in header] + lines[at:])


def template_variables(template_path: str) -> set[str]:
    """Every variable a template refers to (with a default or not)."""
    try:
        source = Path(template_path).read_text(encoding="utf-8")
    except OSError:
        return set()
    import jinja2.meta

    return jinja2.meta.find_undeclared_variables(_env().parse(source))


def read_header(script: str) -> tuple[str, dict] | None:
    """(template path, variables) of a runbook-rendered script, or None for a plain one."""
    template = variables = None
    for line in script.splitlines()[:20]:
        if line.startswith(HEADER_TEMPLATE):
            template = line[len(HEADER_TEMPLATE) :].strip()
        elif line.startswith(HEADER_VARS):
            try:
                variables = json.loads(line[len(HEADER_VARS) :])
            except json.JSONDecodeError:
                return None
    return (template, variables) if template and isinstance(variables, dict) else None
