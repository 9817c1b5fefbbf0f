"""Run commands on cluster nodes over SSH (paramiko), with host keys checked against known_hosts.

An unknown or changed host key is an error naming the host, the key type and its fingerprint, never
accepted silently. Every argv is quoted for the remote shell. Connection errors from paramiko and
socket are translated here, at the boundary, into words an on-call engineer can act on.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import random
import re
import select
import socket
import sys
import threading
import time

from runbook.errors import HostKeyError, RunbookError, TransportError
from runbook.record import record
from runbook.transport.base import CappedBuffer, CommandResult, brief, captured, command_line

# paramiko, imported without invoke: paramiko.config imports it (45 ms, a tenth of an incident's
# CPU) only to run ssh_config's `Match exec`; `read_ssh_config` brings it in for a config that
# has one. A None in sys.modules makes its import fail, which paramiko takes as "not installed".
_WITHOUT_INVOKE = "invoke" not in sys.modules
if _WITHOUT_INVOKE:
    sys.modules["invoke"] = None  # type: ignore[assignment]
try:
    import paramiko
finally:
    if _WITHOUT_INVOKE:
        del sys.modules["invoke"]


@record(frozen=True)
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
    config_file: str = ""  # an OpenSSH client config; "" = none
    # The keys the site set on purpose ([ssh] in its file, the environment or a flag): these win
    # over ssh_config; the others yield to it.
    explicit: frozenset[str] = frozenset()

    @classmethod
    def from_site(cls, site) -> SshSettings:
        s = site.ssh
        explicit = frozenset(k.split(".", 1)[1] for k in site.origins if k.startswith("ssh."))
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
            config_file=str(site.path(s.config_file)) if s.config_file else "",
            explicit=explicit,
        )

    def address(self, host: str) -> str:
        return dict(self.addresses).get(host, host)


@record(frozen=True)
class Endpoint:
    """How to reach one host: the outcome of the site's [ssh] settings and ssh_config."""

    host: str  # the name runbook uses (a Slurm node name); host keys are looked up by it too
    address: str
    port: int
    user: str
    key_files: tuple[str, ...] = ()
    jump: Endpoint | None = None


def read_ssh_config(path: str) -> paramiko.SSHConfig | None:
    """The user's OpenSSH client config, or None when there is none (a missing file is normal)."""
    if not path:
        return None
    try:
        with open(path) as f:
            text = f.read()
        config = paramiko.SSHConfig.from_text(text)
        if paramiko.config.invoke is None and _MATCH_EXEC.search(text):
            import invoke  # `Match exec` runs a command: what paramiko needs invoke for

            paramiko.config.invoke = invoke
        return config
    except FileNotFoundError:
        return None
    except ImportError:
        raise TransportError(
            f"the SSH client config {path} has a `Match exec` block, which paramiko runs through "
            "the invoke package, and invoke is not installed",
            hint='pip install invoke, or set [ssh] config_file = "" to ignore the config',
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise TransportError(
            f"cannot read the SSH client config {path}: {getattr(e, 'strerror', None) or e}",
            hint='fix its permissions, or set [ssh] config_file = "" to ignore it',
        ) from None
    except Exception as e:  # paramiko raises ConfigParseError and ValueError for bad lines
        raise TransportError(
            f"the SSH client config {path} cannot be parsed: {e}",
            hint='`ssh -G HOST` shows how OpenSSH reads it; or set [ssh] config_file = ""',
        ) from None


_MATCH_EXEC = re.compile(r"^\s*match\b.*\bexec\b", re.IGNORECASE | re.MULTILINE)


def resolve_endpoint(
    host: str, s: SshSettings, config: paramiko.SSHConfig | None, _depth: int = 0
) -> Endpoint:
    """Where and as whom to connect to `host`. Precedence per value: what the site set on purpose
    ([ssh] user, port, identity_file, proxy_jump, addresses) > ssh_config's Host block (HostName,
    User, Port, IdentityFile, ProxyJump) > runbook's defaults. A pure function of its inputs."""
    found = config.lookup(host) if config is not None else {}
    mapped = dict(s.addresses).get(host)
    address = mapped or found.get("hostname") or host
    port = s.port if "port" in s.explicit or "port" not in found else _port(found["port"], host)
    user = s.user if "user" in s.explicit or not found.get("user") else found["user"]
    if s.identity_file and ("identity_file" in s.explicit or not found.get("identityfile")):
        keys: tuple[str, ...] = (s.identity_file,)
    else:
        import os

        keys = tuple(os.path.expanduser(k) for k in found.get("identityfile", ()))
    jump_spec = s.proxy_jump if "proxy_jump" in s.explicit else found.get("proxyjump", s.proxy_jump)
    jump = None
    if jump_spec and jump_spec.lower() != "none":
        if "," in jump_spec:
            raise TransportError(
                f"ProxyJump {jump_spec} for {host} chains several bastions; runbook follows one",
                hint="give the last bastion its own ProxyJump in ssh_config, or set [ssh] "
                "proxy_jump to one host",
            )
        if _depth >= 4:
            raise TransportError(f"ProxyJump for {host} loops", hint="check ssh_config")
        juser, _, jhostport = jump_spec.rpartition("@")
        jhost, _, jport = jhostport.partition(":")
        bastion = dataclasses.replace(s, proxy_jump="", explicit=s.explicit - {"proxy_jump"})
        jump = resolve_endpoint(jhost, bastion, config, _depth + 1)
        if jport:
            jump = dataclasses.replace(jump, port=_port(jport, jhost))
        if juser:
            jump = dataclasses.replace(jump, user=juser)
    return Endpoint(host, address, port, user, keys, jump)


def _port(text: str, host: str) -> int:
    if not str(text).isdigit() or not 0 < int(text) < 65536:
        raise TransportError(f"port {text!r} for {host} is not a TCP port", hint="check ssh_config")
    return int(text)


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

    def __init__(
        self,
        host: str,
        settings: SshSettings,
        *,
        clock=time.monotonic,
        ssh_config: paramiko.SSHConfig | None = None,
    ):
        self.host = host
        self.settings = settings
        if ssh_config is None:
            ssh_config = read_ssh_config(settings.config_file)
        self.endpoint = resolve_endpoint(host, settings, ssh_config)
        self._client: paramiko.SSHClient | None = None
        self._jump: paramiko.SSHClient | None = None
        self._clock = clock
        self.connects = 0  # connections opened (tests and benchmarks count round trips)
        self.execs = 0  # commands executed on the open connection
        # One connection at a time: SshHosts.warm may be opening it while a stage asks for it.
        self._connecting = threading.Lock()
        self.warm_failed: RunbookError | None = None

    # -- connection ---------------------------------------------------------------------------
    def _new_client(self, ep: Endpoint, sock=None):
        s = self.settings
        host, address, port, user = ep.host, ep.address, ep.port, ep.user
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
            allow_agent=not ep.key_files,
            sock=sock,
        )
        if ep.key_files:
            kwargs["key_filename"] = list(ep.key_files)
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
        s, ep = self.settings, self.endpoint
        sock = None
        if ep.jump is not None:
            if self._jump is None:
                self._jump = self._new_client(ep.jump)
            jump = self._jump.get_transport()
            if jump is None:
                raise _Retryable(f"bastion {ep.jump.host}: the connection to it is closed")
            try:
                sock = jump.open_channel(
                    "direct-tcpip",
                    (ep.address, ep.port),
                    ("127.0.0.1", 0),
                    timeout=s.connect_timeout_s,
                )
            except (OSError, paramiko.SSHException) as e:
                raise _Retryable(
                    f"bastion {ep.jump.host} cannot reach {self.host}: {_why(e)}"
                ) from None
        return self._new_client(ep, sock=sock)

    def connect(self) -> paramiko.SSHClient:
        with self._connecting:
            if self.warm_failed is not None:  # SshHosts.warm tried, with the same retries
                e, self.warm_failed = self.warm_failed, None
                raise e
            return self._connect()

    def _connect(self) -> paramiko.SSHClient:
        transport = self._client.get_transport() if self._client is not None else None
        if self._client is not None and transport is not None and transport.is_active():
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
                        f"{self.endpoint.port}; `scontrol show node {self.host}` says what Slurm "
                        f"thinks of it",
                    ) from None
                # Jitter keeps many sweeps from hammering a recovering sshd in lockstep.
                time.sleep(min(2.0, 0.2 * 2**attempt) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable")

    # -- commands -----------------------------------------------------------------------------
    def run(
        self, argv, timeout: float | None = None, max_output: int | None = None
    ) -> CommandResult:
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
        # A read of many jobs at once may ask for more than one command's usual output.
        out = CappedBuffer(max_output or self.settings.max_output_bytes)
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
                # Done once the exit status is in and the output has ended (EOF): sshd may send
                # the status before the last of the output (a CI run under load read an empty
                # `hostname` once), so the status alone does not mean the output is all here.
                if (
                    chan.exit_status_ready()
                    and (chan.eof_received or chan.closed)
                    and not chan.recv_ready()
                    and not chan.recv_stderr_ready()
                ):
                    break
                if self._clock() - start > timeout:
                    raise TransportError(
                        f"`{brief(argv)}` on {self.host} did not finish within {timeout:g}s",
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
                transport = client.get_transport()
                if transport is None:
                    raise EOFError("the connection closed before a session opened")
                return transport.open_session(timeout=self.settings.connect_timeout_s)
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
        self._config: paramiko.SSHConfig | None = None
        self._config_read = False
        self._lock = threading.Lock()
        self._warming: list[threading.Thread] = []

    def __getitem__(self, host: str) -> SshTransport:
        with self._lock:
            if host not in self._by_host:
                if not self._config_read:  # once per incident, on first use
                    self._config = read_ssh_config(self.settings.config_file)
                    self._config_read = True
                self._by_host[host] = SshTransport(host, self.settings, ssh_config=self._config)
            return self._by_host[host]

    def warm(self, host: str) -> None:
        """Open the connection to `host` in the background, for a stage that will use it next:
        its handshake then overlaps the Slurm reads before that stage. A connection that failed
        here (its retries spent) is that stage's answer, once; anything else that went wrong
        (an ssh_config that cannot be read) the stage meets itself, and says."""

        def connect() -> None:
            try:
                t = self[host]
            except Exception:  # noqa: BLE001 - the stage's own self[host] raises it again
                return
            try:
                t.connect()
            except RunbookError as e:
                t.warm_failed = e
            except Exception:  # noqa: BLE001 - not a RunbookError: the stage connects itself
                pass

        t = threading.Thread(target=connect, name=f"ssh-warm-{host}", daemon=True)
        self._warming.append(t)
        t.start()

    def stats(self) -> dict:
        """SSH connections and exec round trips per host, for the report and benchmarks."""
        return {h: {"connections": t.connects, "execs": t.execs} for h, t in self._by_host.items()}

    def close(self) -> None:
        for w in self._warming:
            w.join(self.settings.connect_timeout_s * 2)
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
