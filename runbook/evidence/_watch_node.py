"""The watch's read on a node (issue 65): standard library only, run as `python3 -I -S -c SOURCE`
by the sweep's one exec per host (log_filter.remote_grep_many_argv), never imported by runbook.

stdin: the files of one location, NUL-separated (find's -print0, the owner's regular files only).
argv: before, after, cap, tail, tail_read, grow, known, traceback-body regex, patterns (one per
line). `known`: lines "DEV:INO OFFSET - CRC" for files read before.

Per file: its identity (device:inode) and size; the offset held for that identity, kept only when
the file's first bytes still have the checksum they had (an inode is reused by the next file) and
the file is not shorter (truncated): else from its start. The read ends after the last newline
(a line still being written is read next period); more than `grow` new bytes: only the last
`grow` (from a line's start), said by CUT. The bytes [FROM, END) go once to grep (-F, the
patterns, context; -b: each line numbered by its byte offset in the file), then the last lines
of at most 512 KiB of them, traceback bodies left out. Output per file:

    @@file PATH\\0DEV:INO FROM END -1 MTIME CUT CRC
    PATH\\0OFFSET:line  (grep's, at most `cap` bytes)
    @@tail PATH\\0MTIME
    the chunk's last lines
"""

import os
import re
import subprocess
import sys
import zlib

TAIL_WINDOW = 512 * 1024
HEAD = 256


def crc(fd: int, n: int) -> int:
    return zlib.crc32(os.pread(fd, n, 0)) if n else 0


def known_of(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) == 4 and f[1].isdigit() and f[3].isdigit():
            out[f[0]] = (int(f[1]), int(f[3]))
    return out


def end_of(fd: int, start: int, size: int) -> int:
    """One past the last newline in [start, size), else start."""
    pos = size
    while pos > start:
        lo = max(start, pos - 65536)
        at = os.pread(fd, pos - lo, lo).rfind(b"\n")
        if at >= 0:
            return lo + at + 1
        pos = lo
    return start


def line_start(fd: int, pos: int, end: int) -> int:
    """The first line start at or after pos (a cut read starts at a whole line)."""
    if pos == 0 or os.pread(fd, 1, pos - 1) == b"\n":
        return pos
    while pos < end:
        block = os.pread(fd, min(65536, end - pos), pos)
        at = block.find(b"\n")
        if at >= 0:
            return pos + at + 1
        pos += len(block)
    return end


def grep(fd: int, start: int, end: int, args: list, cap: int, path: bytes, chunk) -> bytes:
    """grep over [start, end): from `chunk` where it was read already (a small chunk is read
    once, for grep and the tail alike), else from the file itself."""
    env = dict(os.environ, LC_ALL="C")
    argv = ["grep", "-a", "-b", *args]
    if chunk is not None:
        p = subprocess.run(argv, input=chunk, stdout=subprocess.PIPE, env=env)
    else:
        os.lseek(fd, start, 0)
        p = subprocess.run(argv, stdin=fd, stdout=subprocess.PIPE, env=env)
    out, kept = [], 0
    for line in p.stdout.split(b"\n"):
        m = re.match(rb"(\d+)([:-])", line)
        if m is None:
            continue  # grep's "--" between groups
        at = int(m.group(1))
        if at >= end - start:
            break  # past the end: the line still being written, or written since the stat
        row = path + b"\0" + str(start + at).encode() + line[m.end(1) :]
        kept += len(row) + 1
        if kept > cap:
            break
        out.append(row)
    return b"".join(r + b"\n" for r in out)


def tail_of(fd: int, start: int, end: int, a: dict, chunk) -> bytes:
    lines, read, body = a["tail"], a["tail_read"], a["body"]
    lo = max(start, end - TAIL_WINDOW)
    rows = (chunk if chunk is not None else os.pread(fd, end - lo, lo)).split(b"\n")[:-1]
    if lo > start:
        rows = rows[1:]  # the window's first line starts before it
    rows = rows[-lines * read :]
    keep = [r for r in rows[:-1] if not body.search(r.decode("utf-8", "replace"))]
    keep = keep[-(lines - 1) :] if lines > 1 else []
    return b"".join(r + b"\n" for r in [*keep, *rows[-1:]])


def one(path: bytes, known: dict, a) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        ident = f"{st.st_dev}:{st.st_ino}"
        start = 0
        if ident in known:
            upto, was = known[ident]
            if upto <= st.st_size and crc(fd, min(HEAD, upto)) == was:
                start = upto
        cut = 0
        end = end_of(fd, start, st.st_size)
        if end - start > a["grow"]:
            start, cut = line_start(fd, end - a["grow"], end), 1
        head = f"\n@@file {path.decode('utf-8', 'surrogateescape')}\0".encode(
            "utf-8", "surrogateescape"
        )
        head += f"{ident} {start} {end} -1 {int(st.st_mtime)} {cut} {crc(fd, min(HEAD, end))}\n".encode()
        if end <= start:
            return head
        chunk = os.pread(fd, end - start, start) if end - start <= TAIL_WINDOW else None
        body = grep(fd, start, end, a["grep"], a["cap"], path, chunk)
        tail = b""
        if a["tail"] > 0:
            tail = b"\n@@tail " + path + f"\0{int(st.st_mtime)}\n".encode()
            tail += tail_of(fd, start, end, a, chunk)
        return head + body + tail
    finally:
        os.close(fd)


def main() -> None:
    b, after, cap, tail, tail_read, grow, known, body, pats = sys.argv[1:10]
    a = {
        "grep": ["-F", "-B", b, "-A", after, "-e", pats, "--"],
        "cap": int(cap),
        "tail": int(tail),
        "tail_read": int(tail_read),
        "grow": int(grow),
        "body": re.compile(body),
    }
    held = known_of(known)
    out = sys.stdout.buffer
    for path in sys.stdin.buffer.read().split(b"\0"):
        if path:
            out.write(one(path, held, a))
    out.flush()


main()
