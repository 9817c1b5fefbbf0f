"""A node reachable only the way the user's ssh_config says: alias -> HostName, User,
IdentityFile, and a ProxyJump bastion. Real sshd on the test cluster's nodes; the site file sets
nothing but known_hosts and the ssh_config path, as a user's first site file would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from runbook.site import load_site
from runbook.transport.ssh import SshHosts, SshSettings

pytestmark = pytest.mark.integration


def _site(tmp_path, cluster, ssh_config: str):
    conf = tmp_path / "ssh_config"
    conf.write_text(ssh_config.format(key=cluster["RUNBOOK_CLUSTER_SSH_KEY"]))
    site = tmp_path / "alias.toml"
    site.write_text(
        f'[ssh]\nknown_hosts = "{cluster["RUNBOOK_CLUSTER_KNOWN_HOSTS"]}"\n'
        f'config_file = "{conf}"\nconnect_timeout_s = 5.0\nconnect_retries = 0\n'
        f'[state]\ndir = "{tmp_path / "state"}"\n'
    )
    return site


def test_node_reached_only_through_an_ssh_config_alias(cluster, tmp_path):
    site = _site(
        tmp_path,
        cluster,
        "Host gpu-02\n  HostName 198.18.0.12\n  User oncall\n  IdentityFile {key}\n",
    )
    cfg = load_site(str(site), environ={})
    assert cfg.ssh.user == "" and not cfg.ssh.addresses  # nothing but ssh_config says how
    with SshHosts(SshSettings.from_site(cfg)) as hosts:
        r = hosts["gpu-02"].run(["sh", "-c", "hostname; id -un"])
    assert r.ok and r.stdout.split() == ["gpu-02", "oncall"]


def test_node_behind_a_proxyjump_bastion_from_ssh_config(cluster, tmp_path):
    site = _site(
        tmp_path,
        cluster,
        "Host jumphost\n  HostName 198.18.0.11\n  User oncall\n  IdentityFile {key}\n"
        "Host gpu-03\n  HostName 198.18.0.13\n  User oncall\n  IdentityFile {key}\n"
        "  ProxyJump jumphost\n",
    )
    log = Path(cluster["RUNBOOK_CLUSTER_STATE"]) / "log" / "sshd-gpu-03.log"
    before = log.read_text().count("Accepted publickey for oncall from 198.18.0.11 ")
    with SshHosts(SshSettings.from_site(load_site(str(site), environ={}))) as hosts:
        t = hosts["gpu-03"]
        r = t.run(["hostname"])
        assert r.ok and r.stdout.strip() == "gpu-03"
        assert t.endpoint.jump is not None and t.endpoint.jump.address == "198.18.0.11"
    # gpu-03's own sshd saw the login arrive from the bastion's address, not from this host's.
    after = log.read_text().count("Accepted publickey for oncall from 198.18.0.11 ")
    assert after == before + 1


def test_without_the_alias_the_node_is_unreachable_with_a_clear_error(cluster, tmp_path):
    site = _site(tmp_path, cluster, "")
    from runbook.errors import TransportError

    with (
        SshHosts(SshSettings.from_site(load_site(str(site), environ={}))) as hosts,
        pytest.raises(TransportError, match="gpu-02"),
    ):
        hosts["gpu-02"].run(["hostname"])


def test_config_show_names_where_each_ssh_value_came_from(cluster, tmp_path):
    site = _site(tmp_path, cluster, "")
    r = CliRunner().invoke(
        cli, ["--config", str(site), "config", "show", "--json"], env={"RUNBOOK_SSH_USER": "oncall"}
    )
    assert r.exit_code == 0, r.output
    values = json.loads(r.output)["values"]
    assert values["ssh.user"] == {"value": "oncall", "origin": "environment RUNBOOK_SSH_USER"}
    assert values["ssh.config_file"]["origin"] == f"file {site}"
    assert values["ssh.port"] == {"value": 22, "origin": "default"}
