"""Reading captured input files for offline diagnosis: bounded in time and memory whatever the file.

Files as people have them: a log on local disk, a paste on standard input (`-`), a FIFO or
`<(zcat log)`, a rotated log compressed with gzip, xz or zstd (recognised by its magic bytes, not
its name), a crash-truncated file with runs of NUL bytes. Each kind of input keeps what its parser
needs: a launcher log its failure lines with context and its tail (the same fixed strings as the
node-side scan; a large regular file goes through `grep -F` itself, at grep speed), a kernel log its
NVRM/Xid lines, small structured outputs (nvidia-smi, sacct, scontrol) whole. Memory stays bounded:
at most KEEP_CAP bytes of kept lines, no line longer than LINE_CAP, and what was cut is said.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any

from runbook.errors import InputError
from runbook.evidence.log_filter import (
    CAP_NOTE,
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    KEEP_CAP,
    PATTERNS,
    TAIL_LINES,
    TRACEBACK_BODY,
    Excerpt,
    filter_lines,
)

WHOLE_BELOW = 8 << 20  # inputs up to this size are kept whole (every line, for every parser)
LINE_CAP = 16 << 10  # a longer line keeps its first and last LINE_CAP/2 characters
CHUNK = 1 << 20
MAGIC = {b"\x1f\x8b": "gzip", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
PRINTABLE_SHARE = 0.85  # of the non-NUL bytes of the first chunk; below it the input is binary


def kernel_line(line: str) -> bool:
    """Lines the Xid parser reads: NVRM's (Xid, GSP banner, GPU identity), NVSwitch SXid, and
    "fallen off the bus"."""
    return "NVRM" in line or "Xid" in line or "fallen off the bus" in line


def open_input(path: str, what: str) -> tuple[io.BufferedIOBase, str, bool]:
    """(a binary stream, its name, whether it is a regular uncompressed file) for a path or "-";
    compressed inputs are decompressed on the fly. InputError naming the input otherwise."""
    if path == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError(
                f"{what} -: standard input is a terminal, expected a log piped or pasted in",
                hint="pipe it (`cat slurm-123.out | runbook diagnose --log -`) or end a paste "
                "with Ctrl-D",
            )
        raw = getattr(sys.stdin, "buffer", None) or io.BytesIO(sys.stdin.read().encode())
        name, regular = "<stdin>", False
    else:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise InputError(f"{what} {path}: no such file", hint="check the path") from None
        except OSError as e:
            raise InputError(f"{what} {path}: cannot read: {e.strerror or e}") from None
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{what} {path}: is a directory, expected a file")
        try:
            raw = open(path, "rb")  # noqa: SIM115 - handed to the caller, who closes it
        except PermissionError:
            raise InputError(
                f"{what} {path}: not readable by this user",
                hint="check its permissions, or copy it",
            ) from None
        except OSError as e:
            raise InputError(f"{what} {path}: cannot read: {e.strerror or e}") from None
        name, regular = path, stat.S_ISREG(st.st_mode)
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
    head = buffered.peek(8)[:8]
    kind = next((k for magic, k in MAGIC.items() if head.startswith(magic)), None)
    if kind is None:
        return buffered, name, regular
    return _decompress(buffered, kind, name, what), f"{name} ({kind})", False


def _decompress(stream, kind: str, name: str, what: str):
    if kind == "gzip":
        import gzip

        return io.BufferedReader(gzip.GzipFile(fileobj=stream))
    if kind == "xz":
        import lzma

        return io.BufferedReader(lzma.LZMAFile(stream))
    try:
        import zstandard  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        raise InputError(
            f"{what} {name}: zstd-compressed, and the zstandard module is not installed",
            hint="pip install zstandard, or pipe it in: zstd -dc FILE | runbook diagnose --log -",
        ) from None
    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(stream))


def _looks_binary(chunk: bytes) -> bool:
    """Binary by the share of printable characters among the bytes that are not NUL: a
    crash-truncated log has NUL runs (zero-filled blocks) in otherwise good text; an ELF, a core
    or a picture is full of other control bytes and of bytes that are not UTF-8."""
    body = chunk.replace(b"\0", b"")
    if not body:
        return False
    decoded = body.decode("utf-8", "replace")
    bad = sum(1 for c in decoded if c == "\ufffd" or (c < " " and c not in "\t\n\r\f\b\x1b"))
    return 1 - bad / len(decoded) < PRINTABLE_SHARE


def iter_lines(stream, cut: list[int]) -> Iterator[str]:
    """Decoded lines of a binary stream, read in chunks: NULs dropped, each line at most LINE_CAP
    characters (head and tail kept, the cut counted in cut[0]), so one endless line (a tqdm bar
    redrawn with \\r for hours) costs no more memory than a short one."""
    half = LINE_CAP // 2
    head = bytearray()
    tail = bytearray()
    dropped = 0

    def emit() -> str:
        nonlocal dropped
        if dropped:
            cut[0] += dropped
            text = bytes(head) + f" ...[{dropped} bytes cut]... ".encode() + bytes(tail)
        else:
            text = bytes(head) + bytes(tail)
        head.clear()
        tail.clear()
        dropped = 0
        return text.replace(b"\0", b"").decode("utf-8", "replace").rstrip("\r")

    while chunk := stream.read(CHUNK):
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            room = half - len(head)
            if room > 0:
                head += piece[:room]
                piece = piece[room:]
            if piece:
                tail += piece
                if len(tail) > half:
                    dropped += len(tail) - half
                    del tail[: len(tail) - half]
            if nl < 0:
                break
            yield emit()
            start = nl + 1
    if head or tail or dropped:
        yield emit()


def read_text_input(path: str, what: str, keep: str = "log") -> Excerpt:
    """An input as an Excerpt with 1-based line numbers. `keep`: "log" (launcher log: failure
    lines with context, and the tail), "kernel" (Xid lines), "whole" (structured outputs: kept
    whole up to WHOLE_BELOW, then cut). InputError naming the input when it cannot be read."""
    return start_text_input(path, what, keep)()


def start_text_input(path: str, what: str, keep: str = "log") -> Callable[[], Excerpt]:
    """read_text_input in two halves: a large regular log's greps start now and run while the
    caller loads what it needs to read their answer; the rest, and the Excerpt, when the
    returned call is made. InputError naming the input from either half."""
    stream, name, regular = open_input(path, what)
    try:
        first = stream.peek(8192)[:8192]  # type: ignore[attr-defined]  # a BufferedReader
        if _looks_binary(first):
            raise InputError(
                f"{what} {name}: binary data, expected text",
                hint="give the job's text output (slurm-JOBID.out), not a core dump or archive",
            )
        big = regular and keep == "log" and os.path.getsize(path) > WHOLE_BELOW
    except BaseException:
        _close(stream)
        raise
    if big:
        _close(stream)
        return _start_grep(path, what)
    return lambda: _read_stream(stream, name, what, keep)


def _close(stream) -> None:
    if stream is not getattr(sys.stdin, "buffer", None):
        stream.close()


def _read_stream(stream, name: str, what: str, keep: str) -> Excerpt:
    try:
        cut = [0]
        excerpt = _keep(iter_lines(stream, cut), name, keep)
        if cut[0]:
            excerpt.notes.append(f"long lines cut: {cut[0]} bytes left out")
    except OSError as e:  # EIO, a corrupt gzip/xz stream, a vanished file
        raise InputError(
            f"{what} {name}: cannot read: {getattr(e, 'strerror', None) or e}"
        ) from None
    except EOFError:
        raise InputError(f"{what} {name}: compressed stream ends early (truncated file?)") from None
    finally:
        _close(stream)
    if not excerpt.lines and not excerpt.tail:
        raise InputError(f"{what} {name}: empty", hint="was the job's output captured?")
    return excerpt


def _keep(lines: Iterator[str], name: str, keep: str) -> Excerpt:
    """Whole while under WHOLE_BELOW; past it, only the lines this kind of input needs."""
    held: list[str] = []
    size = 0
    for line in lines:
        held.append(line)
        size += len(line) + 1
        if size > WHOLE_BELOW:
            break
    else:
        return Excerpt(name, list(enumerate(held, 1)))
    rest = _chain(held, lines)
    if keep == "log":
        return filter_lines(rest, name)
    if keep == "kernel":
        return filter_lines(rest, name, kernel_line, 0, 0)
    out = Excerpt(name, list(enumerate(held, 1)), truncated=True)
    out.notes.append(f"only the first {_mib(WHOLE_BELOW)} were read")
    return out


def _chain(first: list[str], rest: Iterator[str]) -> Iterator[str]:
    yield from first
    first.clear()  # the held lines are not kept twice while the rest streams by
    yield from rest


# grep keeps a whole line in memory: under this address-space limit a line of hundreds of MiB makes
# it stop with "memory exhausted" (exit 2) instead, and the file is read by the streaming reader.
GREP_MEMORY = 64 << 20


# A file this large is read by two greps at once, each over about half of it, where the host
# has two cores: the local scan's wall time is then about half a grep pass (bench/diagnose_local.py).
SPLIT_FROM = 64 << 20
# The two halves overlap by this many whole lines, so every match keeps its context in one of
# them (CONTEXT_BEFORE lines before it, CONTEXT_AFTER after).
OVERLAP_LINES = CONTEXT_BEFORE + CONTEXT_AFTER + 2
_SPLIT_WINDOW = 1 << 20  # bytes around the split looked at for those lines
# The first piece reaches grep through `head -c`, a pipe: read alone it took 0.113 s for 128 MiB
# where the second, read from the file, took 0.094 s; given 45 % of the file, both end together
# (the pair over 256 MiB: 0.135 s, against 0.150 s at an even split).
FIRST_SHARE = 0.45


def split_points(head: bytes, at: int) -> tuple[int, int] | None:
    """(where the second half starts, where the first ends): line starts in `head` (the file's
    bytes from offset `at`), OVERLAP_LINES whole lines apart, around the middle of `head`; None
    when its lines are too long to find them (the file is then read by one grep)."""
    mid = len(head) // 2
    nl = head.find(b"\n", mid)
    if nl < 0:
        return None
    end, start = nl + 1, nl
    for _ in range(OVERLAP_LINES):
        start = head.rfind(b"\n", 0, start)
        if start < 0:
            return None
    return at + start + 1, at + end


def _pieces(path: str, size: int) -> list[tuple[int, int]]:
    """The byte ranges the file is read in: one, or two overlapping at line starts."""
    if size < SPLIT_FROM or (os.cpu_count() or 1) < 2:
        return [(0, size)]
    at = max(0, int(size * FIRST_SHARE) - _SPLIT_WINDOW // 2)
    with open(path, "rb") as f:
        f.seek(at)
        points = split_points(f.read(_SPLIT_WINDOW), at)
    if points is None:
        return [(0, size)]
    second, first_end = points
    return [(0, first_end), (second, size)]


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (GREP_MEMORY, GREP_MEMORY))


_GREP = [
    "grep",
    "-a",
    # -b, not -n: a byte offset costs grep nothing, a line number costs counting every newline
    # of the file (+15 % on a 1 GiB log); the offsets order the lines just as well.
    "-b",
    "-F",
    "-B",
    str(CONTEXT_BEFORE),
    "-A",
    str(CONTEXT_AFTER),
    "-e",
    "\n".join(PATTERNS),
]


class _Piece:
    """One grep over the bytes [start, end) of the file: its stdin the file at `start`, through
    `head -c` when it must stop before the end. Its lines' offsets are the file's (-b counts
    from where grep started reading)."""

    def __init__(self, path: str, start: int, end: int, size: int):
        import subprocess  # only for inputs too large to keep whole: not on start-up's path

        self.start, self.truncated, self.cut = start, False, [0]
        self.lines: list[tuple[int, str]] = []
        self.feeder: subprocess.Popen | None = None
        with open(path, "rb") as f:
            f.seek(start)
            stdin: Any = f
            if end < size:
                self.feeder = subprocess.Popen(
                    ["head", "-c", str(end - start)], stdin=f, stdout=subprocess.PIPE
                )
                stdin = self.feeder.stdout
            self.proc = subprocess.Popen(
                _GREP,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, "LC_ALL": "C"},
                preexec_fn=_limit_memory,
            )
        if self.feeder is not None and self.feeder.stdout is not None:
            self.feeder.stdout.close()  # grep holds it now: head sees grep go

    def read(self) -> None:
        """Its matching lines and their context, up to KEEP_CAP (then grep is stopped)."""
        kept = 0
        # grep's lines pass the same line cut as any stream: one endless matching line (a tqdm
        # bar with "Error" in it) must not use up the cap meant for the failure lines after it.
        for line in iter_lines(self.proc.stdout, self.cut):
            number, sep, text = _grep_line(line)
            if not sep:
                continue  # "--" between context groups
            self.lines.append((self.start + number, text))
            kept += len(text)
            if kept >= KEEP_CAP:
                self.truncated = True
                self.proc.kill()
                break

    def finish(self) -> tuple[int, bytes]:
        assert self.proc.stdout is not None and self.proc.stderr is not None  # both are PIPEs
        err = self.proc.stderr.read(4096)
        rc = self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()
        if self.feeder is not None:
            self.feeder.wait()
        return rc, err


def _grep_local(path: str, what: str) -> Excerpt:
    return _start_grep(path, what)()


def _start_grep(path: str, what: str) -> Callable[[], Excerpt]:
    """A large regular file at grep speed: `grep -F` with the node-side scan's own strings and
    context (two greps over overlapping halves where there are two cores), started now, each
    drained by a thread of its own; the returned call waits for them and gives the lines (up to
    KEEP_CAP) and the tail read from the file's end. A line too long for grep's memory limit
    sends the file through the streaming reader instead, which cuts long lines."""
    import threading

    size = os.path.getsize(path)
    try:
        pieces = [_Piece(path, a, b, size) for a, b in _pieces(path, size)]
    except OSError as e:
        raise InputError(
            f"{what} {path}: cannot run grep: {e.strerror or e}",
            hint="install GNU grep, or give a smaller file",
        ) from None
    # Each pipe drained at once, so neither grep waits on the other's reader.
    readers = [threading.Thread(target=p.read, daemon=True) for p in pieces]
    for t in readers:
        t.start()

    def finish() -> Excerpt:
        for t in readers:
            t.join()
        return _finished(path, what, pieces)

    return finish


def _finished(path: str, what: str, pieces: list) -> Excerpt:
    ends = [p.finish() for p in pieces]
    if any(rc == 2 and not p.truncated for p, (rc, _) in zip(pieces, ends, strict=True)):
        errs = [err for rc, err in ends if rc == 2]
        if not any(b"memory exhausted" in e for e in errs):
            text = b" ".join(errs).decode(errors="replace").strip()
            raise InputError(f"{what} {path}: grep failed: {text}")
        with open(path, "rb") as f:
            cut = [0]
            found = filter_lines(iter_lines(f, cut), path)
        if cut[0]:
            found.notes.append(f"long lines cut: {cut[0]} bytes left out")
        return found
    found = _merged(path, pieces)
    found.tail = _tail(path)
    cut_bytes = sum(p.cut[0] for p in pieces)
    if cut_bytes:
        found.notes.append(f"long lines cut: {cut_bytes} bytes left out")
    if found.truncated:
        found.notes.append(CAP_NOTE)
    return found


def _merged(path: str, pieces: list) -> Excerpt:
    """The pieces' lines in file order, each once (the overlap's are in both), the earliest
    KEEP_CAP bytes of them: past a piece that hit the cap, nothing later is taken."""
    stop = min((p.lines[-1][0] for p in pieces if p.truncated and p.lines), default=None)
    lines = sorted({n: t for p in pieces for n, t in p.lines if stop is None or n <= stop}.items())
    found = Excerpt(path, numbering="byte", truncated=stop is not None)
    kept = 0
    for n, text in lines:
        found.lines.append((n, text))
        kept += len(text)
        if kept >= KEEP_CAP:
            found.truncated = True
            break
    return found


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def _grep_line(line: str) -> tuple[int, str, str]:
    """`N:text` (a match) or `N-text` (context) -> (N, sep, text), N a line number or a byte
    offset; "--" between groups and a line cut before its number give no sep."""
    digits = 0
    while digits < len(line) and digits < 19 and line[digits].isdigit():
        digits += 1
    if not digits or digits >= len(line) or line[digits] not in ":-":
        return 0, "", line
    return int(line[:digits]), line[digits], line[digits + 1 :]


def _tail(path: str, window: int = 256 << 10) -> list[str]:
    """The last TAIL_LINES lines that are not a traceback's body (the very last whatever it is),
    read from the last `window` bytes (a longer line is cut)."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - window))
        data = f.read(window)
    lines = data.replace(b"\0", b"").decode("utf-8", "replace").split("\n")
    if size > window:
        lines = lines[1:] or lines  # the first piece may start mid-line
    if lines and lines[-1] == "":
        lines.pop()
    kept = [t for t in lines[:-1] if not TRACEBACK_BODY.search(t)] + lines[-1:]
    return [_cut_line(t.rstrip("\r")) for t in kept[-TAIL_LINES:]]


def _cut_line(text: str) -> str:
    text = text.replace("\0", "")
    if len(text) <= LINE_CAP:
        return text
    half = LINE_CAP // 2
    return f"{text[:half]} ...[{len(text) - LINE_CAP} bytes cut]... {text[-half:]}"
