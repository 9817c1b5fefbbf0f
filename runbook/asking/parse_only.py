"""The program's own parser, run parse-only (docs/design.md "The program is the authority on its
own configuration"): the job's interpreter runs its entry with its exact words under a start-up
hook (`_boot.py`, standard library only) that stops the program where its parser hands back the
configuration in force and prints it as one JSON line. Nothing trains: the hook ends the process
at the hand-over, before any model is built.

This module builds the command and reads the answer (pure); the caller runs it as the job's
owner, in the job's folder, with the job's environment, no GPU and a time limit (evidence.collect's
program_asker, commands.plan's _asker)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from runbook.record import record

MARK = "\x1eRUNBOOK-PARSED "


@functools.lru_cache(maxsize=1)
def boot() -> str:
    """The hook's source, handed to the job's interpreter as `-c` (it cannot import runbook)."""
    return (Path(__file__).parent / "_boot.py").read_text()


def command(python: str, head: list[str], words: list[str]) -> list[str]:
    """The job's interpreter running its entry (`head`: [file] or ["-m", module]) with `words`,
    under the parse-only hook."""
    return [python, "-c", boot(), *head, *words]


@record
class Parsed:
    """What the program's parser made of one command line."""

    library: str  # whose hand-over stopped it: argparse, click, hydra, ...
    values: dict[str, Any]  # the configuration in force, flat: dotted key -> value
    options: dict[str, list[str]]  # key -> the option strings that set it, where the parser says
    note: str = ""

    def shown(self) -> str:
        return f"{self.library}{f' ({self.note})' if self.note else ''}"


def flatten(doc: Any, prefix: str = "") -> dict[str, Any]:
    """{dotted key: leaf value} of a nested configuration; a list is one value."""
    if not isinstance(doc, dict):
        return {prefix: doc} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


def read(rc: int, out: str, err: str) -> Parsed | str:
    """The parsed configuration from one run's output, or why there is none (the program's own
    error, no parser the hook knows, a time limit)."""
    # split on newlines only: str.splitlines also breaks at the mark's own \x1e
    lines = [ln for ln in out.split("\n") if ln.startswith(MARK)]
    if not lines:
        tail = (err.strip().splitlines() or ["no message"])[-1][:200]
        if rc == 124:
            return "its parser did not hand over within the time limit"
        return f"it stopped before its parser handed over (exit {rc}: {tail})"
    try:
        doc = json.loads(lines[-1][len(MARK) :])
    except ValueError:
        return "its parsed configuration was not readable JSON"
    if not isinstance(doc, dict) or "error" in doc or not isinstance(doc.get("config"), dict):
        return str(doc.get("error") if isinstance(doc, dict) else "no configuration")
    options = doc.get("options")
    options = options if isinstance(options, dict) else {}
    return Parsed(
        str(doc.get("library", "?")),
        flatten(doc["config"]),
        {str(k): [str(o) for o in v] for k, v in options.items() if isinstance(v, list)},
        str(doc.get("note") or ""),
    )
