"""One error tree for the whole tool, and the exit codes scripts branch on (docs/design.md §4.3).

Every error carries what was expected, what was found, and what to do next, so that the CLI can
print it as is: nobody paged at 3 a.m. should have to read a traceback.
"""

from __future__ import annotations

import enum
import re


class ExitCode(enum.IntEnum):
    OK = 0  # ok, or nothing to do
    STEP_FAILED = 1  # the runbook ran and a step failed; the report says which
    USAGE = 2  # usage or configuration error
    INPUT = 3  # input not understood
    NEEDS_HUMAN = 4  # approval required, or the ladder is exhausted


def shorten(text: str, limit: int = 200) -> str:
    """`text` cut in the middle to at most about `limit` characters, saying how much went."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}...[{len(text) - 2 * half} characters cut]...{text[-half:]}"


class RunbookError(Exception):
    """Root of every error runbook raises on purpose."""

    exit_code: ExitCode = ExitCode.STEP_FAILED

    # Messages quote what they were given, and what they were given can be a megabyte of
    # hostile text: keep the start and the end, and say how much was left out.
    MAX_MESSAGE = 2000

    def __init__(self, message: str, *, hint: str | None = None):
        message = shorten(message, self.MAX_MESSAGE)
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  what to do: {self.hint}"


class ConfigError(RunbookError):
    """The site configuration is missing, malformed or names an unknown key."""

    exit_code = ExitCode.USAGE


class UsageError(RunbookError):
    """The command line asks for something that cannot be done as asked."""

    exit_code = ExitCode.USAGE


class RungNotApplicable(UsageError):
    """A rung cannot be applied to this job (micro-batch already 1, knob already set...)."""


class InputError(RunbookError):
    """An input file or payload could not be read or understood."""

    exit_code = ExitCode.INPUT


class TransportError(RunbookError):
    """A command could not be run on a host (connection, authentication, timeout)."""


class HostKeyError(TransportError):
    """An SSH host key is unknown or differs from known_hosts; never accepted silently."""


class SlurmError(RunbookError):
    """A Slurm command failed; carries the command, its exit code and stderr."""


class ArrayJobError(RunbookError):
    """An id that names a whole job array where runbook acts on one task: the caller's to fix."""

    exit_code = ExitCode.USAGE


class JobNotFound(SlurmError):
    """Slurm answered, and neither slurmctld nor accounting knows the job: final, not an outage,
    and the caller's input to fix (a mistyped id), not a failed step."""

    exit_code = ExitCode.INPUT


class StorageFull(RunbookError):
    """runbook's own state could not be written: a full or read-only disk, a quota."""

    exit_code = ExitCode.STEP_FAILED


# ENOSPC, EROFS, EDQUOT: the disk, not runbook, refused the write.
_STORAGE_ERRNOS = {28, 30, 122}


def storage_failure(e: BaseException, where: str = "") -> StorageFull | None:
    """`e` as a StorageFull when it is a refused write of runbook's own state (an OSError of a
    full or read-only disk, SQLite's "database or disk is full", PostgreSQL's DiskFull), else
    None. Told by errno, module and message: sqlite3 and psycopg are not imported for it."""
    what = ""
    if isinstance(e, OSError) and e.errno in _STORAGE_ERRNOS:
        what = f"{e.strerror}" + (f": {e.filename}" if e.filename else "")
    elif type(e).__module__ == "sqlite3" and re.search(
        r"disk is full|disk I/O error|readonly database", str(e)
    ):
        what = f"the state database: {e}"
    elif (getattr(e, "kind", "") or type(e).__name__) in ("DiskFull", "DiskFullError"):
        what = f"PostgreSQL: {e}"
    if not what:
        return None
    return StorageFull(
        f"runbook's state could not be written ({what})"
        + (f"; state dir {where}" if where else ""),
        hint="nothing after that was done. Free space there (or point [state] dir elsewhere), "
        "then run the same command again: an incident cut short resumes where it stopped "
        "(`runbook incidents` shows it as interrupted or stopped), and steps already done are "
        "not done twice",
    )
