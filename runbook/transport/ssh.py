"""Run commands on cluster nodes over SSH (paramiko), with host keys checked against known_hosts.

An unknown or changed host key is an error naming the host, the key type and its fingerprint, never
accepted silently. Every argv is quoted for the remote shell. Connection errors from paramiko and
socket are translated here, at the boundary, into words an on-call engineer can act on.
"""

from __future__ import annotations

import base64
import hashlib
import random
import select
import socket
import time
from dataclasses import dataclass

import paramiko

from runbook.errors import HostKeyError, TransportError
from runbook.transport.base import CappedBuffer, CommandResult, captured, command_line


@dataclass(frozen=True)
class SshSettings:
    user: str = ""
    identity_file: str = ""
    known_hosts: str = "~/.ssh/known_hosts"
    port: int = 22
    proxy_jump: str = ""
    connect_timeout_s: float = 10.0
    command_timeout_s: float = 60.0
    connect_retries: int = 2
    max_output_bytes: int = 1_048_576
    addresses: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_site(cls, site) -> SshSettings:
        s = site.ssh
        return cls(
            user=s.user,
            identity_file=str(site.path(s.identity_file)) if s.identity_file else "",
            known_hosts=str(site.path(s.known_hosts)),
            port=s.port,
            proxy_jump=s.proxy_jump,
            connect_timeout_s=s.connect_timeout_s,
            command_timeout_s=s.command_timeout_s,
            connect_retries=s.connect_retries,
            max_output_bytes=s.max_output_bytes,
            addresses=tuple(sorted(s.addresses.items())),
        )

    def address(self, host: str) -> str:
        return dict(self.addresses).get(host, host)


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's SHA256 fingerprint, as `ssh-keygen -lf` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def _known_names(host: str, address: str, port: int) -> list[str]:
    names = [host] if address == host else [host, address]
    return names if port == 22 else [f"[{n}]:{port}" for n in names]


class _CheckBothNames(paramiko.MissingHostKeyPolicy):
    """paramiko looks the key up under the address it connects to; a node reached through an
    address map is usually listed under its name. Accept only a key listed, identically, under
    one of the two; anything else is refused with the fingerprint."""

    def __init__(self, host: str, address: str, port: int, known_hosts: str, host_keys):
        self.names = _known_names(host, address, port)
        self.host, self.known_hosts, self.host_keys = host, known_hosts, host_keys

    def missing_host_key(self, client, hostname, key) -> None:
        for name in self.names:
            entry = self.host_keys.lookup(name)
            if not entry:
                continue
            expected = entry.get(key.get_name())
            if expected is not None and expected == key:
                return
            if expected is not None or entry:
                raise _changed_key(self.host, key, entry, self.known_hosts)
        raise HostKeyError(
            f"host key of {self.host} is not in {self.known_hosts}: the server offered "
            f"{key.get_name()} {fingerprint(key)}",
            hint=(
                f"verify that fingerprint out of band (on the node: ssh-keygen -lf "
                f"/etc/ssh/ssh_host_{key.get_name().removeprefix('ssh-')}_key.pub), then add the "
                f"line `{self.names[0]} {key.get_name()} {key.get_base64()}` to {self.known_hosts}"
            ),
        )


def _changed_key(host: str, got: paramiko.PKey, expected, known_hosts: str) -> HostKeyError:
    if isinstance(expected, paramiko.PKey):
        listed = f"{expected.get_name()} {fingerprint(expected)}"
    else:
        listed = ", ".join(f"{k.get_name()} {fingerprint(k)}" for k in expected.values())
    return HostKeyError(
        f"host key of {host} CHANGED: the server offered {got.get_name()} {fingerprint(got)} but "
        f"{known_hosts} lists {listed}. Refusing to connect (this is what a man-in-the-middle "
        f"looks like, and also what a reinstalled node looks like)",
        hint=(
            f"confirm with the node's owner that it was reinstalled, then replace its line in "
            f"{known_hosts} (ssh-keygen -R {host} -f {known_hosts})"
        ),
    )


class SshTransport:
    """One connection to one host, opened on first use and reused for every command."""

    def __init__(self, host: str, settings: SshSettings, *, clock=time.monotonic):
        self.host = host
        self.settings = settings
        self._client: paramiko.SSHClient | None = None
        self._jump: paramiko.SSHClient | None = None
        self._clock = clock
        self.connects = 0  # connections opened (tests and benchmarks count round trips)
        self.execs = 0  # commands executed on the open connection

    # -- connection ---------------------------------------------------------------------------
    def _new_client(self, host: str, address: str, port: int, user: str, sock=None):
        s = self.settings
        client = paramiko.SSHClient()
        try:
            client.load_host_keys(s.known_hosts)
        except FileNotFoundError:
            raise HostKeyError(
                f"known_hosts file {s.known_hosts} does not exist, so no host key can be checked",
                hint="set [ssh] known_hosts in the site config to a file listing the nodes' keys",
            ) from None
        client.set_missing_host_key_policy(
            _CheckBothNames(host, address, port, s.known_hosts, client.get_host_keys())
        )
        kwargs = dict(
            hostname=address,
            port=port,
            username=user or None,
            timeout=s.connect_timeout_s,
            banner_timeout=s.connect_timeout_s,
            auth_timeout=s.connect_timeout_s,
            look_for_keys=False,
            allow_agent=not s.identity_file,
            sock=sock,
        )
        if s.identity_file:
            kwargs["key_filename"] = s.identity_file
        try:
            client.connect(**kwargs)
        except paramiko.BadHostKeyException as e:
            client.close()
            raise _changed_key(host, e.key, e.expected_key, s.known_hosts) from None
        except HostKeyError:
            client.close()
            raise
        except paramiko.AuthenticationException as e:
            client.close()
            raise TransportError(
                f"SSH authentication to {user or '(current user)'}@{host} failed: {e}",
                hint="check [ssh] user and identity_file in the site config, and the node's "
                "authorized_keys",
            ) from None
        except (OSError, paramiko.SSHException, EOFError) as e:
            client.close()
            raise _Retryable(f"cannot connect to {host} ({address}:{port}): {_why(e)}") from None
        return client

    def _connect_once(self) -> paramiko.SSHClient:
        s = self.settings
        sock = None
        if s.proxy_jump:
            juser, _, jhost = s.proxy_jump.rpartition("@")
            jhost, _, jport = jhost.partition(":")
            if self._jump is None:
                self._jump = self._new_client(
                    jhost, s.address(jhost), int(jport or 22), juser or s.user
                )
            try:
                sock = self._jump.get_transport().open_channel(
                    "direct-tcpip",
                    (s.address(self.host), s.port),
                    ("127.0.0.1", 0),
                    timeout=s.connect_timeout_s,
                )
            except (OSError, paramiko.SSHException) as e:
                raise _Retryable(f"bastion {jhost} cannot reach {self.host}: {_why(e)}") from None
        return self._new_client(self.host, s.address(self.host), s.port, s.user, sock=sock)

    def connect(self) -> paramiko.SSHClient:
        live = self._client is not None and self._client.get_transport() is not None
        if live and self._client.get_transport().is_active():
            return self._client
        attempts = max(1, self.settings.connect_retries + 1)
        for attempt in range(1, attempts + 1):
            try:
                self._client = self._connect_once()
                self.connects += 1
                return self._client
            except _Retryable as e:
                if attempt == attempts:
                    raise TransportError(
                        f"{e} (gave up after {attempts} attempt{'s' * (attempts > 1)})",
                        hint=f"check that {self.host} is up and sshd listens on port "
                        f"{self.settings.port}; `scontrol show node {self.host}` says what Slurm "
                        f"thinks of it",
                    ) from None
                # Jitter keeps many sweeps from hammering a recovering sshd in lockstep.
                time.sleep(min(2.0, 0.2 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    # -- commands -----------------------------------------------------------------------------
    def run(self, argv, timeout: float | None = None) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        timeout = self.settings.command_timeout_s if timeout is None else timeout
        start = self._clock()
        chan = self._open_channel()
        try:
            chan.exec_command(command_line(argv))
        except (OSError, paramiko.SSHException) as e:
            self.close()
            raise TransportError(
                f"cannot run a command on {self.host}: {_why(e)}",
                hint=f"try `ssh {self.host} true` by hand; sshd may limit "
                "sessions (MaxSessions) or be restarting",
            ) from None
        self.execs += 1
        out = CappedBuffer(self.settings.max_output_bytes)
        err = CappedBuffer(self.settings.max_output_bytes)
        try:
            while True:
                busy = False
                while chan.recv_ready():
                    out.add(chan.recv(65536))
                    busy = True
                while chan.recv_stderr_ready():
                    err.add(chan.recv_stderr(65536))
                    busy = True
                if (
                    chan.exit_status_ready()
                    and not chan.recv_ready()
                    and not chan.recv_stderr_ready()
                ):
                    break
                if self._clock() - start > timeout:
                    raise TransportError(
                        f"`{command_line(argv)}` on {self.host} did not finish within {timeout:g}s",
                        hint="the node may be hung (D-state processes, a stuck GPU driver); try "
                        "it by hand, or raise [ssh] command_timeout_s",
                    )
                if not busy:
                    select.select([chan], [], [], 0.05)
            code = chan.recv_exit_status()
        finally:
            chan.close()
        return captured(self.host, argv, code, out, err, self._clock() - start)

    def _open_channel(self) -> paramiko.Channel:
        """A session channel on the open connection. A connection that died or stalls in a
        rekey is replaced once: safe, because nothing has been sent to run yet."""
        for attempt in (1, 2):
            client = self.connect()
            try:
                return client.get_transport().open_session(timeout=self.settings.connect_timeout_s)
            except (OSError, paramiko.SSHException, EOFError) as e:
                self.close()
                if attempt == 2:
                    raise TransportError(
                        f"cannot open a session on {self.host}: {_why(e)}",
                        hint="sshd may limit sessions (MaxSessions) or the node is overloaded",
                    ) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        for c in (self._client, self._jump):
            if c is not None:
                c.close()
        self._client = self._jump = None


class SshHosts:
    """One SshTransport per host for the whole incident."""

    def __init__(self, settings: SshSettings):
        self.settings = settings
        self._by_host: dict[str, SshTransport] = {}

    def __getitem__(self, host: str) -> SshTransport:
        if host not in self._by_host:
            self._by_host[host] = SshTransport(host, self.settings)
        return self._by_host[host]

    def stats(self) -> dict:
        """SSH connections and exec round trips per host, for the report and benchmarks."""
        return {h: {"connections": t.connects, "execs": t.execs} for h, t in self._by_host.items()}

    def close(self) -> None:
        for t in self._by_host.values():
            t.close()
        self._by_host.clear()

    def __enter__(self) -> SshHosts:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Retryable(Exception):
    pass


def _why(e: BaseException) -> str:
    if isinstance(e, socket.timeout | TimeoutError):
        return "timed out"
    if isinstance(e, socket.gaierror):
        return f"name does not resolve ({e.strerror})"
    if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):
        return "connection refused (is sshd running?)"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused (is sshd running?)"
    return str(e) or type(e).__name__
