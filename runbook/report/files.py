"""Writing an incident folder's files: each file whole or not at all, so a crash mid-write never
leaves a half report for the next engineer."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from runbook.report.render import render_all


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # runbook's alone (recorder)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_reports(folder: Path | str, data: dict) -> dict[str, str]:
    """Render the report (md, json, html) from its data into `folder`; returns what was written."""
    out = render_all(data)
    for name, text in out.items():
        write_atomic(Path(folder) / name, text)
    return out
