"""The job's files, read with its owner's rights (docs/design.md §4.4).

runbook often runs with more rights than the job's owner (root, or a service account), and what
it reads of a job's files reaches the report, a notification, the state, and even the rerun (a
config copy). A user could point a config path or a program file at something only runbook may
read (`ln -s /etc/shadow recipe.yaml`): read as runbook, its lines would be shown, or copied
into the user's own folder. So while an incident acts for an owner, each of the job's files is
read only when its owner could read it: the path is walked one component at a time from `/`,
as the kernel would for the owner (search permission on every folder, read permission on the
file, by owner/group/other bits; symbolic links followed by hand, at most 40), each folder held
open (O_PATH, O_NOFOLLOW) so a link swapped in after the check cannot redirect the read.

POSIX ACLs are not read: a file an ACL alone lets the owner read is refused (said, never
silently read); one an ACL denies while the bits allow is read as the bits say.

A service account acting through sudo ([identity] act_as = "sudo") may not enter the owner's
folder at all (a home folder of mode 700): where this account is denied, the file is read as
the owner (`sudo -n -u OWNER sh -c 'head -c ...'`, the grant it already has), with the kernel
checking the owner's rights itself.
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat

from runbook.identity import Account

# The owner the current incident reads for (set by engine.read_job; None: runbook's own job, or
# no incident: read with runbook's own rights, as a person's `runbook plan` on their files).
_OWNER: contextvars.ContextVar = contextvars.ContextVar("runbook_owner_read", default=None)
# How a command runs as the owner (identity.Actor.wrap) where this account cannot read the
# owner's files itself (a service account through sudo); None: no such way.
_VIA: contextvars.ContextVar = contextvars.ContextVar("runbook_owner_via", default=None)
MAX_LINKS = 40  # the kernel's own limit on symbolic links in one lookup (ELOOP)
_READ = '[ -d "$1" ] && { echo "Is a directory" >&2; exit 2; }; exec head -c "$2" -- "$1"'


def read_for(owner: Account | None, via=None) -> None:
    """Read the job's files for `owner` from now on in this thread (None: with runbook's own
    rights); `via` wraps a command as the owner, for what this account may not read itself.
    An owner without a known uid reads nothing."""
    if owner is not None and owner.uid is not None and owner.uid == os.geteuid():
        owner, via = None, None  # runbook is the owner: the kernel checks it
    _OWNER.set(owner)
    _VIA.set(via if owner is not None else None)


def as_owner(argv: list[str]) -> bytes:
    """Run `argv` (a read) as the owner; its stdout, or the OSError its stderr names."""
    import subprocess

    via = _VIA.get()
    if via is None:
        raise PermissionError(errno.EACCES, "runbook may not read it and cannot act as its owner")
    try:
        r = subprocess.run(via(argv), capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        raise OSError(errno.EIO, f"reading as the owner failed: {e}") from None
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip()
        code = (
            errno.ENOENT
            if "No such file" in err
            else errno.EISDIR
            if "directory" in err
            else errno.EACCES
        )
        raise OSError(code, err[:200] or f"exit {r.returncode}", argv[-2] if len(argv) > 1 else "")
    return r.stdout


def _stat(path: str | os.PathLike, fmt: str, own: str) -> float:
    try:
        return float(getattr(os.stat(path), own))
    except PermissionError:
        if _VIA.get() is None:
            raise
    out = as_owner(
        ["sh", "-c", 'exec stat -L -c "$2" -- "$1"', "runbook-stat", os.fspath(path), fmt]
    )
    try:
        return float(out.strip())
    except ValueError:
        raise OSError(errno.EIO, f"stat said {out[:40]!r}", os.fspath(path)) from None


def size(path: str | os.PathLike) -> int:
    """The file's size, as this account sees it, else as the owner does."""
    return int(_stat(path, "%s", "st_size"))


def mtime(path: str | os.PathLike) -> float:
    """When the file was last written, as this account sees it, else as the owner does."""
    return _stat(path, "%Y", "st_mtime")


def listing(pattern: str) -> list[str]:
    """The paths a glob pattern matches, as the owner sees them (this account may not list
    the owner's folder); plain glob where there is no other way."""
    import glob

    found = glob.glob(pattern)
    if found or _VIA.get() is None:
        return found
    try:
        out = as_owner(
            [
                "sh",
                "-c",
                'IFS=; for f in $1; do [ -e "$f" ] && printf "%s\\0" "$f"; done; exit 0',
                "runbook-glob",
                pattern,
            ]
        )
    except OSError:
        return []
    return [p for p in out.decode(errors="surrogateescape").split("\0") if p]


def tail_bytes(path: str | os.PathLike, n: int) -> bytes:
    """The last `n` bytes, as the owner reads them."""
    return as_owner(
        ["sh", "-c", 'exec tail -c "$2" -- "$1"', "runbook-tail", os.fspath(path), str(n)]
    )


def current() -> Account | None:
    return _OWNER.get()


class Refused(PermissionError):
    """The job's owner could not read this file: it is not read."""


def _groups(owner: Account) -> set[int]:
    try:
        return set(os.getgrouplist(owner.name, owner.gid if owner.gid is not None else -1))
    except (OSError, KeyError):
        return {owner.gid} if owner.gid is not None else set()


def _may(st: os.stat_result, owner: Account, groups: set[int], want: int) -> bool:
    if owner.uid == 0:
        return True
    if st.st_uid == owner.uid:
        bits = (st.st_mode >> 6) & 7
    elif st.st_gid in groups:
        bits = (st.st_mode >> 3) & 7
    else:
        bits = st.st_mode & 7
    return bits & want == want


def _refused(path: str, why: str) -> Refused:
    return Refused(errno.EACCES, f"{why}: the job's owner may not read it", path)


def open_as_owner(path: str | os.PathLike, owner: Account, *, folder: bool = False) -> int:
    """A read-only descriptor of `path`, opened only as `owner` could; else Refused (or the
    OSError the walk met: a missing file is FileNotFoundError, as open() says). `folder`: the
    path is a folder the owner may list and enter (an O_PATH descriptor of it)."""
    if owner.uid is None:
        raise _refused(str(path), f"{owner.name or 'the owner'} is not known on this host")
    groups = _groups(owner)
    todo = [p for p in os.fspath(path).split("/") if p not in ("", ".")]
    absolute = os.path.isabs(os.fspath(path))
    start = "/" if absolute else os.getcwd()
    if not absolute:
        todo = [p for p in start.split("/") if p] + todo
    fds: list[int] = [os.open("/", os.O_PATH | os.O_DIRECTORY)]
    links = 0
    try:
        while todo:
            name = todo.pop(0)
            here = fds[-1]
            if not _may(os.fstat(here), owner, groups, 1):
                raise _refused(os.fspath(path), "a folder on its path may not be entered")
            if name == "..":
                if len(fds) > 1:
                    os.close(fds.pop())
                continue
            st = os.stat(name, dir_fd=here, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many symbolic links", os.fspath(path))
                target = os.readlink(name, dir_fd=here)
                if target.startswith("/"):
                    for fd in fds[1:]:
                        os.close(fd)
                    del fds[1:]
                todo = [p for p in target.split("/") if p not in ("", ".")] + todo
                continue
            if folder and not todo and stat.S_ISDIR(st.st_mode):
                fd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=here)
                if not _may(os.fstat(fd), owner, groups, 5):
                    os.close(fd)
                    raise _refused(os.fspath(path), "the folder itself may not be read")
                return fd
            if todo:  # a folder on the way
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(path))
                fds.append(os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=here))
                continue
            if not stat.S_ISREG(st.st_mode):
                raise _refused(os.fspath(path), "not a regular file")
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=here)
            got = os.fstat(fd)
            if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino) or not _may(
                got, owner, groups, 4
            ):
                os.close(fd)
                raise _refused(os.fspath(path), "the file itself is not readable to its owner")
            return fd
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file", os.fspath(path))
    finally:
        for fd in fds:
            os.close(fd)


def check(path: str | os.PathLike, *, folder: bool = False) -> str | None:
    """None when the current owner could read `path` (a folder: list and enter it), or runbook
    reads for itself; else why not, in words."""
    owner = current()
    if owner is None:
        return None
    try:
        os.close(open_as_owner(path, owner, folder=folder))
    except Refused as e:
        return f"{e.strerror or e}"
    except PermissionError as e:
        # This account may not look; where it reads as the owner, the kernel judges then.
        return None if _VIA.get() is not None else f"{e.strerror or e}"
    except OSError as e:
        return f"{e.strerror or e}"
    return None


def read_bytes(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The file's bytes (at most `limit`), read as the current owner could, else OSError."""
    owner = current()
    if owner is None:
        with open(path, "rb") as f:
            return f.read() if limit is None else f.read(limit)
    try:
        fd = open_as_owner(path, owner)
    except Refused:
        raise  # the owner may not read it: not read, however
    except PermissionError:
        if _VIA.get() is None:
            raise
        # This account may not look, the owner may: read as the owner (the kernel checks).
        cap = limit if limit is not None else 64 << 20
        return as_owner(["sh", "-c", _READ, "runbook-read", os.fspath(path), str(cap)])
    with os.fdopen(fd, "rb") as f:
        return f.read() if limit is None else f.read(limit)


def read_text(path: str | os.PathLike, *, errors: str = "strict", limit: int | None = None) -> str:
    """read_bytes, decoded as UTF-8 (UnicodeDecodeError with errors="strict")."""
    return read_bytes(path, limit).decode("utf-8", errors=errors)


def open_checked(path: str | os.PathLike) -> int:
    """A read-only descriptor of a regular file (never through a link at its last component),
    as the current owner could open it."""
    owner = current()
    if owner is None:
        return os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    return open_as_owner(path, owner)
