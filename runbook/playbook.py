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


def load(site_dir: str = "", *, path: str | Path | None = None) -> Playbook:
    """The OOM playbook: from `path`, else `site_dir`/oom.yaml, else the packaged one."""
    p = Path(path) if path else playbook_dir(site_dir) / "oom.yaml"
    fix = (
        "point [playbooks] dir (or RUNBOOK_PLAYBOOKS) at a folder holding oom.yaml, or unset it "
        "to use the playbooks shipped with runbook"
    )
    data = read_yaml(p, "playbook", fix)
    try:
        cls = data["classification"]
        want = set(Thresholds.__dataclass_fields__)
        if set(cls) != want:
            raise ConfigError(
                f"playbook {p}: [classification] must hold exactly {sorted(want)}, found "
                f"{sorted(cls)}",
                hint="add or remove keys so the section names each threshold once",
            )
        thresholds = Thresholds(**{k: float(v) for k, v in cls.items()})
        ladder = {
            verdict: tuple(Rung(**rung) for rung in rungs)
            for verdict, rungs in data["ladder"].items()
        }
        from runbook.rungs import REGISTRY

        unknown = sorted({r.id for rungs in ladder.values() for r in rungs} - set(REGISTRY))
        if unknown:
            raise ConfigError(
                f"playbook {p}: rung(s) {', '.join(unknown)} are not rungs runbook knows",
                hint=f"use ids from runbook's rung registry: {', '.join(sorted(REGISTRY))}",
            )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ConfigError(
            f"playbook {p} is malformed: {e}",
            hint="compare with the oom.yaml shipped with runbook (`runbook --version` says "
            "where), or unset [playbooks] dir",
        ) from None
    return Playbook(str(p), thresholds, ladder)
