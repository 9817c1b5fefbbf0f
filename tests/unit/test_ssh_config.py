"""ssh_config as OpenSSH users write it: which host, port, user, key and bastion runbook uses.

Pure: `resolve_endpoint` takes the settings and a parsed config (paramiko.SSHConfig) and returns
the endpoint; the connection itself is tested against the real cluster's sshd in
tests/integration/test_ssh_config.py.
"""

from __future__ import annotations

import os

import paramiko
import pytest

from runbook.errors import TransportError
from runbook.site import load_site
from runbook.transport.ssh import SshSettings, resolve_endpoint

CONFIG = """
Host bastion
    HostName login.example.org
    User jumper
    Port 2222
    IdentityFile ~/.ssh/bastion_key

Host gpu-*
    User trainer
    IdentityFile ~/.ssh/cluster_key
    ProxyJump bastion

Host gpu-07
    HostName 10.9.0.7
    Port 2200

Host direct-*
    ProxyJump none
"""


def cfg(text=CONFIG) -> paramiko.SSHConfig:
    return paramiko.SSHConfig.from_text(text)


def settings(tmp_path, toml: str = "") -> SshSettings:
    path = tmp_path / "site.toml"
    path.write_text(toml)
    return SshSettings.from_site(load_site(str(path), environ={}))


def test_alias_gives_hostname_port_user_key_and_bastion(tmp_path):
    ep = resolve_endpoint("gpu-07", settings(tmp_path), cfg())
    assert (ep.host, ep.address, ep.port, ep.user) == ("gpu-07", "10.9.0.7", 2200, "trainer")
    assert ep.key_files == (os.path.expanduser("~/.ssh/cluster_key"),)
    assert ep.jump is not None
    assert (ep.jump.address, ep.jump.port, ep.jump.user) == ("login.example.org", 2222, "jumper")
    assert ep.jump.key_files == (os.path.expanduser("~/.ssh/bastion_key"),)
    assert ep.jump.jump is None


def test_site_values_set_on_purpose_win_over_ssh_config(tmp_path):
    s = settings(
        tmp_path,
        '[ssh]\nuser = "oncall"\nport = 22\nidentity_file = "/k"\n'
        '[ssh.addresses]\n"gpu-07" = "192.0.2.7"\n',
    )
    ep = resolve_endpoint("gpu-07", s, cfg())
    assert (ep.address, ep.port, ep.user, ep.key_files) == ("192.0.2.7", 22, "oncall", ("/k",))
    # ProxyJump was not set by the site, so ssh_config's bastion still applies.
    assert ep.jump is not None and ep.jump.address == "login.example.org"


def test_defaults_yield_to_ssh_config_and_apply_without_it(tmp_path):
    s = settings(tmp_path)
    plain = resolve_endpoint("node-1", s, None)
    assert (plain.address, plain.port, plain.user, plain.key_files, plain.jump) == (
        "node-1",
        22,
        "",
        (),
        None,
    )
    assert resolve_endpoint("direct-1", s, cfg()).jump is None  # ProxyJump none


def test_site_proxy_jump_is_resolved_through_ssh_config_too(tmp_path):
    s = settings(tmp_path, '[ssh]\nproxy_jump = "me@bastion:2022"\n')
    ep = resolve_endpoint("direct-1", s, cfg())
    assert ep.jump is not None
    assert (ep.jump.address, ep.jump.port, ep.jump.user) == ("login.example.org", 2022, "me")


@pytest.mark.parametrize(
    "text, match",
    [
        ("Host a\n ProxyJump b1,b2\n", "chains several bastions"),
        ("Host a\n Port http\n", "not a TCP port"),
        ("Host a\n ProxyJump b\nHost b\n ProxyJump a\n", "loops"),
    ],
)
def test_what_runbook_cannot_follow_is_a_clear_error(tmp_path, text, match):
    with pytest.raises(TransportError, match=match):
        resolve_endpoint("a", settings(tmp_path), cfg(text))


def test_config_file_setting_and_unreadable_file(tmp_path):
    from runbook.transport.ssh import read_ssh_config

    assert read_ssh_config("") is None
    assert read_ssh_config(str(tmp_path / "missing")) is None
    good = tmp_path / "config"
    good.write_text(CONFIG)
    assert read_ssh_config(str(good)).lookup("gpu-07")["hostname"] == "10.9.0.7"
    s = settings(tmp_path, f'[ssh]\nconfig_file = "{good}"\n')
    assert s.config_file == str(good)


def test_match_exec_still_runs_though_paramiko_came_without_invoke(tmp_path):
    """runbook imports paramiko without invoke (its cost, for a feature few configs use); a
    config with `Match exec` brings it in, and the block whose command succeeds applies. In a
    fresh interpreter, so the import is the one runbook makes."""
    import subprocess
    import sys

    cfg = tmp_path / "config"
    cfg.write_text(
        'Match exec "false" host n1\n  User nobody\nMatch exec "true" host n1\n  User ops\n'
    )
    probe = (
        "import sys; from runbook.transport import ssh; "
        "before = 'invoke' in sys.modules; "
        f"c = ssh.read_ssh_config({str(cfg)!r}); "
        "print(before, c.lookup('n1').get('user'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "ops"], done.stderr


def test_match_exec_without_invoke_installed_says_what_to_do(tmp_path):
    """Where invoke is not installed, a config with `Match exec` is refused with what to do,
    not read as a parse error. A fresh interpreter in which invoke cannot be imported."""
    import subprocess
    import sys

    cfg = tmp_path / "config"
    cfg.write_text('Match exec "true" host n1\n  User ops\n')
    probe = (
        "import sys; sys.modules['invoke'] = None\n"
        "from runbook.errors import TransportError\n"
        "from runbook.transport import ssh\n"
        f"try:\n    ssh.read_ssh_config({str(cfg)!r})\n"
        "except TransportError as e:\n    print(e.message); print(e.hint)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "has a `Match exec` block" in done.stdout and "invoke is not installed" in done.stdout
    assert "pip install invoke" in done.stdout, done.stderr
