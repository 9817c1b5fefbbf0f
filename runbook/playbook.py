"""The codified runbook (oom.yaml): thresholds and the remediation ladder, as data.

The playbooks ship inside the package (runbook/playbooks/, read through importlib.resources, so a
wheel carries them); a site may point `[playbooks] dir` (or RUNBOOK_PLAYBOOKS) at a folder with its
own oom.yaml. The playbook is loaded once per run and passed down.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from runbook.errors import ConfigError


@dataclass(frozen=True)
class Thresholds:
    fragmentation_min_unallocated_ratio: float
    true_oom_min_used_fraction: float
    cuda_context_allowance_mib: float
    co_tenant_min_fraction_of_total: float
    full_card_margin_fraction: float
    fragmentation_min_pool_share: float


@dataclass(frozen=True)
class Rung:
    id: str
    what: str
    human_only: bool = False


@dataclass(frozen=True)
class Playbook:
    path: str
    thresholds: Thresholds
    ladder: dict[str, tuple[Rung, ...]]


def packaged_dir() -> Path:
    """The playbooks folder inside the installed package (a real folder for wheels and
    checkouts alike; runbook is never imported from a zip)."""
    return Path(str(resources.files("runbook") / "playbooks"))


def playbook_dir(site_dir: str = "") -> Path:
    """The folder the playbooks are read from: the site's, else the packaged one."""
    return Path(site_dir).expanduser() if site_dir else packaged_dir()


def describe_source(site_dir: str = "") -> str:
    """Where the playbooks come from, in words (for `runbook --version` and reports)."""
    if site_dir:
        return f"{playbook_dir(site_dir)} (site setting [playbooks] dir)"
    return f"{packaged_dir()} (shipped with runbook)"


def read_yaml(path: Path, what: str, fix: str):
    """A YAML data file of runbook's, with errors that name it."""
    import yaml  # loaded only by the verbs that read playbooks

    try:
        # libyaml's loader where PyYAML was built with it: the same safe subset, parsed in C.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} not found", hint=fix) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {what} {path}: {e}", hint=fix) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{what} {path} is not valid YAML: {e}", hint=fix) from None


def _ladder(data, p: Path) -> dict[str, tuple[Rung, ...]]:
    ladder = {
        verdict: tuple(Rung(**rung) for rung in rungs) for verdict, rungs in data["ladder"].items()
    }
    from runbook.rungs import REGISTRY

    unknown = sorted({r.id for rungs in ladder.values() for r in rungs} - set(REGISTRY))
    if unknown:
        raise ConfigError(
            f"playbook {p}: rung(s) {', '.join(unknown)} are not rungs runbook knows",
            hint=f"use ids from runbook's rung registry: {', '.join(sorted(REGISTRY))}",
        )
    return ladder


def _thresholds(cls_, data, p: Path):
    cls = data["classification"]
    want = set(cls_.__dataclass_fields__)
    if set(cls) != want:
        raise ConfigError(
            f"playbook {p}: [classification] must hold exactly {sorted(want)}, found {sorted(cls)}",
            hint="add or remove keys so the section names each threshold once",
        )
    return cls_(**{k: float(v) for k, v in cls.items()})


def _read(site_dir: str, path, name: str):
    p = Path(path) if path else playbook_dir(site_dir) / name
    fix = (
        f"point [playbooks] dir (or RUNBOOK_PLAYBOOKS) at a folder holding {name}, or unset it "
        "to use the playbooks shipped with runbook"
    )
    return p, read_yaml(p, "playbook", fix)


def _malformed(p: Path, e: Exception) -> ConfigError:
    return ConfigError(
        f"playbook {p} is malformed: {e}",
        hint=f"compare with the {p.name} shipped with runbook (`runbook --version` says "
        "where), or unset [playbooks] dir",
    )


def load(site_dir: str = "", *, path: str | Path | None = None) -> Playbook:
    """The OOM playbook: from `path`, else `site_dir`/oom.yaml, else the packaged one."""
    p, data = _read(site_dir, path, "oom.yaml")
    try:
        return Playbook(str(p), _thresholds(Thresholds, data, p), _ladder(data, p))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _malformed(p, e) from None


@dataclass(frozen=True)
class HangThresholds:
    straggler_max_share: float


@dataclass(frozen=True)
class HangPlaybook:
    path: str
    thresholds: HangThresholds
    ladder: dict[str, tuple[Rung, ...]]
    debug_env: dict[str, str]


def load_hang(site_dir: str = "", *, path: str | Path | None = None) -> HangPlaybook:
    """The hung-job playbook: `site_dir`/hang.yaml, else the packaged one."""
    p, data = _read(site_dir, path, "hang.yaml")
    try:
        env = {str(k): str(v) for k, v in (data.get("debug_env") or {}).items()}
        bad = [k for k in env if not k.replace("_", "").isalnum() or k[0].isdigit()]
        if bad:
            raise ValueError(f"debug_env names that are not variable names: {bad}")
        return HangPlaybook(str(p), _thresholds(HangThresholds, data, p), _ladder(data, p), env)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _malformed(p, e) from None
