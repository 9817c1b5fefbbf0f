"""Job shapes people submit, end to end on the test cluster, each outcome checked in Slurm
itself: a heterogeneous job (a trainer component with GPUs beside an evaluation server without)
and a chain (an evaluation job that waits on the training job with --dependency)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from runbook.jobfiles.templates import render
from tests.integration.slurm_helpers import sh, wait_until
from tests.integration.test_oom_scenarios import TEMPLATE, act, log_of, runbook

pytestmark = pytest.mark.integration


def _plain(s, path: Path, *between: str) -> Path:
    """The example job rendered as a plain script a person writes, on gpu-01 and gpu-02, with
    `between` (more #SBATCH lines, or the body's first commands) after its #SBATCH lines."""
    lines = render(str(TEMPLATE), s.vars).splitlines()
    heads = [ln for ln in lines if ln.startswith("#SBATCH")]
    body = [ln for ln in lines if not ln.startswith(("#!", "#SBATCH", "# runbook:"))]
    path.write_text(
        "\n".join(["#!/bin/bash", *heads, "#SBATCH --nodelist=gpu-[01-02]", *between, *body]) + "\n"
    )
    return path


def _components(job: str) -> dict[int, str]:
    """`scontrol show job` of a heterogeneous job, one record per component, by offset."""
    out = sh("scontrol", "show", "job", job)
    recs = [r for r in re.split(r"\n\s*\n", out) if "JobId=" in r]
    return {int(re.search(r"HetJobOffset=(\d+)", r).group(1)): r for r in recs}


def _wait_oom(s, job: str) -> None:
    wait_until(lambda: "Tried to allocate" in log_of(s.workdir, job), 120, f"the OOM in {job}")


def _ended(job: str) -> list[str]:
    """Every component's state in accounting, once none is pending or running."""

    def states():
        out = sh("sacct", "-n", "-X", "-P", "-j", job, "-o", "State", check=False).split()
        return out if out and not any(x in ("PENDING", "RUNNING") for x in out) else None

    return wait_until(states, 180, f"job {job} to end")


def test_a_heterogeneous_job_is_resubmitted_component_by_component(scenario, tmp_path):
    """`#SBATCH hetjob`: component 0 trains on 2 nodes x 2 ranks with 2 GPUs each and 400M, an
    evaluation server (component 1) has 1 task, 1 CPU, 300M and no GPU. The rerun's components
    each get their own resources, as Slurm records them (not component 0's applied to both),
    the report names the failing component, and the rerun passes."""
    s = scenario("hetjob", frag_mib_per_step=6000, long_step=1)
    script = _plain(
        s,
        tmp_path / "het.sbatch",
        "#SBATCH hetjob",
        "#SBATCH --ntasks=1 --cpus-per-task=1 --mem=300M --nodelist=gpu-03",
    )
    job = sh("sbatch", "--parsable", str(script)).strip()
    _wait_oom(s, job)
    out = act(job)
    assert out["verdict"] == "fragmentation" and out["new_job_id"], out
    new = out["new_job_id"]
    comps = _components(new)
    assert sorted(comps) == [0, 1], comps
    for want in ("NumNodes=2", "NumTasks=4", "gres/gpu=4", "MinMemoryNode=400M"):
        assert want in comps[0], (want, comps[0])
    for want in ("NumTasks=1", "CPUs/Task=1", "MinMemoryNode=300M"):
        assert want in comps[1], (want, comps[1])
    assert "gres/gpu" not in comps[1], comps[1]
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    rb = report["plan"]["readback"]
    assert rb["mismatches"] == [] and [c["offset"] for c in rb["components"]] == [0, 1], rb
    assert "the failure is in component 0 (gpu-[01-02])" in report["plan"]["why"]
    md = (Path(out["folder"]) / "report.md").read_text()
    assert "component 1: original 1 node, 1 task" in md, md
    assert _ended(new) == ["COMPLETED", "COMPLETED"], log_of(s.workdir, new)[-3000:]


def test_a_chain_follows_the_rerun_and_an_afterany_dependant_waits_for_it(scenario):
    """`sbatch --dependency=afterok:A eval.sbatch` and `--dependency=afterany:A cleanup.sbatch`,
    A wedged on an OOM: runbook holds the afterany job before cancelling A (else it would start
    at once), points both at the rerun A' (types kept, read back from slurmctld), releases the
    one it held, and names both in the report; neither starts before A' ends."""
    s = scenario("chain", frag_mib_per_step=6000, long_step=1)
    job = s.submit()
    marker = s.workdir / "dependants.log"
    waits = {}
    for kind in ("afterok", "afterany"):
        waits[kind] = sh(
            "sbatch",
            "--parsable",
            f"--dependency={kind}:{job}",
            f"--chdir={s.workdir}",
            "--mem=50M",
            f"--wrap=echo {kind} $(date +%s.%N) >> {marker}",
        ).strip()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    new = out["new_job_id"]
    assert out["verdict"] == "fragmentation" and new, out
    for kind, d in waits.items():
        shown = sh("scontrol", "show", "job", d)
        assert f"Dependency={kind}:{new}" in shown, shown
        assert "JobState=PENDING" in shown and "JobHeld" not in shown, shown
    assert not marker.exists(), marker.read_text()  # nothing ran on the cancel
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    rows = {r["job"]: r for r in report["evidence"]["dependants"]}
    assert rows[waits["afterok"]]["now"] == f"afterok:{new}", rows
    assert rows[waits["afterany"]]["now"] == f"afterany:{new}", rows
    kinds = [a["kind"] for a in report["actions"]]
    assert kinds.index("hold") < kinds.index("cancel") < kinds.index("submit"), kinds
    assert out["exit_code"] == 0, out
    s.wait_done(new)
    ran = wait_until(lambda: marker.exists() and len(marker.read_text().split("\n")) > 2, 120)
    assert ran
    new_end = sh("sacct", "-n", "-X", "-P", "-j", new, "-o", "End").strip()
    assert new_end, new_end


def test_the_job_s_own_arguments_come_back_on_the_rerun(scenario, tmp_path):
    """`sbatch job.sh small 7b`: the script reads $1 and $2 (a plain script, as people write one
    that takes a model size). The rerun is given the same arguments after its script, as
    accounting's SubmitLine of the new job shows and its log prints. (Slurm records the line
    space-joined, so an argument holding a space would come back as two: the plan says so.)"""
    s = scenario("args", frag_mib_per_step=6000, long_step=1)
    script = _plain(s, tmp_path / "job.sh", 'echo "job arguments: [$1] [$2] ($#)"')
    job = sh("sbatch", "--parsable", str(script), "small", "7b").strip()
    _wait_oom(s, job)
    assert "job arguments: [small] [7b] (2)" in log_of(s.workdir, job)
    out = act(job)
    new = out["new_job_id"]
    assert out["verdict"] == "fragmentation" and new, out
    line = wait_until(
        lambda: sh("sacct", "-n", "-X", "-P", "-j", new, "-o", "SubmitLine").strip(),
        60,
        f"job {new}'s SubmitLine in accounting",
    )
    assert line.endswith(".sbatch small 7b"), line
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert any("Slurm keeps no quoting" in n for n in report["plan"]["env_notes"])
    s.wait_done(new)
    assert "job arguments: [small] [7b] (2)" in log_of(s.workdir, new)


def _without_batch_flags(s, path: Path, *between: str) -> Path:
    """The example job as a person writes it, its micro-batch and accumulation left to the
    program's argparse defaults (examples/train_oom/train.py: --micro-batch-size 8,
    --grad-accum 1)."""
    _plain(s, path, *between)
    text = path.read_text()
    flags = f" --micro-batch-size {s.vars['micro_batch']} --grad-accum {s.vars['grad_accum']}"
    assert flags in text
    path.write_text(text.replace(flags, ""))
    return path


def test_a_batch_that_is_only_the_program_s_default_gets_the_flag_at_half(scenario, tmp_path):
    """`srun python3 train.py ...` with no batch flag: the micro-batch is train.py's argparse
    default (8, accumulation 1). runbook reads the default from the program, adds
    `--micro-batch-size 4 --grad-accum 2` after the entry file, and the rerun runs at that batch
    (its own log says so) to the end."""
    s = scenario("defaults", long_factor=2.5)  # micro-batch 8 OOMs, 4 fits
    script = _without_batch_flags(s, tmp_path / "train.sbatch")
    job = sh("sbatch", "--parsable", str(script)).strip()
    _wait_oom(s, job)
    assert "micro-batch 8 x grad-accum 1" in log_of(s.workdir, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    plan = report["plan"]
    assert plan["rung"] == "halve_micro_batch", plan
    changes = " ".join(plan["changes"])
    assert "--micro-batch-size added: the default, train.py:" in changes, changes
    rerun = (Path(out["folder"]) / "job.halve_micro_batch.sbatch").read_text()
    assert "train.py --micro-batch-size 4 --grad-accum 2 --steps" in rerun, rerun
    assert _ended(out["new_job_id"]) == ["COMPLETED"]
    log = log_of(s.workdir, out["new_job_id"])
    assert "micro-batch 4 x grad-accum 2" in log and "training finished at step" in log


def test_a_recipe_chosen_by_the_job_s_arguments_is_patched_in_its_copy(scenario, tmp_path):
    """`sbatch launch.sbatch small full`: the script builds its recipe's path from $1 and $2
    (alignment-handbook's launch.slurm). runbook reads the arguments from accounting's
    SubmitLine, patches a copy of recipes/small/config_full.yaml, points the script's
    assignment at the copy, reruns with the same arguments, and the rerun trains at the new
    batch; the user's recipe is untouched."""
    s = scenario("args-recipe", long_factor=2.5)
    recipe = s.workdir / "recipes" / "small" / "config_full.yaml"
    recipe.parent.mkdir(parents=True)
    original = "per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\n"
    recipe.write_text(original)
    for d in (recipe.parent, recipe.parent.parent):
        d.chmod(0o755)
    script = _without_batch_flags(
        s,
        tmp_path / "launch.sbatch",
        "SIZE=$1",
        "VARIANT=$2",
        "RECIPE=recipes/$SIZE/config_$VARIANT.yaml",
    )
    text = script.read_text().replace(" --steps ", " --config $RECIPE --steps ", 1)
    script.write_text(text)
    job = sh("sbatch", "--parsable", str(script), "small", "full").strip()
    _wait_oom(s, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    folder = Path(out["folder"])
    copy = folder / "config_full.runbook-halve_micro_batch.yaml"
    assert copy.read_text() == "per_device_train_batch_size: 4\ngradient_accumulation_steps: 4\n"
    assert recipe.read_text() == original
    rerun = (folder / "job.halve_micro_batch.sbatch").read_text()
    assert f"RECIPE={copy}" in rerun, rerun
    new = out["new_job_id"]
    assert _ended(new) == ["COMPLETED"]
    # slurmdbd can record a short job's end before its start record, which carries the line.
    line = wait_until(
        lambda: sh("sacct", "-n", "-X", "-P", "-j", new, "-o", "SubmitLine").strip(),
        60,
        f"accounting to hold job {new}'s submit line",
    )
    assert line.endswith(" small full"), line  # the same arguments: the same recipe's copy
    assert "micro-batch 4 x grad-accum 4" in log_of(s.workdir, new)


def test_a_recipe_named_by_the_job_s_environment_is_read_from_accounting(scenario, tmp_path):
    """`CONFIG_FILE=recipes/sft.yaml sbatch train.sbatch`: the script says only `--config
    $CONFIG_FILE`. runbook reads the value from the environment accounting recorded for the job
    (AccountingStoreFlags=job_env), patches a copy of the recipe, and sets CONFIG_FILE to the
    copy below the rerun's #SBATCH lines, saying what the environment had; the rerun, given the
    job's environment, trains at the new batch; the recipe is untouched."""
    import os
    import subprocess

    s = scenario("env-recipe", long_factor=2.5)
    recipe = s.workdir / "recipes" / "sft.yaml"
    recipe.parent.mkdir(parents=True)
    original = "per_device_train_batch_size: 8\ngradient_accumulation_steps: 2\n"
    recipe.write_text(original)
    recipe.parent.chmod(0o755)
    script = _without_batch_flags(s, tmp_path / "train.sbatch")
    text = script.read_text().replace(" --steps ", " --config $CONFIG_FILE --steps ", 1)
    script.write_text(text)
    env = {**os.environ, "CONFIG_FILE": "recipes/sft.yaml"}
    r = subprocess.run(["sbatch", "--parsable", f"--chdir={s.workdir}", str(script)], env=env,
                       capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    job = r.stdout.strip().split(";")[0]
    _wait_oom(s, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    folder = Path(out["folder"])
    copy = folder / "sft.runbook-halve_micro_batch.yaml"
    assert copy.read_text() == "per_device_train_batch_size: 4\ngradient_accumulation_steps: 4\n"
    assert recipe.read_text() == original
    rerun = (folder / "job.halve_micro_batch.sbatch").read_text()
    said = f"CONFIG_FILE={copy}  # runbook: the job's environment had CONFIG_FILE=recipes/sft.yaml"
    assert said in rerun, rerun
    assert rerun.index(said) > rerun.rindex("#SBATCH"), rerun  # sbatch still reads the header
    assert _ended(out["new_job_id"]) == ["COMPLETED"]
    assert "micro-batch 4 x grad-accum 4" in log_of(s.workdir, out["new_job_id"])


# A program that configures itself as nanoGPT does (a test program of runbook's): its globals,
# then a config file given as a bare argument and `--key=value` words (configurator.py, which it
# exec()s); it hands the example its batch under the example's own flags.
NANO_PROGRAM = '''"""Training configured by exec() (a test program of runbook's)."""
import runpy
import sys

batch_size = 8  # micro-batch size per GPU
gradient_accumulation_steps = 1
exec(open("configurator.py").read())  # overrides from a config file or --key=value

if __name__ == "__main__":
    flags = ["--micro-batch-size", str(batch_size), "--grad-accum", str(gradient_accumulation_steps)]
    sys.argv = [EXAMPLE, *flags, *REST]
    runpy.run_path(EXAMPLE, run_name="__main__")
'''

CONFIGURATOR = '''"""Command-line overrides of the program's globals (nanoGPT's shape, written for runbook's tests)."""
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        exec(open(arg).read())  # a config file
    else:
        key, val = arg[2:].split("=", 1)
        assert key in globals(), f"unknown config key {key}"
        globals()[key] = literal_eval(val)
'''


def test_a_program_that_configures_itself_gets_its_overrides_in_an_incident(scenario, tmp_path):
    """`srun python3 train_nano.py config/small.py`: the micro-batch is a global the program's
    comment calls the micro-batch, set by the config file it exec()s (8, accumulation 1).
    `runbook oom` appends `--batch_size=4 --gradient_accumulation_steps=2` after the config
    (the last word wins), and the rerun trains at that batch to the end."""
    import shlex

    s = scenario("nano", long_factor=2.5)  # micro-batch 8 OOMs, 4 fits
    script = _without_batch_flags(s, tmp_path / "train.sbatch")
    text = script.read_text()
    program = s.vars["program"]
    line = next(ln for ln in text.splitlines() if f" {program} " in ln)
    head, rest = line.split(f" {program} ", 1)
    body = NANO_PROGRAM.replace("EXAMPLE", repr(program)).replace("REST", repr(shlex.split(rest)))
    (s.workdir / "train_nano.py").write_text(body)
    (s.workdir / "configurator.py").write_text(CONFIGURATOR)
    (s.workdir / "config").mkdir()
    (s.workdir / "config" / "small.py").write_text(
        "batch_size = 8\ngradient_accumulation_steps = 1\n"
    )
    for f in ("train_nano.py", "configurator.py", "config", "config/small.py"):
        (s.workdir / f).chmod(0o755 if (s.workdir / f).is_dir() else 0o644)
    script.write_text(text.replace(line, f"{head} train_nano.py config/small.py"))
    job = sh("sbatch", "--parsable", f"--chdir={s.workdir}", str(script)).strip()
    _wait_oom(s, job)
    assert "micro-batch 8 x grad-accum 1" in log_of(s.workdir, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    rerun = (Path(out["folder"]) / "job.halve_micro_batch.sbatch").read_text()
    assert "train_nano.py config/small.py --batch_size=4 --gradient_accumulation_steps=2" in rerun
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    checks = " ".join(report["plan"]["checks"])
    assert "batch_size is the micro-batch: train_nano.py says" in checks, checks
    assert _ended(out["new_job_id"]) == ["COMPLETED"]
    log = log_of(s.workdir, out["new_job_id"])
    assert "micro-batch 4 x grad-accum 2" in log and "training finished at step" in log


def _module_job(s, path: Path, program: str, body: str) -> Path:
    """The example job, its batch left to the program, run as `python3 -m pkg.<program>` (the
    module written into the job's folder as `body`, with the example's own train.py behind it)."""
    pkg = s.workdir / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / f"{program}.py").write_text(body.replace("EXAMPLE", repr(s.vars["program"])))
    for p in (pkg, *pkg.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    script = _without_batch_flags(s, path, f"export PYTHONPATH={s.workdir}")
    text = script.read_text().replace(f" {s.vars['program']} ", f" -m pkg.{program} ", 1)
    script.write_text(text)
    return script


# A program whose batch is only its arguments dataclass's default, parsed field by field (issue
# 54's done-when); it hands the example its batch under the example's own flags.
DATACLASS_PROGRAM = '''"""Training with its batch in a dataclass (a test program of runbook's)."""
import argparse
import runpy
import sys
from dataclasses import dataclass, fields


@dataclass
class BatchArgs:
    micro_batch_size: int = 8
    grad_accum: int = 1


parser = argparse.ArgumentParser()
for f in fields(BatchArgs):
    parser.add_argument(f"--{f.name}", type=int, default=f.default)

if __name__ == "__main__":
    args, rest = parser.parse_known_args()
    batch = ["--micro-batch-size", str(args.micro_batch_size), "--grad-accum", str(args.grad_accum)]
    sys.argv = [EXAMPLE, *batch, *rest]
    runpy.run_path(EXAMPLE, run_name="__main__")
'''


def test_a_module_run_with_dash_m_whose_batch_is_its_dataclass_default_gets_the_flag(
    scenario, tmp_path
):
    """`srun python3 -m pkg.train ...`: pkg/train.py of the job's folder is the program; its
    parser adds one option per field of BatchArgs (micro_batch_size 8, grad_accum 1). runbook
    adds `--micro_batch_size 4 --grad_accum 2` after the module, and the rerun trains at that
    batch, its own log says, to the end."""
    s = scenario("dash-m", long_factor=2.5)  # micro-batch 8 OOMs, 4 fits
    script = _module_job(s, tmp_path / "train.sbatch", "train", DATACLASS_PROGRAM)
    job = sh("sbatch", "--parsable", str(script)).strip()
    _wait_oom(s, job)
    assert "micro-batch 8 x grad-accum 1" in log_of(s.workdir, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    changes = " ".join(
        json.loads((Path(out["folder"]) / "report.json").read_text())["plan"]["changes"]
    )
    assert "--micro_batch_size added: the default" in changes, changes
    rerun = (Path(out["folder"]) / "job.halve_micro_batch.sbatch").read_text()
    assert "-m pkg.train --micro_batch_size 4 --grad_accum 2 --steps" in rerun, rerun
    assert _ended(out["new_job_id"]) == ["COMPLETED"]
    log = log_of(s.workdir, out["new_job_id"])
    assert "micro-batch 4 x grad-accum 2" in log and "training finished at step" in log


# A program whose static reading is wrong: the parser it runs declares the batch flags only for
# a version it is not (a condition no reading of the source evaluates), so the plan believes
# them (issue 54's done-when for verify: the rerun dies at start).
STRICT_PROGRAM = '''"""Training behind a versioned parser (a test program of runbook's)."""
import argparse
import runpy
import sys

VERSION = int("1")


def make_parser(version):
    p = argparse.ArgumentParser()
    for name in OPTIONS:
        p.add_argument(name)
    if version >= 2:  # the batch options came with version 2
        p.add_argument("--micro-batch-size", type=int, default=8)
        p.add_argument("--grad-accum", type=int, default=1)
    return p


if __name__ == "__main__":
    make_parser(VERSION).parse_args()  # exits 2 on an option it does not take
    sys.argv = [EXAMPLE, *sys.argv[1:]]
    runpy.run_path(EXAMPLE, run_name="__main__")
'''


def test_a_rerun_whose_program_rejects_the_added_flag_is_caught_by_verify(scenario, tmp_path):
    """The plan believed a flag the running parser does not take: the rerun dies before its
    first step with argparse's 'unrecognized arguments'. `runbook verify` names the change that
    caused it and asks a person (exit 4, state refused); no second rerun is made."""
    s = scenario("strict", long_factor=2.5)
    example = Path(s.vars["program"]).read_text()
    taken = re.findall(r'ap\.add_argument\("(--[\w-]+)"', example)
    options = [o for o in taken if o not in ("--micro-batch-size", "--grad-accum")]
    body = STRICT_PROGRAM.replace("OPTIONS", repr(options))
    script = _module_job(s, tmp_path / "train.sbatch", "strict", body)
    job = sh("sbatch", "--parsable", str(script)).strip()
    _wait_oom(s, job)
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    new = out["new_job_id"]
    assert _ended(new) == ["FAILED"]
    assert "unrecognized arguments: --micro-batch-size 4 --grad-accum 2" in log_of(s.workdir, new)
    code, v = runbook("verify", "--incident", out["incident"], "--json")
    assert code == 4 and v["state"] == "refused", v
    said = json.dumps(v)
    assert "--micro-batch-size" in said, said
    code, again = runbook("verify", "--incident", out["incident"], "--json")
    assert code == 4 and again["state"] == "refused"
    since = sh("sacct", "-n", "-X", "-P", "-S", "now-1hour", "-o", "JobID").split()
    later = [j for j in since if j.isdigit() and int(j) > int(new)]
    assert not later, later  # no third job: nobody resubmitted the refused change
