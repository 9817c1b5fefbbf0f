"""Reading captured input files for offline diagnosis, with errors that name the file."""

from __future__ import annotations

import io
import os
import sys

from runbook.errors import InputError
from runbook.evidence.log_filter import Excerpt, read_local, read_stream


def _looks_binary(path: str) -> bool:
    with open(path, "rb") as f:
        head = f.read(8192)
    if b"\0" in head:
        return True
    text_bytes = sum(1 for b in head if b in b"\t\n\r\f\b" or 32 <= b < 127 or b >= 128)
    return bool(head) and text_bytes / len(head) < 0.85


def read_text_input(path: str, what: str) -> Excerpt:
    """The file as an Excerpt (large logs pre-filtered); InputError naming the file otherwise.
    "-" is standard input (a pasted log)."""
    if path == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError(
                f"{what} -: standard input is a terminal, expected a log piped or pasted in",
                hint="pipe it (`cat slurm-123.out | runbook diagnose --log -`) or end a paste "
                "with Ctrl-D",
            )
        stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace",
                                  newline="\n") if hasattr(sys.stdin, "buffer") else sys.stdin
        excerpt = read_stream(stream, "<stdin>")
        if not any(t for _, t in excerpt.lines):
            raise InputError(f"{what} -: standard input was empty", hint="pipe the log in")
        return excerpt
    if not os.path.exists(path):
        raise InputError(f"{what} {path}: no such file", hint="check the path")
    if os.path.isdir(path):
        raise InputError(f"{what} {path}: is a directory, expected a file")
    if not os.access(path, os.R_OK):
        raise InputError(
            f"{what} {path}: not readable by this user", hint="check its permissions, or copy it"
        )
    try:
        if os.path.getsize(path) == 0:
            raise InputError(f"{what} {path}: empty file", hint="was the job's output captured?")
        if _looks_binary(path):
            raise InputError(
                f"{what} {path}: binary data, expected text",
                hint="give the job's text output (slurm-JOBID.out), not a core dump or archive",
            )
        return read_local(path)
    except OSError as e:
        raise InputError(f"{what} {path}: cannot read: {e.strerror or e}") from None
