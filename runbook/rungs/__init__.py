"""The rungs: one module per fix, like a launcher recognizer or a pyinfra operation.

A module here holds `RUNG`, a `RungDef`:
- what it is: its id (the module's name), its kind (how it changes the job), the exact change in
  words (for `runbook diagnose`'s next step and the report), and what else follows from it (the
  allocator setting it adds, the template variables and sbatch options it changes, whether it
  shrinks activations, drains a node, asks for a site's permission);
- when it applies, before any file is read: `applies`, a pure function of the situation
  (`Situation`) returning the reason it does not, or None;
- what it changes, in each place a job keeps its knobs: `script` (a plain job script: its flags,
  shell variables, `#SBATCH` lines and the configs it writes), `template` (a runbook template's
  variables) and `configs` (config files the script names, changed in copies). Each returns the
  edits, or raises errors.RungNotApplicable with the reason.

The ladder (verdict -> rungs in order) and each cause's preference are data in the playbook
(playbooks/oom.yaml); planning.ladder walks them. The read-back checks every edit gets (the
global batch re-read, `bash -n`) run in one place for every rung: planning.sbatch_patch.patch.
The readers of the job's files (jobfiles.bash, jobfiles.templates, jobfiles.configs) know no rung.

Adding a rung is one module here, its tests, and its place in the playbook; nothing else is
edited. Loading the registry imports no template engine (`runbook diagnose` loads it).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from runbook.record import record

ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")  # 2.9 ignores the new name for CUDA
EXPANDABLE = "expandable_segments:True"

# Kinds: how the rung changes the job.
SCRIPT = "script"  # a knob in the job script (or its template variables, or its configs)
ALLOCATOR = "allocator"  # an allocator setting, under both variable names
NODE = "node"  # the job resubmitted as it is, without the node (drained or not)
HUMAN = "human"  # stops for a person
CONTINUE = "continue"  # continues with another verdict's ladder
SHRINK = "shrink"  # the job on fewer nodes without the failing one, the global batch kept
GROW = "grow"  # a shrunk job back on its lineage's original node count, the global batch kept
RESIZE = (SHRINK, GROW)  # the rungs that change the node count (accumulation follows)
EDITS = (SCRIPT, ALLOCATOR, SHRINK)  # the kinds `runbook plan` shows a job's edit for


@record
class Situation:
    """What a rung's `applies` may read: the job script, the failure's fit
    (planning.fit.Fit), one host allocation the job was refused (MiB)."""

    script: str = ""
    fit: Any = None
    host_request_mib: float | None = None


@record
class Ask:
    """What a rung's edit is asked for: the site's knob names, the world before and after (a
    resize), the failure's fit, the options the job's program takes (jobfiles.program)."""

    knobs: Any
    world: tuple[int, int] | None = None
    fit: Any = None
    program: Any = None


@record(frozen=True)
class RungDef:
    """What a rung changes, where (script, allocator, node, ...) and in exact words."""

    id: str
    kind: str
    setting: str  # the exact change, in words a person can apply by hand
    allocator: str | None = None
    template_vars: tuple[str, ...] = ()
    shrinks_activations: bool = False
    fitted: bool = False  # sets the micro-batch a fit solves (planning.fit): the prevention's rung
    drains: bool = False
    continues_with: str | None = None  # CONTINUE: the verdict whose ladder follows
    debug_env: bool = False  # the rerun gets the playbook's debug_env (the hang runbook)
    needs_node: bool = True  # NODE: excludes the failing node, so it must be known
    sbatch_options: frozenset[str] = frozenset()  # recorded resources it changes on purpose
    policy: str | None = None  # the [policy] switch that lets it act unattended
    policy_alone: bool = False  # that switch alone does (its verdict is not an OOM's)
    # A rung a cause takes alone (the playbook's `causes`): why it is taken, what a person reads
    # when the lineage took it and it ran out the same way again, what a person does where it
    # cannot apply, and why the ladder's rungs would not help instead ({reason}: the rung's own).
    taken_because: str = ""
    tried_again: str = ""
    by_hand: str = ""
    refused_because: str = "{reason}"
    applies: Callable[[Situation], str | None] | None = None
    again: Callable[[Situation], bool] | None = None  # may be taken again (a new measurement)
    script: Callable[..., tuple[str, list[str], list[str]]] | None = None
    template: Callable[..., None] | None = None
    configs: Callable[..., Any] | None = None
    # The edit where the knob is only the job's program's default (jobfiles.program): the
    # program's own flag added to its command line.
    program: Callable[..., tuple[str, list[str], list[str]]] | None = None


def get(rung_id: str) -> RungDef | None:
    return REGISTRY.get(rung_id)


def of_kind(kind: str) -> list[RungDef]:
    return [r for r in REGISTRY.values() if r.kind == kind]


def resizes_world(rung_id: str | None) -> bool:
    """Whether a rung changes the job's node count (the patcher scales accumulation and the
    launcher's counts, the resubmission gives --nodes and --ntasks, the read-back expects them)."""
    r = REGISTRY.get(rung_id or "")
    return r is not None and r.kind in RESIZE


def allocator_setting(rung_id: str | None) -> str | None:
    """The allocator setting a rung adds (None for every other rung)."""
    r = REGISTRY.get(rung_id or "")
    return r.allocator if r else None


def changes_micro_batch(rung_id: str | None) -> bool:
    r = REGISTRY.get(rung_id or "")
    return r is not None and "micro_batch" in r.template_vars


def in_words(value: str) -> str:
    """An allocator setting as the job's environment takes it, under both variable names."""
    return " and ".join(f"{n}={value}" for n in ALLOC_VARS) + " in the job's environment"


def _load() -> dict[str, RungDef]:
    """Every module of this folder that defines RUNG, by its id (which is the module's name)."""
    here = os.path.dirname(__file__)
    out = {}
    for name in sorted(os.listdir(here)):
        stem, ext = os.path.splitext(name)
        if ext != ".py" or stem.startswith("_"):
            continue
        rung = getattr(importlib.import_module(f"{__name__}.{stem}"), "RUNG", None)
        if rung is not None:
            if rung.id != stem:
                raise RuntimeError(f"runbook/rungs/{name} defines rung {rung.id!r}, not {stem!r}")
            out[rung.id] = rung
    return out


# Last: the modules import this package's names above.
REGISTRY: dict[str, RungDef] = _load()
