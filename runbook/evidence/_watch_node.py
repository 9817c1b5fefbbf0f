"""The watch's read on a node (issue 65): standard library only, run as `python3 -I -S -c SOURCE`
by the sweep's one exec per host (log_filter.remote_grep_many_argv), never imported by runbook.

argv: before, after, cap, tail, tail_read, grow, traceback-body regex, patterns (one per line),
the exec's nonce, then every location of the exec as DIR GLOB OWNER KNOWN. A location with a
KNOWN ("W", then lines "DEV:INO OFFSET - CRC" for files read before) is watched: its files are
those `find DIR -maxdepth 1 -type f -user OWNER -name GLOB` lists (the owner's regular files),
in byte order, after a line `@@loc NONCE N` (N: the location's index). One process reads every
watched location of the host (a process per location cost more than the reading, issue 65).

Per file: its identity (device:inode) and size; the offset held for that identity, kept only when
the file's first bytes still have the checksum they had (an inode is reused by the next file) and
the file is not shorter (truncated): else from its start. The read ends after the last newline
(a line still being written is read next period); more than `grow` new bytes: only the last
`grow` (from a line's start), said by CUT. The bytes [FROM, END) go once to grep (-F, the
patterns, context; -b: each line numbered by its byte offset in the file), then the last lines
of at most 512 KiB of them, traceback bodies left out. Output per file:

    @@file PATH\\0DEV:INO FROM END CAPPED MTIME CUT CRC
    PATH\\0OFFSET:line  (the failure's lines and their context, at most `cap` bytes)
    PATH\\0OFFSET=line  (the latest memory-series lines, apart: SERIES)
    @@tail PATH\\0MTIME
    the chunk's last lines
"""

import collections
import contextlib
import fnmatch
import os
import pwd
import re
import stat
import subprocess
import sys
import threading
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


# A memory-series line (evidence/trend.py reads them: runbook.instrument's, Megatron's,
# DeepSpeed's, torchtitan's and its retry warnings): found by a grep of its own, without
# context, and only the last SERIES_KEPT of them sent, marked "=" (the trends want the points
# nearest now); dense series lines would otherwise drag every line along as the others' context.
SERIES = ("RUNBOOK_INSTRUMENT mem ", "(MB) |", "Max_MA", "GiB(", "allocation retries")
SERIES_KEPT = 64 * 256  # 256 points of 64 ranks (trend.WATCH_POINTS, trend.MAX_RANKS)
SERIES_BYTES = 4 << 20  # and at most this many bytes of them (log_filter.WATCH_SERIES_BYTES)


def _feed(fd: int, start: int, end: int, chunk, sinks: list, lead=b"") -> None:
    """[start, end) of the file, read once, into every sink (grep's stdin); `lead` (the lines
    before start) into the first sink only, before them."""
    try:
        if lead:
            sinks[0].write(lead)
        if chunk is not None:
            for w in sinks:
                w.write(chunk)
        else:
            pos = start
            while pos < end:
                block = os.pread(fd, min(1 << 20, end - pos), pos)
                if not block:
                    break
                for w in sinks:
                    w.write(block)
                pos += len(block)
    except BrokenPipeError:
        pass
    finally:
        for w in sinks:
            with contextlib.suppress(BrokenPipeError):
                w.close()


def lead_of(fd: int, start: int, n: int) -> int:
    """Where the last n lines before start begin (start where there are none)."""
    if start == 0 or n <= 0:
        return start
    lo = max(0, start - 65536)
    block = os.pread(fd, start - lo, lo)
    at = len(block)
    for _ in range(n + 1):
        at = block.rfind(b"\n", 0, at)
        if at < 0:
            return lo if lo == 0 else start  # a line longer than the window: no lead
    return lo + at + 1


def grep(fd: int, start: int, end: int, a: dict, path: bytes, chunk, pre: int) -> tuple:
    """The chunk [start, end), read once: the failure's lines with their context, each by its
    byte offset in the file (the series lines are taken out of that stream first, each line
    prefixed with its offset by that grep -b), at most `cap` bytes, the earliest first; and the
    last SERIES_KEPT series lines, by their place in the file. The lines [pre, start) go to
    the failure's grep first, as a whole file's read has them: the context of a failure at the
    chunk's start, and the rest of one just before it; of those lines only context is sent (a
    failure's own line before start was sent with its chunk)."""
    env = dict(os.environ, LC_ALL="C")
    series_args = [x for m in SERIES for x in ("-e", m)]
    ser = subprocess.Popen(["grep", "-a", "-b", "-F", *series_args], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, env=env)  # fmt: skip
    rest = subprocess.Popen(["grep", "-a", "-v", "-b", "-F", *series_args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)  # fmt: skip
    ev = subprocess.Popen(["grep", "-a", *a["grep"]], stdin=rest.stdout,
                          stdout=subprocess.PIPE, env=env)  # fmt: skip
    assert ser.stdout is not None and rest.stdout is not None and ev.stdout is not None
    rest.stdout.close()
    lead = os.pread(fd, start - pre, pre) if pre < start else b""
    feeder = threading.Thread(
        target=_feed, args=(fd, start, end, chunk, [rest.stdin, ser.stdin], lead)
    )
    feeder.start()
    events = threading.Thread(target=lambda: box.append(ev.stdout.read()))  # type: ignore[union-attr]
    box: list = []
    events.start()
    # The series lines in blocks, the last SERIES_KEPT kept as they come (deque.extend, not a
    # line at a time: a period's new lines are mostly series lines); only the kept are numbered.
    kept: collections.deque = collections.deque(maxlen=SERIES_KEPT)
    carry = b""
    for block in iter(lambda: ser.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
        rows = (carry + block).split(b"\n")
        carry = rows.pop()
        kept.extend(rows)
    if carry:
        kept.append(carry)
    feeder.join()
    events.join()
    for p in (ser, rest, ev):
        p.wait()
    out, size, capped = [], 0, 0
    for line in (box[0] if box else b"").split(b"\n"):
        m = re.match(rb"(\d+):", line)
        if m is None:
            continue  # grep's "--" between groups
        at = pre + int(m.group(1))
        if at < start and any(x in line[m.end() :] for x in a["pats"]):
            continue  # a failure's line before the chunk: sent with its own chunk
        row = path + b"\0" + str(at).encode() + line[m.end(1) :]
        size += len(row) + 1
        if size > a["cap"]:
            capped = 1
            break
        out.append(row + b"\n")
    series, room = [], SERIES_BYTES
    for line in reversed(kept):  # the latest first, within the bytes a location may send
        off, colon, text = line.partition(b":")
        if not colon or not off.isdigit() or int(off) >= end - start:
            continue
        r = path + b"\0" + str(start + int(off)).encode() + b"=" + text + b"\n"
        room -= len(r)
        if room < 0:
            break
        series.append(r)
    return b"".join(out) + b"".join(reversed(series)), capped


def tail_of(fd: int, start: int, end: int, a: dict, chunk) -> bytes:
    lines, read, body = a["tail"], a["tail_read"], a["body"]
    lo = max(start, end - TAIL_WINDOW)
    rows = (chunk if chunk is not None else os.pread(fd, end - lo, lo)).split(b"\n")[:-1]
    if lo > start:
        rows = rows[1:]  # the window's first line starts before it
    rows = rows[-lines * read :]
    # The last lines-1 before the last that are no traceback body, latest first: the rows
    # before them are never looked at (most of a tail is kept, so few are).
    keep: list = []
    for r in reversed(rows[:-1]):
        if len(keep) >= lines - 1:
            break
        if not body.search(r.decode("utf-8", "replace")):
            keep.append(r)
    return b"".join(r + b"\n" for r in [*reversed(keep), *rows[-1:]])


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
        if end <= start:
            return (
                head
                + f"{ident} {start} {end} 0 {int(st.st_mtime)} {cut} {crc(fd, min(HEAD, end))}\n".encode()
            )
        chunk = os.pread(fd, end - start, start) if end - start <= TAIL_WINDOW else None
        pre = start if cut else lead_of(fd, start, a["lead"])
        body, capped = grep(fd, start, end, a, path, chunk, pre)
        # CAPPED: the failure's lines passed `cap` and the latest were left out.
        head += f"{ident} {start} {end} {capped} {int(st.st_mtime)} {cut} {crc(fd, min(HEAD, end))}\n".encode()
        tail = b""
        if a["tail"] > 0:
            tail = b"\n@@tail " + path + f"\0{int(st.st_mtime)}\n".encode()
            tail += tail_of(fd, start, end, a, chunk)
        return head + body + tail
    finally:
        os.close(fd)


def files(d: str, glob: str, owner: str) -> list:
    """find DIR -maxdepth 1 -type f [-user OWNER] -name GLOB: the paths, in byte order; none
    where the folder cannot be listed or the owner is no account (find says so on stderr)."""
    try:
        uid = (int(owner) if owner.isdigit() else pwd.getpwnam(owner).pw_uid) if owner else None
    except KeyError:
        return []
    base, pat = os.fsencode(d), os.fsencode(glob)
    out = []
    try:
        with os.scandir(base) as entries:
            for e in entries:
                if not fnmatch.fnmatchcase(e.name, pat):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # gone since the listing (a rotation): not this period's file
                if stat.S_ISREG(st.st_mode) and (uid is None or st.st_uid == uid):
                    out.append(os.path.join(base, e.name))
    except OSError:
        return []
    return sorted(out)


def main() -> None:
    b, after, cap, tail, tail_read, grow, body, pats, nonce = sys.argv[1:10]
    a = {
        "grep": ["-F", "-B", b, "-A", after, "-e", pats, "--"],
        "cap": int(cap),
        "tail": int(tail),
        "tail_read": int(tail_read),
        "grow": int(grow),
        "lead": max(int(b), int(after)),
        "pats": [x.encode("utf-8", "surrogateescape") for x in pats.split("\n") if x],
        "body": re.compile(body),
    }
    out = sys.stdout.buffer
    locations = sys.argv[10:]
    for n in range(len(locations) // 4):
        d, glob, owner, known = locations[4 * n : 4 * n + 4]
        if not known:
            continue  # scanned whole by the shell
        out.write(f"\n@@loc {nonce} {n}\n".encode())
        held = known_of(known[1:])
        for path in files(d, glob, owner):
            out.write(one(path, held, a))
    out.flush()


main()
