"""Which log lines matter, and how to pull only those from a remote host.

One list of patterns serves both sides: GNU grep -E runs it on the host that holds the log (argv
quoted, output capped with `head -c`), and Python runs the same patterns over local files. Logs of
a 512-rank job reach gigabytes of progress lines; only the failure lines and a few lines of context
(multi-line OOM blocks, elastic reports) ever leave the node.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import field
from pathlib import Path

from runbook.evidence import launchers
from runbook.evidence.units import small_int
from runbook.lazyre import lazy
from runbook.record import record

# Fixed strings (grep -F), one list for both sides: these, then every launcher recognizer's gates
# (evidence/launchers/: the strings one of which every line a recognizer reads holds, written
# there once). Chosen so that almost every string starts with a byte that is rare in progress
# lines (an upper-case letter, "(", "*"): GNU grep's multi-string search is several times slower
# when candidates start with common lower-case letters (bench/scan_remote.py measured 0.35 s vs
# 0.23 s per GiB). Each of these covers a family the recognizers do not:
#   "Error"  OutOfMemoryError, ChildFailedError, DistBackendError, "RuntimeError: cuda runtime
#            error (2) : out of memory", "Exception has occurred: RuntimeError"
#   "CUDA"   "CUDA out of memory", "CUDA error: out of memory", "Failed to CUDA calloc"
#   "***"    slurmstepd's banners, HF Trainer's "***** Running Evaluation *****"
#   The shell's job-control words for a process it lost ("Killed", "Terminated", ...).
#   C++ code naming the failed call, its location, then "-> out of memory" (kmcuda); the ">"
#            is rare in progress lines, and the call is on the line before (context).
_OWN = [
    "Error",
    "ERROR",
    "Exception",
    "CUDA",
    "HIP out",
    "XPU out",
    "MPS backend",
    "THCudaCheck",
    "NCCL WARN",
    "Tried to allocate",
    "Allocation on device",
    "***",
    "> out of memory",
    "Terminated",
    "Killed",
    "Aborted",
    "Segmentation fault",
    "Bus error",
    "RUNBOOK_INSTRUMENT",
    "If reserved",
    "ECC",
    "Xid",
    "NVRM",
    # When and where it ran out (docs/design.md §3.1): the failing rank's traceback frames, the stage
    # markers (HF Trainer's "***** Running Evaluation *****" is under "***"), and the memory
    # series runbook's trend reads (Megatron's "memory (MB) |", DeepSpeed's "Max_MA",
    # torchtitan's "memory: 23.86GiB(25.12%)"; "CUDA memory allocation retries" is under CUDA).
    "Traceback (most recent call last)",
    'File "',
    "Evaluating",
    "Validating",
    "Validation",
    "Loading checkpoint",
    "Resuming",
    "Saving checkpoint",
    "Starting training",
    "Start training",
    # A program refusing its arguments at start (verify: a rerun's change it does not take):
    # argparse's "error: unrecognized arguments", HfArgumentParser's unused arguments, Hydra's
    # overrides, click's and fire's words.
    "error: unrecognized arguments",
    "error: argument ",
    "HfArgumentParser",
    "Could not override",
    "is not in struct",
    "No such option",
    "Could not consume arg",
    "(MB) |",
    "Max_MA",
    "GiB(",
]
PATTERNS = list(dict.fromkeys([*_OWN, *launchers.gates()]))
CONTEXT_BEFORE = 3  # a report entry's "[0]:", time and host lines precede its rank line
CONTEXT_AFTER = 6  # the cudaMallocAsync block and an entry's exitcode/traceback lines follow
REMOTE_CAP_BYTES = 1 << 20  # at most 1 MiB leaves the node, whatever the log's size
KEEP_CAP = REMOTE_CAP_BYTES  # kept lines of a local file: as much as the node-side scan sends
CAP_NOTE = f"matching lines past the first {KEEP_CAP >> 20} MiB were left out"
# The last lines of a log, tracebacks' bodies left out: the progress line before the failure.
# After an OOM every rank of a node may print its traceback (73 lines for GPT-2 in transformers
# on a real H200, tests/data/gpu/families): 8 of those buried the last step line of any tail of
# the log's last lines. A traceback's header, its frames (two spaces, File), their code (four
# spaces) and carets, after a launcher's rank label ("0: ", "[rank3]: ", "[default0]:").
TAIL_LINES = 200
TAIL_READ = 20  # the tail is looked for in the last TAIL_LINES x TAIL_READ lines of a log
_TB_LABEL = r"\[?[A-Za-z0-9_]+\]?: ?"
_TB_STARTS = r"Traceback \(most recent call last\)|  File |    "
TRACEBACK_BODY = lazy(rf"^(?:{_TB_LABEL})?(?:{_TB_STARTS}|\s*[~^]+$)")
TRACEBACK_BODY_ERE = rf"^({_TB_LABEL})?({_TB_STARTS}|[[:space:]]*[~^]+$)"  # for grep -E on a node

_PY = lazy("|".join(re.escape(p) for p in PATTERNS))


def relevant(line: str) -> bool:
    return _PY.search(line) is not None


@record
class Excerpt:
    """Lines kept from one log, with their 1-based line numbers in the original file."""

    path: str
    lines: list[tuple[int, str]] = field(default_factory=list)
    truncated: bool = False  # the cap cut the excerpt short
    tail: list[str] = field(default_factory=list)  # the file's last lines (progress, verify)
    notes: list[str] = field(default_factory=list)  # what reading left out, in words
    # What the numbers in `lines` count: "line" (1-based line numbers) or "byte" (the offset of
    # the line's start: a large local file read by grep -b, which need not count newlines).
    numbering: str = "line"
    mtime: float | None = None  # when the file was last written (epoch s, the host's clock)
    # A watched file (the sweep's watch, issue 65): its identity (device:inode/checksum of its
    # first bytes), the bytes read [start, end), and whether more than the growth cap was new
    # (then only its last bytes were read).
    ident: str | None = None
    start: int = 0
    end: int | None = None
    cut: bool = False
    # A watched file's memory-series lines, apart from `lines` (the watch reads them for the
    # trends only: evidence/_watch_node.py).
    series: list[tuple[int, str]] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(t for _, t in self.lines)


def filter_lines(
    lines: Iterable[str],
    path: str = "-",
    want: Callable[[str], bool] = relevant,
    before: int = CONTEXT_BEFORE,
    after: int = CONTEXT_AFTER,
) -> Excerpt:
    """The Python side of the node-side grep (one filter, for local files and tests alike), over
    lines without their newline: lines `want` keeps with `before`/`after` lines of context, at
    most KEEP_CAP bytes of them (the earliest: the first failure comes first), and the last
    TAIL_LINES lines that are not a traceback's body (the very last line whatever it is)."""
    out = Excerpt(path)
    ctx: deque[tuple[int, str]] = deque(maxlen=before)
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    kept = remaining = 0
    last = None
    for n, line in enumerate(lines, 1):
        if last is not None and not TRACEBACK_BODY.search(last):
            tail.append(last)
        last = line
        hit = want(line)
        if (hit or remaining) and kept < KEEP_CAP:
            if hit:
                out.lines.extend(ctx)
                kept += sum(len(t) for _, t in ctx)
                ctx.clear()
                remaining = after
            else:
                remaining -= 1
            out.lines.append((n, line))
            kept += len(line)
        elif hit or remaining:
            out.truncated = True
            remaining = max(0, remaining - 1)
        else:
            ctx.append((n, line))
    if last is not None:
        tail.append(last)
    out.tail = list(tail)
    if out.truncated:
        out.notes.append(CAP_NOTE)
    return out


# Shell for one (dir, glob, owner) location: matching lines with context, NUL after each file
# name, capped; then, if asked, the tail of each file after an `@@tail NAME` line.
# With an owner, only regular files that belong to the job's owner are read: a symbolic link
# (find never follows one) or a file of another account in the job's folder is left unread and
# named (`@@skipped`), so nothing the owner did not write reaches the report. A folder this
# account may not enter says so (`@@denied`): never read as "no failure found".
_OWNER_TEST = '${owner:+-user "$owner"} '
_SCAN_GUARD = (
    'if [ -d "$dir" ]; then '
    '{ [ -r "$dir" ] && [ -x "$dir" ]; } || printf "@@denied %s\\0%s\\n" "$(id -un)" "$dir"; '
    'elif ! [ -x "$(dirname -- "$dir")" ]; then '
    'printf "@@denied %s\\0%s\\n" "$(id -un)" "$(dirname -- "$dir")"; fi; '
    'if [ -n "$owner" ]; then '
    'find "$dir" -maxdepth 1 -name "$glob" \\( ! -type f -o ! -user "$owner" \\) '
    '-printf "@@skipped %y %u\\0%p\\n" 2>/dev/null | head -n 20; fi; '
)
_SCAN_ONE_LOCATION = (
    'find "$dir" -maxdepth 1 -type f ' + _OWNER_TEST + '-name "$glob" -print0 2>/dev/null | '
    "sort -z | "
    'LC_ALL=C xargs -0 -r grep -a -n -H -Z -F -B "$b" -A "$a" -e "$pats" -- 2>/dev/null | '
    'head -c "$cap"; '
    'if [ "$tail" -gt 0 ]; then '
    'find "$dir" -maxdepth 1 -type f ' + _OWNER_TEST + '-name "$glob" -print0 2>/dev/null | '
    "sort -z | "
    # "@@tail PATH\0MTIME": the file's modification time (epoch s), as its host says it.
    'xargs -0 -r -I{} sh -c \'printf "\\n@@tail %s\\0%s\\n" "$1" "$(stat -c %Y -- "$1")"; '
    # The last line as it is (a live log's may lack its newline yet: parse_grep_output tells).
    'tail -n "$(($2 * $4))" -- "$1" | sed "\\$d" | grep -a -v -E -e "$3" | tail -n "$(($2 - 1))"; '
    'tail -n 1 -- "$1"\' '
    'tail {} "$tail" "$tb" "$tail_read" | head -c "$cap"; fi'
)


# The watch (issue 65): a host's watched locations go to one small standard-library Python
# program on the node, one process for all of them (evidence/_watch_node.py: each file from where
# the last period stopped, by its identity; one grep over the new bytes; the chunk's last lines),
# where the node has python3; else each location is scanned whole.
TAIL_WINDOW = 512 * 1024
WATCH_SERIES_BYTES = 4 << 20  # the latest series lines a watched location sends, at most


@functools.cache
def _watcher() -> str:
    return (Path(__file__).parent / "_watch_node.py").read_text()


WATCH_GROW = 256 << 20  # [sweep] watch_max_read_mib's default


def remote_grep_many_argv(
    locations: list[tuple[str, ...]],
    *,
    cap: int = REMOTE_CAP_BYTES,
    tail: int = 0,
    grow: int = WATCH_GROW,
) -> list[str]:
    """One exec for many (directory, file glob[, owner[, known]]) locations: the sweep reads
    every candidate job's log on a host in one round trip. Each location's output follows an
    `@@loc N` line. With an owner (the job's user), only that account's regular files are
    read (see _SCAN_GUARD). With `known` (watch_known()), the location is watched: each file
    read from where the last period stopped (evidence/_watch_node.py, one process for all)."""
    script = (
        "b=$1; a=$2; cap=$3; pats=$4; tail=$5; tb=$6; tail_read=$7; grow=$8; watcher=$9; "
        "tbpy=${10}; nonce=${11}; shift 11; n=0; w=; py=; "
        "command -v python3 >/dev/null 2>&1 && py=1; "
        # The host's clock, so a log's age is measured on the clock that stamped it; and this
        # exec's nonce, which every location's marker carries: a log line that reads "@@loc 0"
        # (a job's output is anyone's to write) cannot pass for another job's location.
        'printf "@@now %s %s\\n" "$(date +%s)" "$nonce"; '
        # Each location in turn, rotated to the end of "$@": after the loop "$@" holds them all
        # again, for the one watcher process.
        'i=$(($# / 4)); while [ "$i" -gt 0 ]; do dir=$1; glob=$2; owner=$3; known=$4; shift 4; '
        'set -- "$@" "$dir" "$glob" "$owner" "$known"; i=$((i - 1)); '
        # The newline before each marker: a log whose last line is still being written ends
        # without one, and must not run into the marker (parse_grep_output drops that line).
        'printf "\\n@@loc %s %s\\n" "$nonce" "$n"; '
        + _SCAN_GUARD
        + 'if [ -z "$known" ]; then '
        + _SCAN_ONE_LOCATION
        + '; elif [ -n "$py" ]; then w=1; else '
        + _SCAN_ONE_LOCATION
        + "; fi; n=$((n + 1)); done; "
        # The watched locations' reads, in one process (its own markers, after the guards'),
        # only the owner's regular files (as find's -type f -user above).
        'if [ -n "$w" ]; then python3 -I -S -c "$watcher" "$b" "$a" "$cap" "$tail" '
        '"$tail_read" "$grow" "$tbpy" "$pats" "$nonce" "$@"; fi'
    )
    flat = [x for loc in locations for x in (*loc[:4], *[""] * (4 - len(loc)))]
    return [
        "sh",
        "-c",
        script,
        "runbook-sweep",
        str(CONTEXT_BEFORE),
        str(CONTEXT_AFTER),
        str(cap),
        "\n".join(PATTERNS),
        str(tail),
        TRACEBACK_BODY_ERE,
        str(TAIL_READ),
        str(grow),
        _watcher(),
        TRACEBACK_BODY.pattern,
        secrets.token_hex(8),
        *flat,
    ]


def watch_known(files: dict[str, tuple]) -> str:
    """The `known` argument of a watched location: {identity: (offset, lines before it, the
    checksum of its first bytes)}; "W" alone when nothing was read yet (every file from its
    start). An identity is the node's device:inode plus that checksum ("64769:1234/3301125")."""
    out = []
    for key, (upto, *_) in files.items():
        ino, _, fp = key.partition("/")
        if re.fullmatch(r"\d{1,20}:\d{1,20}", ino) and fp.isdigit():
            out.append(f"{ino} {int(upto)} - {fp}\n")
    return "W" + "".join(out)


_NOW = re.compile(r"@@now (\d{9,11})(?: ([0-9a-f]{16}))?\n")


def host_now(out: str) -> float | None:
    """The host's clock at the read (remote_grep_many_argv's first line), else None."""
    m = _NOW.match(out)
    return float(m.group(1)) if m else None


def split_locations(out: str) -> dict[int, str]:
    """The output of remote_grep_many_argv, per location index. A location's marker carries
    the exec's nonce (its first line says it): a log's own "@@loc N" line, raw in a tail, is
    that log's text, never a switch to another job's location. A location may come in two
    pieces (its guard's lines, then the watcher's files): they are joined."""
    m = _NOW.match(out)
    mark = f"@@loc {m.group(2)} " if m and m.group(2) else "@@loc "
    parts: dict[int, list[str]] = {}
    current: int | None = None
    for line in out.split("\n"):
        if line.startswith(mark) and (n := small_int(line[len(mark) :])) is not None:
            current = n
            parts.setdefault(current, [])
        elif current is not None:
            parts[current].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


@record
class Refusals:
    """What a location's scan could not, or would not, read: folders this account may not
    enter ((account, folder)), and files left unread ((kind, owner, path): a symbolic link, a
    file of another account)."""

    denied: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


_KINDS = {"l": "a symbolic link", "d": "a folder", "f": "a file"}


def refusals(out: str) -> Refusals:
    """The `@@denied` and `@@skipped` lines of one location's output."""
    r = Refusals()
    for line in out.split("\n"):
        head, _, path = line.partition("\0")
        if head.startswith("@@denied ") and path:
            r.denied.append((head[len("@@denied ") :], path))
        elif head.startswith("@@skipped ") and path:
            kind, _, owner = head[len("@@skipped ") :].partition(" ")
            r.skipped.append((_KINDS.get(kind, "not a regular file"), owner, path))
    return r


def parse_grep_output(out: str, cap: int = REMOTE_CAP_BYTES) -> dict[str, Excerpt]:
    """`grep -n -H -Z -A` output -> one Excerpt per file. Matches read `path\\0N:text`, context
    lines `path\\0N-text`, groups are separated by `--`."""
    excerpts: dict[str, Excerpt] = {}
    tail_of: Excerpt | None = None
    for line in out.split("\n"):
        if line.startswith("@@"):  # a marker: few lines, tried first only where one can be
            if line.startswith("@@file ") and "\0" in line:
                _end_tail(tail_of)
                tail_of = None
                _watched(excerpts, line)
                continue
            if line.startswith("@@tail ") and "\0" in line:
                _end_tail(tail_of)
                path, _, mtime = line[len("@@tail ") :].partition("\0")
                tail_of = _excerpt(excerpts, path)
                tail_of.mtime = float(mtime) if mtime.strip().isdigit() else None
                continue
        if tail_of is not None:
            tail_of.tail.append(line)
            continue
        path, nul, rest = line.partition("\0")
        if not nul or line.startswith(("@@denied ", "@@skipped ")):
            continue  # "--" separators, a line cut by the cap, or what was not read
        m = _ROW.match(rest)
        if not m:
            continue
        e = _excerpt(excerpts, path)
        (e.series if m.group(2) == "=" else e.lines).append((int(m.group(1)), m.group(3)))
    _end_tail(tail_of)
    if len(out.encode("utf-8", "replace")) >= cap:
        for e in excerpts.values():
            # A watched file says itself whether its lines were capped (@@file's CAPPED): its
            # series lines and tail come on top of them.
            e.truncated = e.truncated or e.ident is None
    return excerpts


_ROW = re.compile(r"(\d{1,18}(?!\d))([:=-])(.*)", re.S)


def _excerpt(excerpts: dict[str, Excerpt], path: str) -> Excerpt:
    """The path's Excerpt, made on its first line only (not one per line, thrown away)."""
    e = excerpts.get(path)
    if e is None:
        e = excerpts[path] = Excerpt(path)
    return e


def _watched(excerpts: dict[str, Excerpt], line: str) -> Excerpt | None:
    """A watched file's "@@file PATH\0ID FROM END CAPPED MTIME CUT CRC" line, as its Excerpt."""
    path, _, rest = line[len("@@file ") :].partition("\0")
    fields = rest.split()
    if len(fields) != 7 or not all(re.fullmatch(r"-?\d{1,20}", f) for f in fields[1:]):
        return None
    ident, start, end, capped, mtime, cut, fp = fields[0], *map(int, fields[1:])
    e = _excerpt(excerpts, path)
    e.ident, e.start, e.end, e.mtime, e.cut = f"{ident}/{fp}", start, end, float(mtime), cut == 1
    e.truncated = capped == 1
    e.numbering = "byte"  # each line by its byte offset in the file: no newline counted
    if e.cut:
        e.notes.append(
            f"{path}: more than the watch reads in one period was new; only its last "
            f"{(end - start) / 2**20:.1f} MiB were read"
        )
    return e


def _end_tail(e: Excerpt | None) -> None:
    """A file's tail ends with the empty line its final newline leaves before the next marker.
    Where it does not, the file's last line was still being written when it was read (a live
    job's log): never read as a figure, so it is left out and said."""
    if e is None or not e.tail:
        return
    if e.tail[-1] == "":
        e.tail.pop()
    else:
        cut = e.tail.pop()
        e.notes.append(
            f"{e.path}: its last line was still being written and was left out: {cut[:80]!r}"
        )
