"""Which log lines matter, and how to pull only those from a remote host.

One list of patterns serves both sides: GNU grep -E runs it on the host that holds the log (argv
quoted, output capped with `head -c`), and Python runs the same patterns over local files. Logs of
a 512-rank job reach gigabytes of progress lines; only the failure lines and a few lines of context
(multi-line OOM blocks, elastic reports) ever leave the node.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

# Extended regular expressions that GNU grep and Python's re read alike (no \d, no lookaround).
PATTERNS = [
    "out of memory",
    "OutOfMemoryError",
    "Tried to allocate",
    "would exceed allowed memory",
    "CUDA calloc",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "Watchdog caught",
    "timed out in blocking wait",
    "Root Cause",
    "ChildFailedError",
    "exitcode",
    "local_rank",
    "error_file",
    "^[^a-zA-Z]*\\[[0-9]+\\]:[[:space:]]*$",
    "(time|host|rank|traceback)[[:space:]]+:",
    "srun: error",
    "slurmstepd",
    "oom[-_]kill",
    "CANCELLED AT",
    "return code =",
    "Killing subprocess",
    "Error:",
    "Error$",
    "Exception",
    "CUDA error",
    "NCCL WARN",
    "[0-9]+ (GiB|MiB|KiB|bytes)",
]
CONTEXT_AFTER = 6  # the cudaMallocAsync block and elastic entries run over several lines
REMOTE_CAP_BYTES = 1 << 20  # at most 1 MiB leaves the node, whatever the log's size

_PY = re.compile("|".join(p.replace("[[:space:]]", r"\s") for p in PATTERNS))


def relevant(line: str) -> bool:
    return _PY.search(line) is not None


@dataclass
class Excerpt:
    """Lines kept from one log, with their 1-based line numbers in the original file."""

    path: str
    lines: list[tuple[int, str]] = field(default_factory=list)
    truncated: bool = False  # the cap cut the excerpt short

    def text(self) -> str:
        return "\n".join(t for _, t in self.lines)


def filter_lines(lines: Iterable[str], path: str = "-", context: int = CONTEXT_AFTER) -> Excerpt:
    """Python side: the matching lines plus `context` lines after each."""
    out = Excerpt(path)
    after = 0
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if relevant(line):
            out.lines.append((n, line))
            after = context
        elif after:
            out.lines.append((n, line))
            after -= 1
    return out


def tail_lines(lines: Iterable[str], n: int) -> list[str]:
    return list(deque(lines, maxlen=n))


def fnmatch_escape(text: str) -> str:
    """A literal piece of a file name made safe for find -name (fnmatch honours backslashes)."""
    return re.sub(r"([\\*?\[\]])", r"\\\1", text)


def remote_grep_argv(
    directory: str, name_glob: str, *, context: int = CONTEXT_AFTER, cap: int = REMOTE_CAP_BYTES
) -> list[str]:
    """argv for the host holding the logs: matching lines (+context) of files in `directory`
    whose name matches `name_glob`, a NUL after each file name, at most `cap` bytes.

    The script is a constant; everything that varies is a positional argument, quoted by the
    transport, and files are found with `find -name` so a Slurm pattern such as %t becomes a glob
    without any shell expansion of untrusted names. The patterns travel as one newline-joined -e
    argument, which GNU grep reads as alternatives."""
    script = (
        "dir=$1; glob=$2; ctx=$3; cap=$4; pats=$5; "
        'find "$dir" -maxdepth 1 -type f -name "$glob" -print0 2>/dev/null | sort -z | '
        'LC_ALL=C xargs -0 -r grep -a -n -H -Z -E -A "$ctx" -e "$pats" -- 2>/dev/null | '
        'head -c "$cap"'
    )
    return ["sh", "-c", script, "runbook-scan", directory, name_glob, str(context), str(cap),
            "\n".join(PATTERNS)]  # fmt: skip


def parse_grep_output(out: str, cap: int = REMOTE_CAP_BYTES) -> dict[str, Excerpt]:
    """`grep -n -H -Z -A` output -> one Excerpt per file. Matches read `path\\0N:text`, context
    lines `path\\0N-text`, groups are separated by `--`."""
    excerpts: dict[str, Excerpt] = {}
    for line in out.split("\n"):
        if "\0" not in line:
            continue  # "--" separators, or a line cut by the cap
        path, _, rest = line.partition("\0")
        m = re.match(r"(\d+)[:-](.*)", rest, re.S)
        if not m:
            continue
        excerpts.setdefault(path, Excerpt(path)).lines.append((int(m.group(1)), m.group(2)))
    if len(out.encode("utf-8", "replace")) >= cap:
        for e in excerpts.values():
            e.truncated = True
    return excerpts


def read_local(path: str, *, whole_below: int = 8 << 20) -> Excerpt:
    """A local log: small files whole, large ones through the same filter as the remote side."""
    size = os.path.getsize(path)
    with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
        if size <= whole_below:
            text = f.read()
            return Excerpt(path, list(enumerate(text.split("\n"), 1)))
        return filter_lines(f, path)
