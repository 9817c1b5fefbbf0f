"""Site config: defaults < site file < RUNBOOK_* environment < flags, and unknown keys refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.errors import ConfigError, ExitCode
from runbook.site import SiteConfig, load_site

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "site.toml"
    p.write_text(text)
    return str(p)


def test_precedence_defaults_file_env_flags(tmp_path):
    site = write(tmp_path, '[ssh]\nuser = "from-file"\nport = 2222\nconnect_retries = 5\n')
    env = {"RUNBOOK_SSH_PORT": "2200", "RUNBOOK_SSH_CONNECT_RETRIES": "7"}
    cfg = load_site(site, environ=env, overrides={"ssh.connect_retries": 9, "ssh.user": None})
    assert cfg.ssh.user == "from-file"  # file over default; a flag not given (None) changes nothing
    assert cfg.ssh.port == 2200  # env over file
    assert cfg.ssh.connect_retries == 9  # flag over env
    assert cfg.ssh.command_timeout_s == SiteConfig().ssh.command_timeout_s  # default kept
    assert cfg.source == site


def test_env_coerces_types():
    env = {
        "RUNBOOK_POLICY_DRY_RUN": "yes",
        "RUNBOOK_POLICY_UNATTENDED_VERDICTS": "fragmentation, gpu_fault",
        "RUNBOOK_SSH_ADDRESSES": "gpu-01=10.0.0.1,gpu-02=10.0.0.2",
        "RUNBOOK_SSH_CONNECT_TIMEOUT_S": "2.5",
        "RUNBOOK_CLUSTER_STATE": "/ignored",  # another tool's variable, not a setting
    }
    cfg = load_site(None, environ=env)
    assert cfg.policy.dry_run is True
    assert cfg.policy.unattended_verdicts == ["fragmentation", "gpu_fault"]
    assert cfg.ssh.addresses == {"gpu-01": "10.0.0.1", "gpu-02": "10.0.0.2"}
    assert cfg.ssh.connect_timeout_s == 2.5


def test_unknown_file_key_lists_valid_keys(tmp_path):
    site = write(tmp_path, "[policy]\ndryrun = true\n")
    with pytest.raises(ConfigError) as e:
        load_site(site, environ={})
    assert "dryrun" in str(e.value) and "dry_run" in str(e.value)
    assert e.value.exit_code == ExitCode.USAGE


def test_unknown_section(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown section \[slurmm\].*slurm"):
        load_site(write(tmp_path, "[slurmm]\nx = 1\n"), environ={})


def test_unknown_env_key_of_known_section():
    with pytest.raises(ConfigError, match="RUNBOOK_SSH_USR.*valid keys.*user"):
        load_site(None, environ={"RUNBOOK_SSH_USR": "x"})


def test_wrong_type_names_key_and_value(tmp_path):
    with pytest.raises(ConfigError, match=r"\[ssh\] port: expected int, found 'twenty-two'"):
        load_site(write(tmp_path, '[ssh]\nport = "twenty-two"\n'), environ={})


def test_bad_toml_and_missing_site(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_site(write(tmp_path, "[ssh\n"), environ={})
    with pytest.raises(ConfigError, match="(?s)no site named 'nope'.*devcluster"):
        load_site("nope", environ={})


@pytest.mark.parametrize(
    "path", sorted((REPO / "site_config").glob("*.toml")), ids=lambda p: p.name
)
def test_bundled_site_files_load(path):
    load_site(str(path), environ={})


def test_example_documents_every_key():
    """example.toml must name every key with its default, so it cannot drift from the code."""
    import dataclasses

    from runbook.site import read_site_file

    data = read_site_file(REPO / "site_config" / "example.toml")
    defaults = SiteConfig()
    for section in dataclasses.fields(SiteConfig):
        if section.name in ("source", "origins"):
            continue
        want = dataclasses.asdict(getattr(defaults, section.name))
        assert data[section.name] == want, f"[{section.name}] in example.toml differs from defaults"


def test_site_search_order_user_folder_before_etc_and_checkout(tmp_path, monkeypatch):
    from runbook.site import site_dirs

    env = {"RUNBOOK_SITE_DIR": str(tmp_path / "a"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    dirs = site_dirs(env)
    assert dirs[:3] == [
        tmp_path / "a",
        tmp_path / "xdg" / "runbook" / "sites",
        Path("/etc/runbook/sites"),
    ]
    assert dirs[3] == Path.cwd() / "site_config"
    (tmp_path / "xdg" / "runbook" / "sites").mkdir(parents=True)
    (tmp_path / "xdg" / "runbook" / "sites" / "prod.toml").write_text('[ssh]\nuser = "u"\n')
    cfg = load_site("prod", environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert cfg.ssh.user == "u" and cfg.origins["ssh.user"].startswith("file ")


def test_config_file_and_site_are_exclusive_and_origins_are_kept(tmp_path):
    f = write(tmp_path, '[ssh]\nuser = "from-file"\nport = 2222\n')
    cfg = load_site(
        config_file=f,
        environ={"RUNBOOK_SSH_PORT": "2200", "RUNBOOK_PLAYBOOKS": "/pb"},
        overrides={"policy.dry_run": True},
    )
    assert cfg.origins["ssh.user"] == f"file {f}"
    assert (cfg.ssh.port, cfg.origins["ssh.port"]) == (2200, "environment RUNBOOK_SSH_PORT")
    assert (cfg.playbooks.dir, cfg.origins["playbooks.dir"]) == (
        "/pb",
        "environment RUNBOOK_PLAYBOOKS",
    )
    assert cfg.origins["policy.dry_run"] == "command line"
    assert "ssh.max_parallel" not in cfg.origins  # a default
    with pytest.raises(ConfigError, match="both --site"):
        load_site("x", config_file=f, environ={})
    with pytest.raises(ConfigError, match="does not exist"):
        load_site(config_file=str(tmp_path / "none.toml"), environ={})


def test_state_dir_on_a_network_filesystem_is_refused(tmp_path):
    from runbook.state import check_state_dir, mount_fstype

    mounts = (
        "/dev/sda1 / ext4 rw 0 0\n"
        "nas:/home /home nfs4 rw,vers=4.2 0 0\n"
        "10.0.0.1@o2ib:/scratch /scratch lustre rw 0 0\n"
        "/dev/sdb1 /home/local\\040disk xfs rw 0 0\n"
    )
    assert mount_fstype("/home/alice/.local/state/runbook", mounts) == "nfs4"
    assert mount_fstype("/scratch/x", mounts) == "lustre"
    assert mount_fstype("/home/local disk/s", mounts) == "xfs"
    assert mount_fstype("/var/lib/runbook", mounts) == "ext4"
    assert mount_fstype("/homeward", mounts) == "ext4"  # a prefix of the name is not the mount
    fake = tmp_path / "mounts"
    fake.write_text(f"/dev/sda1 / ext4 rw 0 0\nnas:/x {tmp_path} nfs rw 0 0\n")
    with pytest.raises(ConfigError, match="nfs filesystem"):
        check_state_dir(tmp_path / "state", allow_network_fs=False, mounts_file=str(fake))
    check_state_dir(tmp_path / "state", allow_network_fs=True, mounts_file=str(fake))
