"""The incident folder, written as the run goes: raw outputs, each stage's JSON, the report, the
ledger. A stage that fails records why and stops the run (Stopped); the report says where."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from runbook.errors import ExitCode, RunbookError
from runbook.report.files import write_atomic, write_reports
from runbook.report.model import Incident, Step, plain
from runbook.report.render import report_json


class Stopped(Exception):
    """A stage failed: the report says where, the exit code says 1."""


class Recorder:
    """The incident folder, written as the run goes: raw outputs, each stage's JSON, the report."""

    def __init__(self, folder: Path, incident: Incident):
        self.folder = folder
        self.incident = incident
        # runbook's own: an incident holds a user's job's logs and commands, and one user's job
        # never shows in another's (docs/design.md §4.4). A folder the site made is left as is.
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.mkdir(exist_ok=True, mode=0o700)

    def raw(self, name: str, text: str) -> None:
        write_atomic(self.folder / "raw" / name, text)

    def stage(self, name: str, data) -> None:
        write_atomic(
            self.folder / f"{name}.json", json.dumps(plain(data), indent=2, default=str) + "\n"
        )

    def save(self, *, rendered: bool = True) -> None:
        """The incident's JSON and ledger; with `rendered`, its Markdown and HTML too. A stage
        saves only the JSON (what a resumed run and `runbook report` read back: rendering both
        views after every stage was most of an incident's CPU, docs/scale.md); the engine
        renders them once, when the run ends however it ends."""
        data = self.incident.to_json()
        if rendered:
            write_reports(self.folder, data)
        else:
            write_atomic(self.folder / "report.json", report_json(data))
        write_atomic(
            self.folder / "ledger.jsonl",
            "".join(json.dumps(a, default=str) + "\n" for a in data["actions"]),
        )

    @contextlib.contextmanager
    def step(self, name: str, progress: Callable[[str], None]):
        s = Step(name=name, started=time.time())
        self.incident.timeline.append(s)
        progress(f"{name} ...")
        try:
            yield s
        except RunbookError as e:
            refused = int(e.exit_code) == int(ExitCode.NEEDS_HUMAN)  # a grant, a person
            s.status = "refused" if refused else "failed"
            s.finished, s.detail = time.time(), str(e).splitlines()[0]
            self.incident.errors.append(f"{name}: {e}")
            self.incident.status, self.incident.stopped_at = "stopped", name
            self.incident.stop_exit = int(e.exit_code)
            progress(f"{name}: {'REFUSED' if refused else 'FAILED'}: {e}")
            self.save(rendered=False)
            raise Stopped(name) from e
        else:
            s.finished = time.time()
            if s.status == "running":
                s.status = "ok"
            progress(f"{name}: {s.status}{': ' + s.detail if s.detail else ''}")
            self.save(rendered=False)
