"""Run commands on this host (the login node) with the same interface as SSH."""

from __future__ import annotations

import subprocess
import threading
import time

from runbook.errors import TransportError
from runbook.transport.base import CappedBuffer, CommandResult, brief, captured


class LocalTransport:
    host = "localhost"

    def __init__(self, *, max_output_bytes: int = 1_048_576, default_timeout: float = 60.0):
        self.max_output_bytes = max_output_bytes
        self.default_timeout = default_timeout

    def run(
        self, argv, timeout: float | None = None, max_output: int | None = None
    ) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        timeout = self.default_timeout if timeout is None else timeout
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise TransportError(
                f"cannot run `{argv[0]}` on this host: {e.strerror or e}",
                hint=f"check that {argv[0]} is installed and on PATH",
            ) from e
        cap = max_output or self.max_output_bytes  # a read of many jobs at once may ask more
        out, err = CappedBuffer(cap), CappedBuffer(self.max_output_bytes)
        # Drain both pipes past the cap so the child never blocks on a full pipe.
        readers = [
            threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True),
        ]
        for t in readers:
            t.start()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise TransportError(
                f"`{brief(argv)}` did not finish within {timeout:g}s on this host; killed",
                hint="raise the command timeout in the site config if the host is just slow",
            ) from None
        finally:
            for t in readers:
                t.join(timeout=5)
        return captured(self.host, argv, code, out, err, time.monotonic() - start)

    def close(self) -> None:
        pass


def _pump(stream, buf: CappedBuffer) -> None:
    with stream:
        for chunk in iter(lambda: stream.read(65536), b""):
            buf.add(chunk)
