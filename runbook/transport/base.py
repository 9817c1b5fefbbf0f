"""The transport interface: run an argv with a timeout, get a result with capped output."""

from __future__ import annotations

import shlex
from typing import Protocol

from runbook.record import record


@record(frozen=True)
class CommandResult:
    host: str  # "localhost" for the local transport
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    # Bytes dropped past the output cap: reported, never silently applied.
    stdout_dropped: int = 0
    stderr_dropped: int = 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def truncated(self) -> bool:
        return bool(self.stdout_dropped or self.stderr_dropped)

    def tail(self, lines: int = 5) -> str:
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return "\n".join(text[-lines:])


class Transport(Protocol):
    host: str

    def run(
        self,
        argv: list[str] | tuple[str, ...],
        timeout: float | None = None,
        max_output: int | None = None,
    ) -> CommandResult:
        """Run argv (never a shell string) and return its result, its stdout kept up to
        `max_output` bytes (else the transport's own cap); raise TransportError if it could not
        be run or did not finish within `timeout` seconds."""
        ...

    def close(self) -> None: ...


def command_line(argv: list[str] | tuple[str, ...]) -> str:
    """argv as one string a POSIX shell reads back as the same argv: every piece quoted, because
    job names, paths and node names are untrusted."""
    if not argv:
        raise ValueError("empty argv")
    return shlex.join(str(a) for a in argv)


def brief(argv: list[str] | tuple[str, ...], limit: int = 120) -> str:
    """argv for a message: an argument longer than `limit` (a probe's script) is named by its
    size, so the message says which command failed without printing the script."""
    return shlex.join(
        a if len(a) <= limit else f"<script of {len(a)} chars>" for a in map(str, argv)
    )


class CappedBuffer:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    def __init__(self, cap: int):
        self.cap = cap
        self._parts: list[bytes] = []
        self.kept = 0
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap - self.kept
        if room > 0:
            self._parts.append(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))

    def text(self) -> str:
        return b"".join(self._parts).decode("utf-8", errors="replace")


def captured(
    host: str, argv, code: int, out: CappedBuffer, err: CappedBuffer, duration_s: float
) -> CommandResult:
    """The result of a command whose streams were read into capped buffers."""
    return CommandResult(
        host=host,
        argv=tuple(argv),
        exit_code=code,
        stdout=out.text(),
        stderr=err.text(),
        duration_s=duration_s,
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
    )
