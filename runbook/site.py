"""Per-site settings: a TOML file loaded into frozen dataclasses.

Precedence, lowest first: the defaults below < the site file < `RUNBOOK_<SECTION>_<KEY>` environment
variables < command-line flags. An unknown key anywhere is an error that lists the valid keys,
because a misspelt `dry_run` that is silently ignored is how a runbook mutates a production cluster.

Where the site file is found: `--config FILE` (or `RUNBOOK_CONFIG`) names it; `--site NAME` (or
`RUNBOOK_SITE`) looks for NAME.toml in `$RUNBOOK_SITE_DIR`, `$XDG_CONFIG_HOME/runbook/sites`
(`~/.config/runbook/sites`), `/etc/runbook/sites`, then `./site_config`: the places an admin or a
user without root would put it. Every value remembers where it came from (`runbook config show`).

pathlib is imported only in the functions that build a path: a run without a site file
(`runbook diagnose`) never needs one, and on an installed Python 3.10 the import costs ~6 ms of
start-up (bench/startup.py).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from runbook.errors import ConfigError
from runbook.record import record

if TYPE_CHECKING:
    from pathlib import Path

ENV_PREFIX = "RUNBOOK_"
# Environment variables that share the prefix but are not settings.
_ENV_NOT_SETTINGS = {"RUNBOOK_SITE", "RUNBOOK_SITE_DIR", "RUNBOOK_CONFIG"}
# Older spellings kept working, mapped into the one precedence (section, key).
_ENV_ALIASES = {"RUNBOOK_PLAYBOOKS": ("playbooks", "dir")}


# Sections are frozen: settings do not change under a run. They are records (runbook.record), not
# dataclasses: `runbook diagnose` reads a site on every start, and 16 dataclasses compiled 48
# generated methods on each (bench/startup.py).
@record(frozen=True)
class SiteSection:
    """[site]: the site's name and a line about it."""

    name: str = "default"
    description: str = ""


@record(frozen=True)
class SlurmSection:
    """[slurm]: how Slurm commands are run, where, and as whom."""

    backend: str = "cli"  # cli | pyslurm
    transport: str = "local"  # where Slurm commands run: local (login node) | ssh
    login_host: str = ""  # with transport = "ssh"
    command_timeout_s: float = 60.0
    # The account runbook's own sbatch ran as before reruns were their owners' ([identity]):
    # a tag of that time, without an owner, counts on its jobs only; empty: this account.
    submit_user: str = ""
    # Where one slurmdbd serves several clusters: this site's ClusterName, passed as `-M NAME`
    # to every Slurm command. It also scopes the shared state ([state] url): incidents, locks,
    # the hook's queue and node history of each cluster apart. Empty: the local cluster.
    cluster: str = ""


@record(frozen=True)
class IdentitySection:
    """[identity]: how runbook acts for a job's owner (docs/install.md, "Running for every
    user"). An action on a job (scancel, sbatch, scontrol hold/release/update, the files its
    rerun reads) is its owner's; only an action on the cluster (a drain) is runbook's own."""

    # auto: as root, runuser; as any other account, its own jobs only (a job of another user
    # is refused, exit 4, with the grant it needs). self: runbook's own jobs only. sudo:
    # `sudo -n -u OWNER` (a service account with the sudoers grant `runbook config show`
    # prints). runuser: `runuser -u OWNER --` (runbook runs as root). sbatch_uid: root;
    # sbatch --uid/--gid for the rerun, the job's other commands through runuser.
    act_as: str = "auto"
    # How the job's files on its nodes are read by the SSH account: "check" reads only files
    # that belong to the job's owner (nothing of another account reaches the report, and a
    # folder the account may not enter is said, never "no failure found"); "sudo" reads them
    # as the owner through the SSH account's `sudo -n -u OWNER` on the node (a folder of mode
    # 700, such as a home folder, is read that way only).
    node_reads: str = "check"
    # Where the rerun's files (the patched script, config copies, its environment file) are
    # written as the owner: a folder under the job's working directory, made mode 700.
    rerun_dir: str = ".runbook"
    # The group whose members runbook may act for through sudo (the sudoers line it prints
    # names it, `(%GROUP)`, rather than every account but root); empty: every account but root.
    owners_group: str = ""
    # In an incident, check each plan against the job's program's own answer (its --help, a
    # LightningCLI's --print_config), run as the owner on runbook's host with the interpreter of
    # the job's recorded environment (VIRTUAL_ENV, CONDA_PREFIX, PATH), no GPU and 120 s. Off
    # by default: it runs the user's code on this host (as the user).
    ask_program: bool = False


@record(frozen=True)
class SshSection:
    """[ssh]: how nodes are reached (user, key, ssh_config, known hosts, timeouts)."""

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
    # OpenSSH client config read for HostName, User, Port, IdentityFile and ProxyJump of each node
    # (values set in this section win). Empty: none. A missing file is the same as an empty one.
    config_file: str = "~/.ssh/config"
    # node name -> address, for nodes that DNS does not resolve from where runbook runs.
    addresses: dict[str, str] = field(default_factory=dict)


@record(frozen=True)
class StateSection:
    """[state]: where incidents, the ledger and locks are kept (a folder or PostgreSQL)."""

    dir: str = "~/.local/state/runbook"  # SQLite state and one folder per incident
    # SQLite's locks are not reliable on NFS, Lustre, GPFS, BeeGFS and the like, where cluster
    # home folders usually live: such a state dir is refused unless a site says it knows better.
    allow_network_fs: bool = False
    # Below this much free space in the state dir, runbook changes nothing (it must be able to
    # write its ledger and report after a scancel).
    min_free_mib: float = 64.0
    # Key of the signatures on lineage tags (job comments). Empty: a random key kept in the state
    # dir. Agent hosts that share work set the same value (prefer RUNBOOK_STATE_LINEAGE_SECRET).
    lineage_secret: str = ""
    # PostgreSQL shared by several agent hosts (hook, sweep, people), as a libpq URL:
    # postgresql://runbook@db.example/runbook (a password goes in ~/.pgpass, or prefer
    # RUNBOOK_STATE_URL). Empty: SQLite in `dir`. Incident folders stay in `dir` either way.
    url: str = ""
    # A lock's lease: a holder renews it every third of this; one killed midway (or whose host
    # died) is taken over by another process this long after its last renewal.
    lease_s: float = 60.0


@record(frozen=True)
class NodesSection:
    """[nodes]: when a node's history of events gets it drained, not only excluded."""

    # A node with this many events (Xid, remap, ECC, co-tenant, OOM; each counted once) in the
    # window is drained with a reason instead of only excluded. 0: never (the default).
    drain_after_events: int = 0
    window_days: float = 30.0
    # Kernel lines stamped this soon after boot are the boot's own, not failures.
    boot_grace_s: float = 300.0


@record(frozen=True)
class LadderSection:
    """[ladder]: how the ladder's rungs are sized."""

    # The share of the card kept free under the fitted micro-batch's predicted peak
    # (planning.fit): the prediction is a lower bound of the step's peak, so the margin covers
    # what the failed request did not show.
    fit_margin: float = 0.10

    def __post_init__(self):
        if not isinstance(self.fit_margin, (int, float)) or not 0.0 <= self.fit_margin < 0.9:
            raise ConfigError(
                f"[ladder] fit_margin = {self.fit_margin!r} is not a share of the card",
                hint="give a number from 0 to below 0.9, e.g. fit_margin = 0.10",
            )


@record(frozen=True)
class HangSection:
    """[hang]: when a running job counts as hung, and how its stacks are taken."""

    # runbook sweep: a RUNNING job whose logs printed no new training step, and whose log files
    # were not written, for this many minutes is hung. 0: the sweep does not look for hung jobs.
    stall_minutes: float = 0.0
    # py-spy on the nodes (pip install py-spy): a name on PATH or a path.
    py_spy: str = "py-spy"
    # Run `py-spy dump --pid N` and `scontrol listpids` under `sudo -n`: reading another user's
    # processes needs root (or CAP_SYS_PTRACE); docs/hang.md says what a site grants.
    sudo: bool = False
    # Each py-spy dump is killed after this long; a node answers within about this time.
    py_spy_timeout_s: float = 20.0


@record(frozen=True)
class PlaybooksSection:
    """[playbooks]: a site folder of playbooks used instead of the packaged ones."""

    # A folder holding the site's own oom.yaml. Empty: the playbooks shipped inside runbook.
    # RUNBOOK_PLAYBOOKS (older name) and RUNBOOK_PLAYBOOKS_DIR set it from the environment.
    dir: str = ""


PREVENT_MODES = ("never", "opted_in", "declared")  # [policy] unattended_prevent


@record(frozen=True)
class PolicySection:
    """[policy]: what runbook may do without a person confirming it."""

    dry_run: bool = False
    assume_yes: bool = False
    # Verdicts whose first rung may be applied without a person confirming it.
    unattended_verdicts: list[str] = field(default_factory=lambda: ["fragmentation", "true_oom"])
    drain_faulty_nodes: bool = True
    # shrink_world runs a job on fewer nodes (same global batch, longer steps): unattended only
    # when the site says so; otherwise a person confirms (or --yes).
    unattended_shrink: bool = False
    # grow_world cancels a shrunk job that trains well to rerun it at full size: unattended only
    # when the site says so (then `runbook sweep` grows shrunk jobs whose nodes are back).
    unattended_grow: bool = False
    # Before the OOM (runbook prevent): which running jobs heading for an OOM the sweep asks to
    # checkpoint, then cancels and resubmits fitted. "opted_in": those whose every rank handles
    # the request and whose owner set RUNBOOK_PREVENT=1; "declared": every job that handles
    # it; "never": report only. A job without a handler is only ever reported.
    unattended_prevent: str = "opted_in"
    # How long the job is given to write the checkpoint it was asked for (read back from its
    # log and its folder); past it, nothing else is changed.
    prevent_wait_s: float = 300.0

    def __post_init__(self):
        if self.unattended_prevent not in PREVENT_MODES:
            raise ConfigError(
                f"[policy] unattended_prevent = {self.unattended_prevent!r} is not one of "
                f"{', '.join(PREVENT_MODES)}",
                hint='e.g. unattended_prevent = "opted_in"',
            )
        if not isinstance(self.prevent_wait_s, (int, float)) or not 0 < self.prevent_wait_s <= 3600:
            raise ConfigError(
                f"[policy] prevent_wait_s = {self.prevent_wait_s!r} is not a number of seconds "
                "from 1 to 3600",
                hint="e.g. prevent_wait_s = 300",
            )


@record(frozen=True)
class ProbesSection:
    """[probes]: the node-health commands and their time limits."""

    # Kernel log on a compute node. "{since_epoch}" is replaced by the job's start (Unix seconds),
    # for commands that filter by time themselves (journalctl -k --since @{since_epoch}); lines
    # from other commands are filtered by their time stamps.
    kernel_log: list[str] = field(default_factory=lambda: ["dmesg", "--time-format=iso"])
    nvidia_smi: str = "nvidia-smi"
    # How to list GPU processes: "query" (nvidia-smi --query-compute-apps=pid,used_memory,
    # gpu_uuid --format=csv) or "table" (plain nvidia-smi, its Processes section).
    compute_apps: str = "query"
    timeout_s: float = 30.0


@record(frozen=True)
class KnobsSection:
    """Where plain job scripts (not rendered by runbook) keep their training knobs. Names that
    start with "-" are command-line flags (`--flag N` or `--flag=N`); dotted names are Hydra-style
    overrides on the command line (`model.micro_batch_size=4`, NeMo, verl); others are shell
    variables (`NAME=N` or `export NAME=N`). Keys in the config files a script names are in
    playbooks/knobs.yaml."""

    micro_batch: list[str] = field(
        default_factory=lambda: [
            "--micro-batch-size",
            "--micro_batch_size",
            "--per_device_train_batch_size",
            "--per-device-train-batch-size",
            "--train_micro_batch_size_per_gpu",
            "--batch-size",
            "--training.local_batch_size",
            "--micro_train_batch_size",
            "--batch_size_training",
            "model.micro_batch_size",
            "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
            "MICRO_BATCH_SIZE",
            "MICRO_BATCH",
            "MBS",
        ]
    )
    grad_accum: list[str] = field(
        default_factory=lambda: [
            "--gradient_accumulation_steps",
            "--gradient-accumulation-steps",
            "--grad-accum",
            "--accum-freq",
            "GRADIENT_ACCUMULATION_STEPS",
            "GRAD_ACCUM",
            "GRAD_ACC",
        ]
    )
    global_batch: list[str] = field(
        default_factory=lambda: [
            "--global-batch-size",
            "--global_batch_size",
            "--training.global_batch_size",
            "--train_batch_size",  # OpenRLHF: the global batch, beside --micro_train_batch_size
            "model.global_batch_size",
            # verl: the actor's update batch; accumulation follows from the micro-batch per GPU
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            "GLOBAL_BATCH_SIZE",
            "GBS",
            # yacs pairs on the command line: SlowFast's and pycls' TRAIN.BATCH_SIZE and
            # detectron2's SOLVER.IMS_PER_BATCH are the batch of every GPU together
            "TRAIN.BATCH_SIZE",
            "SOLVER.IMS_PER_BATCH",
        ]
    )
    activation_checkpointing: list[str] = field(
        default_factory=lambda: [
            "--gradient-checkpointing",
            "--gradient_checkpointing",
            "--recompute-activations",
            "--activation-checkpointing",
        ]
    )
    # The evaluation's own batch (halve_eval_batch), and HF's eval_accumulation_steps.
    eval_batch: list[str] = field(
        default_factory=lambda: [
            "--per_device_eval_batch_size",
            "--per-device-eval-batch-size",
            "--eval_batch_size",
            "--eval-batch-size",
            "--eval-micro-batch-size",
            "--val-batch-size",
            "--val_batch_size",
            "EVAL_BATCH_SIZE",
            "EVAL_BATCH",
        ]
    )
    eval_accumulation: list[str] = field(
        default_factory=lambda: ["--eval_accumulation_steps", "--eval-accumulation-steps"]
    )
    sharding: list[str] = field(
        default_factory=lambda: [
            "--zero-stage",
            "--zero_stage",
            "--fsdp-sharding-degree",
            "ZERO_STAGE",
        ]
    )


@record(frozen=True)
class CheckpointsSection:
    """[checkpoints]: where a job's checkpoints are, when one is complete, how a rerun resumes."""

    # Where a job's checkpoints are: {workdir} is the job's working directory.
    pattern: str = "{workdir}/checkpoints/step_*"
    marker: str = ""  # a file a checkpoint directory must hold to count as complete
    # How the rerun is told to resume: an environment variable, a flag added to the training
    # command, and/or the template variable of runbook-rendered jobs.
    resume_env: str = "RUNBOOK_RESUME_FROM"
    resume_flag: str = ""
    resume_var: str = "resume_from"
    load_check_max_mib: float = 256.0  # torch.load(weights_only=True) only below this size


# A progress line's step: "step 40", "iter: 300", "Iteration-> 678". "iter:   2,800" is step 2800
# (a thousands separator), never step 2: such a number is left to evidence.progress's plain-loop
# reader, which reads it whole. The one default of [logs] step_pattern and of the phase.
STEP_PATTERN = r"(?i)\b(?:step|iter(?:ation)?|global_step)(?:[\s:=#]|->)+(\d+)(?!,\d{3})"


@record(frozen=True)
class LogsSection:
    """[logs]: where launcher logs are read, and how the failing step is found in them."""

    # Where the log filter runs: "batch_host" (over SSH, on the job's first node: node-local and
    # shared file systems alike) or "local" (this host sees the job's files).
    read_on: str = "batch_host"
    tail_lines: int = 200  # the last lines of each log too (tracebacks' bodies left out): the
    # progress line before the failure (evidence.log_filter.TAIL_LINES says why so many)
    # A training progress line; the number is the step (the last one names the failing step).
    step_pattern: str = STEP_PATTERN


@record(frozen=True)
class HookSection:
    """[hook]: the webhook service: where it listens, how callers prove who they are, its limits."""

    bind: str = "127.0.0.1"  # loopback unless a site decides otherwise
    port: int = 8787
    # A PagerDuty-style signing secret (X-PagerDuty-Signature: v1=hex(HMAC-SHA256(secret, body)))
    # and/or a bearer token. Prefer RUNBOOK_HOOK_SECRET / RUNBOOK_HOOK_TOKEN to a file.
    secret: str = ""
    token: str = ""
    max_body_bytes: int = 2_000_000  # go-pagerduty caps webhook bodies at 2 MB
    workers: int = 4  # incidents handled at once in the background
    # waitress, set on purpose (a reverse proxy in front still does TLS and the slowest clients):
    threads: int = 4  # request threads; they only check, queue and answer, never wait on Slurm
    connection_limit: int = 1000  # open connections held at once (waitress's default: 100)
    channel_timeout_s: int = 30  # an idle connection is closed after this long
    max_header_bytes: int = 65536
    # Answers: 503 + Retry-After when a delivery cannot be queued (state database unavailable, or
    # the queue is full); the workers retry Slurm lookups that fail, backing off up to a cap.
    retry_after_s: int = 30
    queue_max: int = 10000
    retry_max_s: float = 300.0
    health_timeout_s: float = 5.0  # /healthz's Slurm check
    alertmanager_label: str = "slurm_job_id"
    pagerduty_title_pattern: str = r"(?i)\bjob[ _-]?(?:id)?[ :#=]*(\d+)"


@record(frozen=True)
class NotifySection:
    """[notify]: where a finished incident is announced."""

    webhook_url: str = ""  # Slack-compatible: POST {"text": summary}
    mail_to: str = ""  # comma-separated; sent through the local MTA
    mail_from: str = "runbook@localhost"
    sendmail: str = "/usr/sbin/sendmail"
    timeout_s: float = 10.0


@record(frozen=True)
class SweepSection:
    """[sweep]: which failed jobs a sweep looks at."""

    partitions: list[str] = field(default_factory=list)  # empty: every partition
    include_running: bool = True  # running jobs whose logs show an OOM (wedged ranks)
    # node_exporter textfile collector: the sweep's counters and its last success time, written
    # atomically after every sweep. Empty: none.
    metrics_file: str = ""
    # The watch reads each running job's log from where the last sweep stopped; a log that grew
    # by more than this since is read from its last this-many MiB only (and says so).
    watch_max_read_mib: int = 256


@record(frozen=True)
class SiteConfig:
    """One site's settings: every section, and where each value came from."""

    site: SiteSection = field(default_factory=SiteSection)
    slurm: SlurmSection = field(default_factory=SlurmSection)
    identity: IdentitySection = field(default_factory=IdentitySection)
    ssh: SshSection = field(default_factory=SshSection)
    state: StateSection = field(default_factory=StateSection)
    playbooks: PlaybooksSection = field(default_factory=PlaybooksSection)
    policy: PolicySection = field(default_factory=PolicySection)
    probes: ProbesSection = field(default_factory=ProbesSection)
    knobs: KnobsSection = field(default_factory=KnobsSection)
    checkpoints: CheckpointsSection = field(default_factory=CheckpointsSection)
    logs: LogsSection = field(default_factory=LogsSection)
    hook: HookSection = field(default_factory=HookSection)
    notify: NotifySection = field(default_factory=NotifySection)
    sweep: SweepSection = field(default_factory=SweepSection)
    nodes: NodesSection = field(default_factory=NodesSection)
    hang: HangSection = field(default_factory=HangSection)
    ladder: LadderSection = field(default_factory=LadderSection)
    source: str = "built-in defaults"  # where the values came from, for messages
    # "section.key" -> where its value came from ("file PATH", "environment VAR", "command line");
    # keys not listed have their default.
    origins: dict[str, str] = field(default_factory=dict, compare=False)

    def path(self, value: str) -> Path:
        """A path setting with ~ and $VARS expanded."""
        from pathlib import Path  # here, not at the top: see the module docstring

        return Path(os.path.expandvars(os.path.expanduser(value)))


@functools.cache
def _sections() -> dict[str, type]:
    """Section name -> its dataclass (type information of the code, not configuration: cached,
    because resolving annotations costs milliseconds every `runbook` start pays)."""
    hints = typing.get_type_hints(SiteConfig)
    return {
        f.name: hints[f.name]
        for f in dataclasses.fields(SiteConfig)
        if f.name not in ("source", "origins")
    }


@functools.cache
def _hints(section: type) -> dict[str, Any]:
    return typing.get_type_hints(section)


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
        hint="fix the value (`runbook config show` lists every key with its value)",
    )


def _merge(
    cfg: SiteConfig,
    layer: Mapping[str, Mapping[str, Any]],
    origin: str,
    key_origin: Mapping[str, str] | None = None,
) -> SiteConfig:
    """Apply one layer. `key_origin` names a finer origin per "section.key" (the environment
    variable that set it); else every value of the layer is credited to `origin`."""
    sections = _sections()
    changes: dict[str, Any] = {}
    origins = dict(cfg.origins)
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
        hints = _hints(stype)
        unknown = set(values) - set(hints)
        if unknown:
            raise ConfigError(
                f"{origin}: unknown key(s) {_valid(unknown)} in [{sname}]; "
                f"valid keys: {_valid(hints)}",
                hint="remove or rename them (`runbook config init` writes a file documenting every "
                "key)",
            )
        current = getattr(cfg, sname)
        coerced = {k: _coerce(v, hints[k], f"{origin}: [{sname}] {k}") for k, v in values.items()}
        changes[sname] = dataclasses.replace(current, **coerced)
        for k in coerced:
            origins[f"{sname}.{k}"] = (key_origin or {}).get(f"{sname}.{k}", origin)
    return dataclasses.replace(cfg, **changes, origins=origins)


def env_layer(environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """RUNBOOK_SSH_USER=x -> {"ssh": {"user": "x"}}; unknown keys of known sections are errors."""
    sections = _sections()
    layer: dict[str, dict[str, str]] = {}
    for var, value in environ.items():
        if var in _ENV_ALIASES:
            sname, key = _ENV_ALIASES[var]
            layer.setdefault(sname, {}).setdefault(key, value)
            continue
        if not var.startswith(ENV_PREFIX) or var in _ENV_NOT_SETTINGS:
            continue
        rest = var[len(ENV_PREFIX) :].lower()
        found = next((s for s in sections if rest.startswith(s + "_")), None)
        if found is None:
            continue  # RUNBOOK_CLUSTER_* and friends belong to other tools
        sname = found
        key = rest[len(sname) + 1 :]
        valid = _hints(sections[sname])
        if key not in valid:
            raise ConfigError(
                f"environment variable {var}: [{sname}] has no key {key!r}; valid keys: "
                f"{_valid(valid)}",
                hint=f"unset {var} or use one of RUNBOOK_{sname.upper()}_<KEY>",
            )
        layer.setdefault(sname, {})[key] = value
    return layer


def env_origins(environ: Mapping[str, str]) -> dict[str, str]:
    """ "section.key" -> the environment variable that set it, for `config show`."""
    out: dict[str, str] = {}
    for var in environ:
        if var in _ENV_ALIASES:
            sname, key = _ENV_ALIASES[var]
            out.setdefault(f"{sname}.{key}", f"environment {var}")
        elif var.startswith(ENV_PREFIX) and var not in _ENV_NOT_SETTINGS:
            rest = var[len(ENV_PREFIX) :].lower()
            for sname in _sections():
                if rest.startswith(sname + "_"):
                    out[f"{sname}.{rest[len(sname) + 1 :]}"] = f"environment {var}"
    return out


def site_dirs(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where `--site NAME` looks for NAME.toml, in order."""
    from pathlib import Path  # here, not at the top: see the module docstring

    environ = os.environ if environ is None else environ
    dirs = []
    if environ.get("RUNBOOK_SITE_DIR"):
        dirs.append(Path(environ["RUNBOOK_SITE_DIR"]).expanduser())
    xdg = environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    dirs.append(Path(xdg) / "runbook" / "sites")
    dirs.append(Path("/etc/runbook/sites"))
    dirs.append(Path.cwd() / "site_config")
    return list(dict.fromkeys(d.absolute() for d in dirs))


def user_site_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where `runbook config init` writes: the user's own sites folder (no root needed)."""
    from pathlib import Path  # here, not at the top: see the module docstring

    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(xdg) / "runbook" / "sites"


def find_config_file(path: str) -> Path:
    from pathlib import Path  # here, not at the top: see the module docstring

    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(
            f"config file {p} does not exist"
            if not p.exists()
            else f"config file {p} is not a file",
            hint="check the path given to --config (or RUNBOOK_CONFIG); `runbook config init NAME` "
            "writes a starter file",
        )
    return p


def find_site_file(name: str, environ: Mapping[str, str] | None = None) -> Path:
    if name.endswith(".toml") or os.sep in name:
        return find_config_file(name)
    tried = []
    dirs = site_dirs(environ)
    for d in dirs:
        p = d / f"{name}.toml"
        tried.append(str(p))
        if p.is_file():
            return p
    known = sorted({p.stem for d in dirs if d.is_dir() for p in d.glob("*.toml")})
    raise ConfigError(
        f"no site named {name!r}: looked for {', '.join(tried)}",
        hint=f"use one of: {_valid(known) or '(none found)'}; or `runbook config init {name}` to "
        f"write one, or --config FILE to name a file",
    )


def read_site_file(path: Path) -> dict[str, Any]:
    # Imported here: a run without a site file (`runbook diagnose --log`) never pays for it.
    try:  # Python 3.11+
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
        import tomli as tomllib  # type: ignore[no-redef]

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(
            f"cannot read config file {path}: {getattr(e, 'strerror', None) or e}",
            hint="check the path and its permissions",
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"config file {path} is not valid TOML: {e}",
            hint="fix the line named; `runbook config init NAME` writes a valid starter",
        ) from None


def load_site(
    name: str | None = None,
    *,
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> SiteConfig:
    """Build the site configuration: defaults < file < environment < flags.

    `name` is a site name (NAME.toml in the folders of `site_dirs`) or a path to a .toml file;
    `config_file` a path (--config); neither: the built-in defaults. `overrides` holds flag
    values as {"section.key": value}; None values are flags the user did not give.
    """
    environ = os.environ if environ is None else environ
    if name and config_file:
        raise ConfigError(
            f"both --site {name} and --config {config_file} were given",
            hint="give one of them (RUNBOOK_SITE and RUNBOOK_CONFIG count as given)",
        )
    cfg = SiteConfig()
    path = find_config_file(config_file) if config_file else None
    if name:
        path = find_site_file(name, environ)
    if path is not None:
        cfg = _merge(cfg, read_site_file(path), f"file {path}")
        cfg = dataclasses.replace(cfg, source=str(path))
    cfg = _merge(cfg, env_layer(environ), "environment", env_origins(environ))
    flags: dict[str, dict[str, Any]] = {}
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        sname, _, key = dotted.partition(".")
        flags.setdefault(sname, {})[key] = value
    return _merge(cfg, flags, "command line")


def effective_values(cfg: SiteConfig) -> list[tuple[str, Any, str]]:
    """Every setting as ("section.key", value, origin), in declaration order."""
    rows = []
    for sname in _sections():
        section = getattr(cfg, sname)
        for f in dataclasses.fields(section):
            dotted = f"{sname}.{f.name}"
            rows.append((dotted, getattr(section, f.name), cfg.origins.get(dotted, "default")))
    return rows
