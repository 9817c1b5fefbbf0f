"""Per-site settings: TOML files in site_config/ loaded into frozen dataclasses.

Precedence, lowest first: the defaults below < the site file < `RUNBOOK_<SECTION>_<KEY>` environment
variables < command-line flags. An unknown key anywhere is an error that lists the valid keys,
because a misspelt `dry_run` that is silently ignored is how a runbook mutates a production cluster.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runbook.errors import ConfigError

ENV_PREFIX = "RUNBOOK_"
# Environment variables that share the prefix but are not settings.
_ENV_NOT_SETTINGS = {"RUNBOOK_SITE", "RUNBOOK_SITE_DIR"}


@dataclass(frozen=True)
class SiteSection:
    name: str = "default"
    description: str = ""


@dataclass(frozen=True)
class SlurmSection:
    backend: str = "cli"  # cli | pyslurm
    transport: str = "local"  # where Slurm commands run: local (login node) | ssh
    login_host: str = ""  # with transport = "ssh"
    command_timeout_s: float = 60.0


@dataclass(frozen=True)
class SshSection:
    user: str = ""  # empty: the current user
    identity_file: str = ""  # empty: the SSH agent
    known_hosts: str = "~/.ssh/known_hosts"
    port: int = 22
    proxy_jump: str = ""  # bastion as [user@]host[:port]
    connect_timeout_s: float = 10.0
    command_timeout_s: float = 60.0
    connect_retries: int = 2
    max_parallel: int = 16
    max_output_bytes: int = 1_048_576
    # node name -> address, for nodes that DNS does not resolve from where runbook runs.
    addresses: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StateSection:
    dir: str = "~/.local/state/runbook"  # SQLite state and one folder per incident


@dataclass(frozen=True)
class PolicySection:
    dry_run: bool = False
    assume_yes: bool = False
    # Verdicts whose first rung may be applied without a person confirming it.
    unattended_verdicts: list[str] = field(default_factory=lambda: ["fragmentation", "true_oom"])
    drain_faulty_nodes: bool = True


@dataclass(frozen=True)
class ProbesSection:
    # Kernel log on a compute node. "{since_epoch}" is replaced by the job's start (Unix seconds),
    # for commands that filter by time themselves (journalctl -k --since @{since_epoch}); lines
    # from other commands are filtered by their time stamps.
    kernel_log: list[str] = field(default_factory=lambda: ["dmesg", "--time-format=iso"])
    nvidia_smi: str = "nvidia-smi"
    # How to list GPU processes: "query" (nvidia-smi --query-compute-apps=pid,used_memory,
    # gpu_uuid --format=csv) or "table" (plain nvidia-smi, its Processes section).
    compute_apps: str = "query"
    timeout_s: float = 30.0


@dataclass(frozen=True)
class KnobsSection:
    """Where plain job scripts (not rendered by runbook) keep their training knobs. Names that
    start with "-" are command-line flags (`--flag N` or `--flag=N`); others are shell variables
    (`NAME=N` or `export NAME=N`)."""

    micro_batch: list[str] = field(default_factory=lambda: [
        "--micro-batch-size", "--micro_batch_size", "--per_device_train_batch_size",
        "--per-device-train-batch-size", "--train_micro_batch_size_per_gpu", "--batch-size",
        "MICRO_BATCH_SIZE", "MICRO_BATCH", "MBS"])  # fmt: skip
    grad_accum: list[str] = field(default_factory=lambda: [
        "--gradient_accumulation_steps", "--gradient-accumulation-steps", "--grad-accum",
        "GRADIENT_ACCUMULATION_STEPS", "GRAD_ACCUM", "GRAD_ACC"])  # fmt: skip
    global_batch: list[str] = field(default_factory=lambda: [
        "--global-batch-size", "--global_batch_size", "GLOBAL_BATCH_SIZE", "GBS"])  # fmt: skip
    activation_checkpointing: list[str] = field(default_factory=lambda: [
        "--gradient-checkpointing", "--gradient_checkpointing", "--recompute-activations",
        "--activation-checkpointing"])  # fmt: skip
    sharding: list[str] = field(default_factory=lambda: [
        "--zero-stage", "--zero_stage", "--fsdp-sharding-degree", "ZERO_STAGE"])  # fmt: skip


@dataclass(frozen=True)
class CheckpointsSection:
    # Where a job's checkpoints are: {workdir} is the job's working directory.
    pattern: str = "{workdir}/checkpoints/step_*"
    marker: str = ""  # a file a checkpoint directory must hold to count as complete
    # How the rerun is told to resume: an environment variable, a flag added to the training
    # command, and/or the template variable of runbook-rendered jobs.
    resume_env: str = "RUNBOOK_RESUME_FROM"
    resume_flag: str = ""
    resume_var: str = "resume_from"
    load_check_max_mib: float = 256.0  # torch.load(weights_only=True) only below this size


@dataclass(frozen=True)
class LogsSection:
    # Where the log filter runs: "batch_host" (over SSH, on the job's first node: node-local and
    # shared file systems alike) or "local" (this host sees the job's files).
    read_on: str = "batch_host"
    tail_lines: int = 60  # the last lines of each log too: the progress line before the failure
    # A training progress line; the number is the step (the last one names the failing step).
    step_pattern: str = r"(?i)\b(?:step|iter(?:ation)?|global_step)[\s:=#]+(\d+)"


@dataclass(frozen=True)
class HookSection:
    bind: str = "127.0.0.1"  # loopback unless a site decides otherwise
    port: int = 8787
    # A PagerDuty-style signing secret (X-PagerDuty-Signature: v1=hex(HMAC-SHA256(secret, body)))
    # and/or a bearer token. Prefer RUNBOOK_HOOK_SECRET / RUNBOOK_HOOK_TOKEN to a file.
    secret: str = ""
    token: str = ""
    max_body_bytes: int = 2_000_000  # go-pagerduty caps webhook bodies at 2 MB
    workers: int = 4  # incidents handled at once in the background
    alertmanager_label: str = "slurm_job_id"
    pagerduty_title_pattern: str = r"(?i)\bjob[ _-]?(?:id)?[ :#=]*(\d+)"


@dataclass(frozen=True)
class NotifySection:
    webhook_url: str = ""  # Slack-compatible: POST {"text": summary}
    mail_to: str = ""  # comma-separated; sent through the local MTA
    mail_from: str = "runbook@localhost"
    sendmail: str = "/usr/sbin/sendmail"
    timeout_s: float = 10.0


@dataclass(frozen=True)
class SweepSection:
    partitions: list[str] = field(default_factory=list)  # empty: every partition
    include_running: bool = True  # running jobs whose logs show an OOM (wedged ranks)


@dataclass(frozen=True)
class SiteConfig:
    site: SiteSection = field(default_factory=SiteSection)
    slurm: SlurmSection = field(default_factory=SlurmSection)
    ssh: SshSection = field(default_factory=SshSection)
    state: StateSection = field(default_factory=StateSection)
    policy: PolicySection = field(default_factory=PolicySection)
    probes: ProbesSection = field(default_factory=ProbesSection)
    knobs: KnobsSection = field(default_factory=KnobsSection)
    checkpoints: CheckpointsSection = field(default_factory=CheckpointsSection)
    logs: LogsSection = field(default_factory=LogsSection)
    hook: HookSection = field(default_factory=HookSection)
    notify: NotifySection = field(default_factory=NotifySection)
    sweep: SweepSection = field(default_factory=SweepSection)
    source: str = "built-in defaults"  # where the values came from, for messages

    def path(self, value: str) -> Path:
        """A path setting with ~ and $VARS expanded."""
        return Path(os.path.expandvars(os.path.expanduser(value)))


def _sections() -> dict[str, type]:
    return {
        f.name: typing.get_type_hints(SiteConfig)[f.name]
        for f in dataclasses.fields(SiteConfig)
        if f.name != "source"
    }


def _valid(names) -> str:
    return ", ".join(sorted(names))


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """Check a TOML value, or convert an environment string, to the field's declared type."""
    origin = typing.get_origin(hint)
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in {
            "1",
            "true",
            "yes",
            "on",
            "0",
            "false",
            "no",
            "off",
        }:
            return value.lower() in {"1", "true", "yes", "on"}
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
    elif hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is list:
        if isinstance(value, str):  # environment: comma-separated
            value = [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
    elif origin is dict:
        if isinstance(value, str):  # environment: k=v,k=v
            pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
            if all(len(p) == 2 for p in pairs):
                value = {k.strip(): v.strip() for k, v in pairs}
        if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()):
            return dict(value)
    shown = (
        getattr(hint, "__name__", str(hint))
        if not isinstance(hint, types.GenericAlias)
        else str(hint)
    )
    raise ConfigError(
        f"{where}: expected {shown}, found {value!r}",
        hint="fix the value (see site_config/example.toml for every key with its default)",
    )


def _merge(cfg: SiteConfig, layer: Mapping[str, Mapping[str, Any]], origin: str) -> SiteConfig:
    sections = _sections()
    changes: dict[str, Any] = {}
    for sname, values in layer.items():
        if sname not in sections:
            raise ConfigError(
                f"{origin}: unknown section [{sname}]; valid sections: {_valid(sections)}",
                hint="remove or rename it",
            )
        if not isinstance(values, Mapping):
            raise ConfigError(
                f"{origin}: [{sname}] must be a table, found {values!r}",
                hint=f"write it as a [{sname}] section with key = value lines",
            )
        stype = sections[sname]
        hints = typing.get_type_hints(stype)
        unknown = set(values) - set(hints)
        if unknown:
            raise ConfigError(
                f"{origin}: unknown key(s) {_valid(unknown)} in [{sname}]; "
                f"valid keys: {_valid(hints)}",
                hint="remove or rename them (site_config/example.toml documents every key)",
            )
        current = getattr(cfg, sname)
        coerced = {k: _coerce(v, hints[k], f"{origin}: [{sname}] {k}") for k, v in values.items()}
        changes[sname] = dataclasses.replace(current, **coerced)
    return dataclasses.replace(cfg, **changes)


def env_layer(environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """RUNBOOK_SSH_USER=x -> {"ssh": {"user": "x"}}; unknown keys of known sections are errors."""
    sections = _sections()
    layer: dict[str, dict[str, str]] = {}
    for var, value in environ.items():
        if not var.startswith(ENV_PREFIX) or var in _ENV_NOT_SETTINGS:
            continue
        rest = var[len(ENV_PREFIX) :].lower()
        sname = next((s for s in sections if rest.startswith(s + "_")), None)
        if sname is None:
            continue  # RUNBOOK_CLUSTER_* and friends belong to other tools
        key = rest[len(sname) + 1 :]
        valid = typing.get_type_hints(sections[sname])
        if key not in valid:
            raise ConfigError(
                f"environment variable {var}: [{sname}] has no key {key!r}; valid keys: "
                f"{_valid(valid)}",
                hint=f"unset {var} or use one of RUNBOOK_{sname.upper()}_<KEY>",
            )
        layer.setdefault(sname, {})[key] = value
    return layer


def site_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("RUNBOOK_SITE_DIR"):
        dirs.append(Path(os.environ["RUNBOOK_SITE_DIR"]))
    dirs.append(Path.cwd() / "site_config")
    dirs.append(Path(__file__).resolve().parent.parent / "site_config")  # a source checkout
    return list(dict.fromkeys(d.resolve() for d in dirs))


def find_site_file(name: str) -> Path:
    if name.endswith(".toml") or os.sep in name:
        p = Path(name).expanduser()
        if not p.is_file():
            raise ConfigError(
                f"site file {p} does not exist", hint="check the path given to --site"
            )
        return p
    tried = []
    for d in site_dirs():
        p = d / f"{name}.toml"
        tried.append(str(p))
        if p.is_file():
            return p
    known = sorted({p.stem for d in site_dirs() if d.is_dir() for p in d.glob("*.toml")})
    raise ConfigError(
        f"no site named {name!r}: looked for {', '.join(tried)}",
        hint=f"use one of: {_valid(known) or '(none found)'}, or set RUNBOOK_SITE_DIR",
    )


def load_site(
    name: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> SiteConfig:
    """Build the site configuration: defaults < file < environment < flags.

    `name` is a site name (site_config/NAME.toml), a path to a .toml file, or None for the
    built-in defaults. `overrides` holds flag values as {"section.key": value}; None values are
    flags the user did not give.
    """
    environ = os.environ if environ is None else environ
    cfg = SiteConfig()
    if name:
        path = find_site_file(name)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(
                f"cannot read site file {path}: {e}",
                hint="check the path and its permissions, or use --site NAME for "
                "site_config/NAME.toml",
            ) from e
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(
                f"site file {path} is not valid TOML: {e}",
                hint="fix the line named; site_config/example.toml shows every key",
            ) from e
        cfg = _merge(cfg, data, str(path))
        cfg = dataclasses.replace(cfg, source=str(path))
    cfg = _merge(cfg, env_layer(environ), "environment")
    flags: dict[str, dict[str, Any]] = {}
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        sname, _, key = dotted.partition(".")
        flags.setdefault(sname, {})[key] = value
    return _merge(cfg, flags, "command line")
