"""The codified runbook (playbooks/oom.yaml): thresholds and the remediation ladder, as data."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from runbook.errors import ConfigError


@dataclass(frozen=True)
class Thresholds:
    fragmentation_min_unallocated_ratio: float
    true_oom_min_used_fraction: float
    cuda_context_allowance_mib: float
    co_tenant_min_fraction_of_total: float


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


def playbook_dir() -> Path:
    if os.environ.get("RUNBOOK_PLAYBOOKS"):
        return Path(os.environ["RUNBOOK_PLAYBOOKS"])
    return Path(__file__).resolve().parent.parent / "playbooks"


def load(path: str | Path | None = None) -> Playbook:
    p = Path(path) if path else playbook_dir() / "oom.yaml"
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"playbook {p} not found",
            hint="run from a checkout (pip install -e .) or set RUNBOOK_PLAYBOOKS to the folder "
            "holding oom.yaml",
        ) from None
    except yaml.YAMLError as e:
        raise ConfigError(
            f"playbook {p} is not valid YAML: {e}",
            hint="compare with the shipped playbooks/oom.yaml, or unset RUNBOOK_PLAYBOOKS",
        ) from None
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
    except (KeyError, TypeError, ValueError) as e:
        raise ConfigError(
            f"playbook {p} is malformed: {e}",
            hint="compare with the shipped playbooks/oom.yaml, or unset RUNBOOK_PLAYBOOKS",
        ) from None
    return Playbook(str(p), thresholds, ladder)
