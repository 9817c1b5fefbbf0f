"""Golden files: compare a rendered text with its recorded copy; RUNBOOK_RERECORD=1 re-records."""

from __future__ import annotations

import os
from pathlib import Path

RERECORD = os.environ.get("RUNBOOK_RERECORD") == "1"


def check_golden(path: Path, text: str, test_file: str) -> None:
    if RERECORD:
        path.write_text(text)
    how = f"RUNBOOK_RERECORD=1 python3 -m pytest {test_file}"
    assert path.exists(), f"no golden file {path}: run {how}"
    assert text == path.read_text(), (
        f"{path.name} changed; if intended, re-record with {how}; review `git diff {path.parent}`"
    )
