"""A script the job runs (not sources) for its training command: `bash train/run_1.3b.sh out 2`,
`GPUS=8 sh shell/ft.sh`, `./${training_script} slurm`. Its training command is the job's, with the
words after it as $1..$N and the assignments before it in its environment."""

from __future__ import annotations

import re
from pathlib import Path

from runbook.jobfiles import bash
from runbook.jobfiles.configs import read_one
from runbook.jobfiles.source_check import named_entry_files
from runbook.record import record

_RUN = re.compile(
    r"""(?m)^[ \t]*(?P<env>(?:[A-Za-z_]\w*=[^\s;&|]*[ \t]+)*)(?:(?:bash|sh)[ \t]+)?"""
    r"""(?P<path>\.?/?[\w.][\w./-]*\.sh|\.?/?\$\{?(?P<var>[A-Za-z_]\w*)\}?)"""
    r"""(?P<args>[ \t]+[^\n;&|#]*)?[ \t]*(?:#.*)?$"""
)


@record
class RunScript:
    """The one script a job runs for its training command, as the job's script names it."""

    path: str  # as written (`training_scripts/opt/single_node/run_1.3b.sh`)
    text: str
    args: list[str]  # the words after it: its $1..$N
    env: dict[str, str]  # the assignments before it, in its environment
    start: int  # where the path is written in the job's script
    end: int


def run_script(script: str, workdir: str | Path) -> RunScript | None:
    """The script of the job's tree that the job's script runs as its training command, where
    the job's script names no program itself and runs exactly one such script (a path under its
    folder, read as its owner could); else None."""
    if named_entry_files(script):
        return None
    found = []
    for m in _RUN.finditer(script):
        name = m.group("path")
        if m.group("var"):  # `./${training_script} slurm`: the script's own assignment names it
            hits = bash.find(script, [m.group("var")])
            value = hits[0].value.strip("\"'") if len(hits) == 1 else ""
            if not re.fullmatch(r"[\w./-]+", value):
                continue
            name = value if not name.startswith("./") or value.startswith("./") else "./" + value
        if Path(name).is_absolute() or ".." in Path(name).parts:
            continue
        f = read_one(name, Path(workdir) / name)
        if f.text is not None:
            found.append((m, name, f.text))
    if len(found) != 1:
        return None
    m, name, text = found[0]
    env = dict(w.split("=", 1) for w in m.group("env").split())
    return RunScript(name, text, (m.group("args") or "").split(), env, *m.span("path"))
