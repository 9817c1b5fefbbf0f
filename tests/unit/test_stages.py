"""The engine's stages as data in, data out (issue 17): the confirmation policy, the plan, the
conclusion's exit codes; and the structure itself: no stage imports a later one or the CLI."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from runbook.actions.policy import confirm_policy
from runbook.diagnosis import Diagnosis
from runbook.evidence.collect import CheckpointEvidence, LineageEvidence
from runbook.planning.plan import make_plan
from runbook.playbook import load
from runbook.report.model import Incident
from runbook.report.views import conclude
from runbook.site import SiteConfig

RUNBOOK = Path(__file__).resolve().parents[2] / "runbook"
HF = (Path(__file__).resolve().parents[1] / "data" / "sbatch" / "hf_accelerate.sbatch").read_text()

# Stage order (docs/design.md §1, the data flow): a module may import its own stage and earlier ones only.
ORDER = [
    "errors",
    "units",
    "site",
    "jobfiles",
    "rungs",
    "playbook",
    "lineage",
    "transport",
    "slurm",
    "checkpoints",
    "evidence",
    "diagnosis",
    "planning",
    "actions",
    "report",
    "verify",
    "state",
    "notify",
    "intake",
    "trigger",
    "pipeline",
    "sweep",
    "hook",
    "commands",
    "cli",
]
# Wiring and shared infrastructure that several stages use on purpose.
STAGE_OF = {
    "datafiles": "errors",  # where runbook's YAML data lives, read and cached
    "words": "units",  # values as words: every stage that says something may use it
    "evidence.units": "units",
    # The readers of a job's files (its script, a runbook template, the configs and the program
    # it names) and the editing tools the rungs use are the package runbook.jobfiles (its own
    # stage, below the rungs): they know no rung.
    # Who acts for a job's owner: settings in, a decision out (runbook.identity).
    "identity": "site",
    "cause": "rungs",  # the causes' rules: data in, a name out; the playbook names them
    "evidence.framing": "units",  # colour codes and quote markers: text any parser reads
    "state": "errors",
    "report.files": "errors",
    "report.model": "errors",
    "instrument": "errors",
    "engine": "pipeline",
    "hang_diagnosis": "diagnosis",
    "hang": "pipeline",
    "grow": "pipeline",
}


def stage(module: str) -> str:
    rel = module.removeprefix("runbook.")
    for key, s in STAGE_OF.items():
        if rel == key or rel.startswith(key + "."):
            return s
    return rel.split(".")[0]


def _is_module(name: str) -> bool:
    rel = Path(*name.removeprefix("runbook.").split("."))
    return (RUNBOOK / rel).with_suffix(".py").exists() or (RUNBOOK / rel / "__init__.py").exists()


def _has_code(name: str) -> bool:
    """A package whose __init__ holds code (importing it runs that code)."""
    init = RUNBOOK / Path(*name.removeprefix("runbook.").split(".")) / "__init__.py"
    return init.exists() and bool(init.read_text().strip())


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("runbook"):
            subs = {f"{node.module}.{a.name}" for a in node.names}
            modules = {m for m in subs if _is_module(m)}
            # `from runbook.planning import bash` imports the module bash (the package's
            # __init__ is empty); `from runbook.planning.ladder import plan` imports ladder.
            if modules != subs or not _is_module(node.module) or _has_code(node.module):
                out.add(node.module)
            out.update(subs)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("runbook"))
    return out


def test_no_stage_imports_a_later_stage_or_the_cli():
    bad = []
    for path in RUNBOOK.rglob("*.py"):
        mod = "runbook." + ".".join(path.relative_to(RUNBOOK).with_suffix("").parts)
        mod = mod.removesuffix(".__init__")
        me = stage(mod)
        if me not in ORDER or me in ("commands", "cli"):
            continue
        for imp in imports(path):
            them = stage(imp)
            if them in ("commands", "cli") or (
                them in ORDER
                and ORDER.index(them) > ORDER.index(me)
                and them not in ("state", "report")  # the ledger and the folder, below everyone
            ):
                bad.append(f"{mod} imports {imp}")
    assert not bad, bad


def test_pipeline_only_wires():
    assert len((RUNBOOK / "pipeline.py").read_text().splitlines()) <= 300


# -- confirmation policy ------------------------------------------------------------------------
def site(**policy) -> SiteConfig:
    s = SiteConfig()
    return dataclasses.replace(s, policy=dataclasses.replace(s.policy, **policy))


def test_confirm_policy():
    ask = lambda action: True  # noqa: E731
    assert confirm_policy(site(), "true_oom", assume_yes=True) is None
    assert confirm_policy(site(assume_yes=True), "true_oom") is None
    assert confirm_policy(site(), "true_oom", confirm=ask) is ask
    assert confirm_policy(site(unattended_verdicts=["fragmentation"]), "fragmentation") is None
    declined = confirm_policy(site(unattended_verdicts=["fragmentation"]), "true_oom")
    assert declined is not None and declined(object()) is False


# -- the plan -----------------------------------------------------------------------------------
JOB = SimpleNamespace(
    job_id="41",
    work_dir="/scratch/run",
    excluded=["gpu-09"],
    resources={"nodes": "2", "ntasks": "4", "gres": "gpu:2"},
    num_nodes=2,
    num_tasks=4,
)


def test_make_plan_is_complete_from_values():
    ckpt = SimpleNamespace(path="/scratch/run/ckpt/step_200", step=200, reason="newest valid")
    p = make_plan(
        Diagnosis("true_oom"),
        load(),
        SiteConfig(),
        job=JOB,
        script=HF,
        run=LineageEvidence(tried=[("40", "expandable_segments")]),
        checkpoints=CheckpointEvidence(ckpt, []),
        node="gpu-02",
        failed_step=201,
    )
    assert p.rung == "halve_micro_batch" and p.acts
    assert p.checkpoint is ckpt and p.failed_step == 201
    assert "--chdir=/scratch/run" in p.sbatch_args
    assert "--exclude=gpu-09" in p.sbatch_args  # the original's exclusions carry over
    assert any(a.startswith("--nodes=") or a.startswith("-N") for a in p.sbatch_args)


def test_make_plan_for_a_gpu_fault_excludes_and_drains_the_node():
    p = make_plan(
        Diagnosis("gpu_fault"),
        load(),
        SiteConfig(),
        job=JOB,
        script=HF,
        run=LineageEvidence(),
        checkpoints=CheckpointEvidence(),
        node="gpu-02",
        failed_step=None,
    )
    assert p.drain == "gpu-02" and "--exclude=gpu-02,gpu-09" in p.sbatch_args


# -- the conclusion: summary, next steps, exit code (docs/design.md §4.3) --------------------------------
def result(kind, status, argv=("scancel", "41"), value=None):
    return SimpleNamespace(
        kind=kind, status=status, target="41", argv=list(argv), value=value, message=""
    )


@pytest.mark.parametrize(
    "results, needs_human, stopped, code",
    [
        ([result("cancel", "applied")], False, False, 0),
        ([result("cancel", "declined")], False, False, 4),
        ([result("cancel", "failed")], False, False, 1),
        ([], True, False, 4),
        ([], False, True, 1),
    ],
)
def test_exit_codes(results, needs_human, stopped, code):
    inc = Incident(id="i", job_id="41", source="cli", actor="t", site="", dry_run=False)
    if stopped:
        inc.status, inc.stopped_at = "stopped", "logs"
    plan = SimpleNamespace(
        needs_human=needs_human, human_action="decide", why="", rung=None, checkpoint=None
    )
    conclude(inc, JOB, Diagnosis("true_oom"), plan, results, False, [], SiteConfig())
    assert inc.exit_code == code
    assert inc.summary.startswith("true_oom: job 41")
    if code == 4 and results:
        assert any("needs confirmation" in n for n in inc.next_steps)


def test_a_shrink_needs_a_person_unless_the_site_allows_it_unattended():
    import dataclasses

    site = SiteConfig()
    site = dataclasses.replace(
        site, policy=dataclasses.replace(site.policy, unattended_verdicts=["gpu_fault"])
    )
    assert confirm_policy(site, "gpu_fault", rung="drain_and_exclude") is None
    held = confirm_policy(site, "gpu_fault", rung="shrink_world")
    assert held is not None and held(object()) is False
    allowed = dataclasses.replace(
        site, policy=dataclasses.replace(site.policy, unattended_shrink=True)
    )
    assert confirm_policy(allowed, "gpu_fault", rung="shrink_world") is None
    assert confirm_policy(site, "gpu_fault", rung="shrink_world", assume_yes=True) is None
