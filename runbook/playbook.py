"""The codified runbook (oom.yaml): thresholds and the remediation ladder, as data.

The playbooks ship inside the package (runbook/playbooks/, package data, so a wheel carries
them); a site may point `[playbooks] dir` (or RUNBOOK_PLAYBOOKS) at a folder with its
own oom.yaml. The playbook is loaded once per run and passed down.
"""

from __future__ import annotations

import os
from dataclasses import field

from runbook.datafiles import playbook_dir, read_yaml
from runbook.errors import ConfigError
from runbook.record import record


@record(frozen=True)
class Thresholds:
    """The OOM playbook's classification thresholds (docs/design.md §3)."""

    fragmentation_min_unallocated_ratio: float
    true_oom_min_used_fraction: float
    cuda_context_allowance_mib: float
    co_tenant_min_fraction_of_total: float
    full_card_margin_fraction: float
    fragmentation_min_pool_share: float


@record(frozen=True)
class Rung:
    """One rung of a verdict's ladder as the playbook names it."""

    id: str
    what: str
    human_only: bool = False


@record(frozen=True)
class Preference:
    """What a cause does to its verdict's ladder (the playbook's `causes`): `take` one rung
    alone (a person's rung: stop for a person), `then` what follows it; or `first` rungs tried
    before the ladder, and `pass_over` the ladder's rungs that have a property (their RungDef
    field is true)."""

    take: str | None = None
    then: tuple[str, ...] = ()
    pass_over: str | None = None
    first: tuple[str, ...] = ()


@record(frozen=True)
class Playbook:
    """The OOM runbook as data: thresholds, per verdict its ladder of rungs, and per cause what
    it does to that ladder (a cause not named: the ladder as it is)."""

    path: str
    thresholds: Thresholds
    ladder: dict[str, tuple[Rung, ...]]
    causes: dict[str, Preference]


def _ladder(data, p: str) -> dict[str, tuple[Rung, ...]]:
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


_PROPERTIES = ("shrinks_activations", "drains")  # RungDef fields a cause may pass over by


def _causes(data, p: str) -> dict[str, Preference]:
    from runbook.cause import CAUSES
    from runbook.rungs import REGISTRY

    out = {}
    for name, pref in (data.get("causes") or {}).items():
        if name not in CAUSES:
            raise ConfigError(
                f"playbook {p}: causes.{name} is not a cause runbook names",
                hint=f"use one of {', '.join(CAUSES)}",
            )
        then, first = pref.get("then") or (), pref.get("first") or ()
        out[name] = Preference(
            pref.get("take"),
            tuple([then] if isinstance(then, str) else then),
            pref.get("pass_over"),
            tuple([first] if isinstance(first, str) else first),
        )
        named = (out[name].take, *out[name].then, *out[name].first)
        unknown = [r for r in named if r and r not in REGISTRY]
        if unknown or out[name].pass_over not in (None, *_PROPERTIES):
            raise ConfigError(
                f"playbook {p}: causes.{name} names "
                + (
                    f"rung(s) {', '.join(unknown)} runbook does not know"
                    if unknown
                    else f"pass_over: {out[name].pass_over}, not one of {', '.join(_PROPERTIES)}"
                ),
                hint=f"rungs: {', '.join(sorted(REGISTRY))}",
            )
    return out


def _thresholds(cls_, data, p: str):
    cls = data["classification"]
    want = set(cls_.__dataclass_fields__)
    if set(cls) != want:
        raise ConfigError(
            f"playbook {p}: [classification] must hold exactly {sorted(want)}, found {sorted(cls)}",
            hint="add or remove keys so the section names each threshold once",
        )
    return cls_(**{k: float(v) for k, v in cls.items()})


def _read(site_dir: str, path, name: str):
    p = os.fspath(path) if path else os.path.join(playbook_dir(site_dir), name)
    fix = (
        f"point [playbooks] dir (or RUNBOOK_PLAYBOOKS) at a folder holding {name}, or unset it "
        "to use the playbooks shipped with runbook"
    )
    return p, read_yaml(p, "playbook", fix)


def _malformed(p: str, e: Exception) -> ConfigError:
    return ConfigError(
        f"playbook {p} is malformed: {e}",
        hint=f"compare with the {os.path.basename(p)} shipped with runbook (`runbook --version` says "
        "where), or unset [playbooks] dir",
    )


def load(site_dir: str = "", *, path: str | os.PathLike | None = None) -> Playbook:
    """The OOM playbook: from `path`, else `site_dir`/oom.yaml, else the packaged one."""
    p, data = _read(site_dir, path, "oom.yaml")
    try:
        return Playbook(
            str(p), _thresholds(Thresholds, data, p), _ladder(data, p), _causes(data, p)
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _malformed(p, e) from None


@record(frozen=True)
class HangThresholds:
    """The hung-job playbook's thresholds."""

    straggler_max_share: float


@record(frozen=True)
class HangPlaybook:
    """The hung-job runbook as data: thresholds, ladder and the debug environment."""

    path: str
    thresholds: HangThresholds
    ladder: dict[str, tuple[Rung, ...]]
    debug_env: dict[str, str]
    causes: dict[str, Preference] = field(default_factory=dict)  # the hang runbook has none


def load_hang(site_dir: str = "", *, path: str | os.PathLike | None = None) -> HangPlaybook:
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
