"""A real PostgreSQL for the tests: Debian's server binaries, a throwaway cluster in a temporary
folder, reached over a Unix socket there. The test cluster (tests/cluster/cluster.sh) runs its
own, long-lived one for the integration tests; this one is for the state interface's tests, which
run before the cluster is up (scripts/test) and on every supported Python.

PostgreSQL refuses to run as root: as root, the cluster is made and run as the `postgres` user.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def server_bin() -> Path | None:
    """The newest installed server's bin folder (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
    )
    return Path(found[-1]).parent if found else None


def why_not() -> str | None:
    """Why no throwaway PostgreSQL can run here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install '.[postgres]')"
    if server_bin() is None:
        return "no PostgreSQL server binaries (apt-get install postgresql)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to become postgres"
    return None


class ThrowawayPostgres:
    def __init__(self) -> None:
        bindir = server_bin()
        assert bindir is not None
        self.bin = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="runbook-pg-"))
        self.data, self.sock = self.dir / "data", self.dir / "sock"
        self.sock.mkdir()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(self.dir, "postgres")
            shutil.chown(self.sock, "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-k {self.sock} -c listen_addresses='' -c fsync=off -c max_connections=200",
            "start",
        )
        self.url = f"postgresql://postgres@/postgres?host={self.sock}"

    def _run(self, tool: str, *args: str) -> None:
        r = subprocess.run(
            [*self.as_user, str(self.bin / tool), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.dir,
        )
        if r.returncode != 0:
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stdout}{r.stderr}")

    def fresh_database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = f"t{time.monotonic_ns()}"
        with psycopg.connect(self.url, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@/{name}?host={self.sock}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
