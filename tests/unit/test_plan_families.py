"""Issue 44: the knob where the job keeps it, on fixtures written in the shapes of real training
repositories (tests/data/plan_families/SOURCES.md): a recipe chosen by the job's own arguments,
the program's defaults (argparse, Hugging Face TrainingArguments, a fire-driven dataclass), a
command-line override over a TOML config, a script the job sources, micro-batch 1's next rung,
and the families that must be refused."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from runbook.jobfiles.configs import config_tokens
from runbook.jobfiles.program import option_defaults, program_options
from runbook.jobfiles.script_args import bind
from runbook.planning.offline import plan_script
from runbook.site import SiteConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "plan_families"
KNOBS = SiteConfig().knobs
EXPECT = json.loads((DATA / "expect.json").read_text())


def _plan(case: str, args=None, rung: str | None = None) -> dict:
    want = EXPECT[case]
    d = DATA / case
    text = (d / want["script"]).read_text()
    return plan_script(text, want["script"], d, KNOBS, only=rung, args=args)


def _edited(diff: str) -> list[str]:
    return [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]


@pytest.mark.parametrize("case", sorted(c for c in EXPECT if not c.startswith("_")))
def test_each_family_is_patched_where_it_keeps_its_knob_or_refused(case):
    want = EXPECT[case]
    doc = _plan(case, want.get("args"))
    by_id = {r["id"]: r for r in doc["rungs"]}
    if "first_refused" in want:
        assert want["first_refused"] in by_id["halve_micro_batch"]["reason"]
    r = by_id[want.get("rung", "halve_micro_batch")]
    if "refused" in want:
        assert not r["applicable"] and want["refused"] in r["reason"], r
        return
    assert r["applicable"], r
    if "values_after" in want:
        assert r["values_after"] == want["values_after"], r
    script_change, *copies = r["changes"]
    if "adds" in want:
        assert any(want["adds"] in ln for ln in _edited(script_change["diff"])), script_change
    if "copy" in want:
        assert [c["new_file"] for c in copies] == [want["copy"]]
        assert want["copy"] in script_change["diff"]
    # Nothing is edited but the knobs: at most two lines of the script, two of each copy.
    for change in r["changes"]:
        assert len(_edited(change["diff"])) <= 2, change["diff"]


def test_the_recipe_is_not_read_without_the_job_s_arguments_and_the_plan_says_how():
    doc = _plan("handbook-args")
    unread = [c for c in doc["configs"] if not c["read"]]
    assert unread and "from the job's arguments: give them after the script" in unread[0]["why"]
    r = next(r for r in doc["rungs"] if r["id"] == "halve_micro_batch")
    assert not r["applicable"]


def test_arguments_bind_positionally_and_through_an_option_loop():
    positional = 'MODEL=$1\nTASK="${2}"\nPREC=${3:-full}\nACC=$4\n'
    assert bind(positional, ["zephyr", "sft"]) == {"MODEL": "zephyr", "TASK": "sft", "PREC": "full"}
    assert bind(positional, None) == {}
    loop = (
        'while [[ $# -gt 0 ]]; do\n  case $1 in\n    --model)\n      MODEL="$2"\n      shift 2\n'
        '      ;;\n    -t|--task) TASK="$2"; shift 2;;\n    --config=*)\n      CFG="${1#*=}"\n'
        "      shift\n      ;;\n  esac\ndone\n"
    )
    got = bind(loop, ["--model", "qwen", "-t", "sft", "--config=demo"])
    assert got == {"MODEL": "qwen", "TASK": "sft", "CFG": "demo"}
    assert bind(loop, ["--task", "sft"]) == {"TASK": "sft"}  # --model not given: not bound


def test_a_path_built_from_arguments_is_resolved_and_kept_as_written():
    script = "M=$1\nCONFIG_FILE=recipes/$M/config_$2.yaml\npython run.py $CONFIG_FILE\n"
    assert config_tokens(script, ["zephyr", "full"]) == [
        ("recipes/$M/config_$2.yaml", "recipes/zephyr/config_full.yaml")
    ]
    assert config_tokens(script) == [("recipes/$M/config_$2.yaml", "recipes/$M/config_$2.yaml")]


def test_the_cli_takes_the_job_s_arguments_after_the_script():
    case = DATA / "handbook-options"
    r = CliRunner().invoke(
        cli,
        ["plan", str(case / "launch.slurm"), "--json", "--rung", "halve_micro_batch", "--"]
        + EXPECT["handbook-options"]["args"],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["arguments"][:2] == ["--model", "qwen2.5-1.5b"]
    assert doc["rungs"][0]["values_after"] == {"micro_batch": 8, "grad_accum": 2}


def test_option_defaults_are_read_from_argparse_click_and_dataclasses():
    tree = ast.parse(
        "import argparse, click\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--batch-size', '--bs', type=int, default=16)\n"
        "p.add_argument('--lr', type=float, default=0.1)\n"
        "p.add_argument('--steps', type=int, default=None)\n"
        "@click.option('--accum', default=2)\n"
        "def f(accum): pass\n"
    )
    got = option_defaults(tree, "train.py")
    assert {k: v.value for k, v in got.items()} == {"--batch-size": 16, "--bs": 16, "--accum": 2}
    assert got["--bs"].where == "train.py:3 (argparse default)"
    prog = program_options(
        (DATA / "llama-recipes-fire" / "finetune.sbatch").read_text(), DATA / "llama-recipes-fire"
    )
    assert prog.defaults["--batch_size_training"].value == 4
    assert prog.default_of(["--batch-size-training"]).flag == "--batch_size_training"


def test_a_program_s_own_dataclass_default_wins_over_training_arguments(tmp_path):
    (tmp_path / "sft.py").write_text(
        "from dataclasses import dataclass, field\n"
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass MyArgs(TrainingArguments):\n"
        "    per_device_train_batch_size: int = field(default=2)\n"
        "(args,) = HfArgumentParser((MyArgs,)).parse_args_into_dataclasses()\n"
    )
    prog = program_options("srun python sft.py --output_dir out\n", tmp_path)
    assert prog.defaults["--per_device_train_batch_size"].value == 2
    assert prog.defaults["--gradient_accumulation_steps"].value == 1  # the documented default
    assert "documented" in prog.defaults["--gradient_accumulation_steps"].where


def test_a_default_is_not_trusted_when_the_program_line_carries_a_variable(tmp_path):
    case = DATA / "argparse-torchrun"
    script = (case / "train.sbatch").read_text().replace("--max_steps 5000", "$EXTRA_ARGS")
    (tmp_path / "train.py").write_text((case / "train.py").read_text())
    doc = plan_script(script, "train.sbatch", tmp_path, KNOBS, only="halve_micro_batch")
    r = doc["rungs"][0]
    assert not r["applicable"] and "$EXTRA_ARGS" in r["reason"], r


def test_a_config_runbook_cannot_read_blocks_the_program_default(tmp_path):
    case = DATA / "hf-run-clm"
    (tmp_path / "run_clm.py").write_text((case / "run_clm.py").read_text())
    script = "srun torchrun run_clm.py --deepspeed ds_missing.json --do_train\n"
    doc = plan_script(script, "run.sbatch", tmp_path, KNOBS, only="halve_micro_batch")
    r = doc["rungs"][0]
    assert not r["applicable"] and "could not read" in r["reason"], r


def test_an_evaluation_batch_that_is_only_the_default_is_halved_by_the_program_s_flag():
    """The eval_batch cause's rung on an HF program that never sets its evaluation batch:
    TrainingArguments' per_device_eval_batch_size 8 becomes 4 on the command line, and the
    training batch is not touched."""
    r = _plan("hf-run-clm", rung="halve_eval_batch")["rungs"][0]
    assert r["applicable"], r
    assert _edited(r["changes"][0]["diff"]) == [
        "srun torchrun --nproc_per_node 4 run_clm.py --per_device_eval_batch_size 4 \\"
    ]
    assert "per_device_train_batch_size" not in r["changes"][0]["diff"]


def test_a_hydra_key_is_named_by_its_path_and_only_the_job_s_own_sourced_files_are_read(tmp_path):
    from runbook.jobfiles import configs as cfg

    text = (
        "trainer:\n  devices: 1\nmodel:\n  # limited by memory\n  optim:\n    micro_batch_size: 4\n"
    )
    knob = cfg.find_knobs("c.yaml", text, ("micro_batch_size",))[0]
    assert cfg.dotted_key(text, knob) == "model.optim.micro_batch_size"
    (tmp_path / "env.sh").write_text("export MBS=4\n")
    script = "source ~/.bashrc\nsource /etc/profile\n. ./env.sh\nsource ../up.sh\n"
    assert [f.name for f in cfg.sourced_scripts(script, tmp_path)] == ["./env.sh"]


def test_a_hydra_config_name_with_a_folder_is_read_from_that_folder(tmp_path):
    """A variant: `--config-name llama/base` names conf/llama/base.yaml under the program's
    folder, and the override is added after that token."""
    from runbook.jobfiles import configs as cfg

    (tmp_path / "src" / "conf" / "llama").mkdir(parents=True)
    (tmp_path / "src" / "conf" / "llama" / "base.yaml").write_text(
        "model:\n  micro_batch_size: 8\n  global_batch_size: 256\n"
    )
    (tmp_path / "src" / "train.py").write_text("import hydra\n")
    script = "srun python src/train.py --config-path conf --config-name llama/base\n"
    (f,) = cfg.hydra_configs(script, tmp_path)
    assert (f.name, f.text is not None) == ("conf/llama/base.yaml", True)
    doc = plan_script(script, "job.sbatch", tmp_path, KNOBS, only="halve_micro_batch")
    r = doc["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4}, r
    assert _edited(r["changes"][0]["diff"]) == [
        "srun python src/train.py --config-path conf --config-name llama/base "
        "model.micro_batch_size=4"
    ]


def _plan_of(tmp_path, program: str, line: str) -> dict:
    (tmp_path / "train.py").write_text(program)
    script = f"#!/bin/bash\n#SBATCH --gres=gpu:4\n{line}\n"
    return plan_script(script, "job.sbatch", tmp_path, KNOBS, only="halve_micro_batch")["rungs"][0]


def test_training_arguments_built_in_code_are_no_parser_of_their_flags(tmp_path):
    """Issue 54, its first case: argparse takes only --model; TrainingArguments(per_device_train_
    batch_size=32) is built in the code. The plan said "check: train.py takes
    --per_device_train_batch_size" and added it at half the documented 8: argparse rejects it."""
    r = _plan_of(
        tmp_path,
        "import argparse\nfrom transformers import Trainer, TrainingArguments\n"
        "ap = argparse.ArgumentParser()\nap.add_argument('--model', default='gpt2')\n"
        "args = ap.parse_args()\n"
        "targs = TrainingArguments(output_dir='o', per_device_train_batch_size=32)\n",
        "torchrun --nproc_per_node 4 train.py --model gpt2",
    )
    assert not r["applicable"], r
    assert "--per_device_train_batch_size" not in " ".join(r.get("checks") or []), r
    assert "train.py has no micro-batch option" in r["reason"], r["reason"]


def test_an_hf_parser_that_reads_only_a_yaml_file_takes_no_flags(tmp_path):
    prog = _program(
        tmp_path,
        "from transformers import HfArgumentParser, TrainingArguments\nimport sys\n"
        "(t,) = HfArgumentParser((TrainingArguments,)).parse_yaml_file(sys.argv[1])\n",
    )
    assert "--per_device_train_batch_size" not in prog.flags


def test_fire_takes_the_functions_parameters_not_every_dataclass(tmp_path):
    """Issue 54, its second case: with fire.Fire(main), every dataclass in the job's files was
    taken as main's options."""
    prog = _program(
        tmp_path,
        "import fire\nfrom dataclasses import dataclass\n"
        "@dataclass\nclass EvalConfig:\n    eval_batch: int = 4\n    micro_batch_size: int = 8\n"
        "def main(model: str = 'm', batch_size: int = 16, lr: float = 1e-4):\n    pass\n"
        "if __name__ == '__main__':\n    fire.Fire(main)\n",
    )
    assert {"--model", "--batch_size", "--lr"} <= prog.flags
    assert "--micro_batch_size" not in prog.flags and "--eval_batch" not in prog.flags
    assert prog.defaults["--batch_size"].value == 16
    assert "fire: main's parameter batch_size" in prog.defaults["--batch_size"].where


def test_fire_with_kwargs_handed_to_the_configs_takes_their_fields(tmp_path):
    """llama-recipes' shape: main(**kwargs) hands its keywords to update_config(cfg, **kwargs)."""
    prog = _program(
        tmp_path,
        "import fire\nfrom dataclasses import dataclass\n"
        "@dataclass\nclass train_config:\n    batch_size_training: int = 4\n"
        "def update_config(c, **kw):\n    pass\n"
        "def main(**kwargs):\n    update_config(train_config(), **kwargs)\n"
        "fire.Fire(main)\n",
    )
    assert prog.defaults["--batch_size_training"].value == 4


def _program(tmp_path, text: str):
    (tmp_path / "train.py").write_text(text)
    return program_options("srun python train.py\n", tmp_path)


def test_a_module_run_with_dash_m_is_the_program(tmp_path):
    """Issue 54, item 3: `python -m pkg.train` runs pkg/train.py of the job's tree (and `python
    -m pkg` its __main__.py); its parser's options are read as a file's would be."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(
        "import argparse\nfrom pkg.args import add\nap = argparse.ArgumentParser()\nadd(ap)\n"
        "ap.parse_args()\n"
    )
    (tmp_path / "pkg" / "args.py").write_text(
        "def add(ap):\n    ap.add_argument('--micro-batch', type=int, default=16)\n"
    )
    prog = program_options("srun python3 -u -m pkg.train --steps 9\n", tmp_path)
    assert prog.entry == "pkg/train.py" and prog.defaults["--micro-batch"].value == 16, prog
    (tmp_path / "pkg" / "__main__.py").write_text(
        "import argparse\nap = argparse.ArgumentParser()\n"
        "ap.add_argument('--batch', type=int, default=4)\nap.parse_args()\n"
    )
    main = program_options("torchrun --nproc_per_node 8 -m pkg\n", tmp_path)
    assert main.defaults["--batch"].value == 4, main
    # A launcher's own module is not the program: the file it runs is.
    (tmp_path / "train.py").write_text("import argparse\n")
    assert program_options("python -m torch.distributed.run train.py\n", tmp_path).entry == (
        "train.py"
    )


def test_shell_arithmetic_is_computed_as_bash_does_and_nothing_else():
    from runbook.jobfiles import bash

    script = "G=${G:-8}\nB=${B:-128}\nM=4\nACC=$((B / M / G))\nODD=$((B / (M - 4)))\nX=$(nproc)\n"
    value = {n: bash.int_value(script, bash.find(script, [n])[0]) for n in ("ACC", "ODD", "X")}
    assert value == {"ACC": 4, "ODD": None, "X": None}  # a division by zero, a command: unknown
    assert bash.int_value("A=$((-7 / 2))\n", bash.find("A=$((-7 / 2))\n", ["A"])[0]) == -3


def test_an_option_s_role_is_read_from_its_help_only():
    from runbook.jobfiles.program import option_roles

    tree = ast.parse(
        "p.add_argument('--batch_size', default=64, help='Batch size per GPU (effective batch "
        "size is batch_size * accum_iter * # gpus')\n"
        "p.add_argument('--accum_iter', default=1, help='Accumulate gradient iterations')\n"
        "p.add_argument('-b', '--batch-size', default=256, help='the total batch size of all GPUs')\n"
        "p.add_argument('--bs', default=8)\n"  # no help: no role
        "p.add_argument('--eval_batch_size', default=8, help='batch size per GPU for eval')\n"
    )
    roles = [(r.kind, r.flags) for r in option_roles(tree, "main.py")]
    assert roles == [
        ("micro_batch", ("--batch_size",)),
        ("grad_accum", ("--accum_iter",)),
        ("global_batch", ("-b", "--batch-size")),
    ]


def test_a_help_that_mentions_accumulation_is_not_an_accumulation():
    from runbook.jobfiles.program import option_roles

    tree = ast.parse(
        "p.add_argument('--train-batches-per-epoch', type=int, help='Fixed loader batches "
        "(before gradient accumulation) per epoch')\n"
        "p.add_argument('--grad-accum-steps', type=int, default=1, help='The number of steps "
        "to accumulate gradients (default: 1)')\n"
    )
    assert [(r.kind, r.flags) for r in option_roles(tree, "train.py")] == [
        ("grad_accum", ("--grad-accum-steps",))
    ]


def test_only_a_parser_that_runs_proves_a_flag(tmp_path):
    """Issue 54: a parser in a function nothing that runs refers to declares nothing; one at top
    level, one called from __main__, and one handed to fire.Fire do."""
    (tmp_path / "train.py").write_text(
        "import argparse\nimport fire\n\n"
        "def _old_parser():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--micro-batch-size', type=int, default=8)\n"
        "    return p\n\n"
        "def make_parser():\n"
        "    p = argparse.ArgumentParser()\n"
        "    p.add_argument('--steps', type=int, default=10)\n"
        "    return p\n\n"
        "def main(lr: float = 0.1, grad_accum: int = 1):\n"
        "    pass\n\n"
        "top = argparse.ArgumentParser()\n"
        "top.add_argument('--seed', type=int, default=0)\n\n"
        "if __name__ == '__main__':\n"
        "    make_parser().parse_args()\n"
        "    fire.Fire(main)\n"
    )
    p = program_options("python train.py\n", tmp_path)
    assert p.flags == {"--steps", "--seed", "--lr", "--grad_accum"}
    assert p.default_of(["--micro-batch-size"]) is None


def test_the_environment_the_job_is_submitted_with_is_read_and_never_edited():
    """`CONFIG_FILE=configs/sft.yaml sbatch train.sh`: runbook plan --env reads the recipe the
    job would (patched in a copy, the job's script pointed at it with the variable's use kept
    out of the diff); a knob that only the environment sets is refused, not edited."""
    d = DATA / "env-config"
    text = (d / "train.sh").read_text()
    with_env = plan_script(
        text,
        "train.sh",
        d,
        KNOBS,
        only="halve_micro_batch",
        env={"CONFIG_FILE": "configs/sft.yaml"},
    )
    r = with_env["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4, "grad_accum": 4}, r
    script_diff = r["changes"][0]["diff"]
    assert _edited(script_diff) == [
        "CONFIG_FILE=configs/sft.runbook-halve_micro_batch.yaml  # runbook: the job's "
        "environment had CONFIG_FILE=configs/sft.yaml"
    ], script_diff
    micro = plan_script(text, "train.sh", d, KNOBS, only="halve_micro_batch", env={"MICRO": "16"})
    assert not micro["rungs"][0]["applicable"]  # MICRO is no knob of the site: nothing to set
    assert with_env["environment"] == {"CONFIG_FILE": "configs/sft.yaml"}
    without = plan_script(text, "train.sh", d, KNOBS, only="halve_micro_batch")
    assert not without["rungs"][0]["applicable"]  # the recipe is known only with the variable
    result = CliRunner().invoke(cli, ["plan", str(d / "train.sh"), "--env", "CONFIG_FILE"])
    assert result.exit_code == 2 and "expected NAME=VALUE" in result.output


def test_a_configurator_override_that_is_no_number_leaves_the_batch_unknown():
    d = DATA / "configurator"
    text = (d / "train.sbatch").read_text().replace("--eval_interval=1000", "--batch_size=auto")
    r = plan_script(text, "train.sbatch", d, KNOBS, only="halve_micro_batch")["rungs"][0]
    assert not r["applicable"] and "-1" not in r["reason"], r


# --- OpenMMLab Python configs (issue 54, item 3) ---

_SCHED = "configs/_base_/schedules/sgd_90e.py"


def _plan_copy(case: str, files: dict[str, str] | None, *swaps: tuple[str, str]) -> dict:
    """halve_micro_batch planned on a copy of fixture `case` with some of its `files` rewritten
    and each (old, new) of `swaps` made in its train.sbatch."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        shutil.copytree(DATA / case, d, dirs_exist_ok=True)
        for name, text in (files or {}).items():
            (d / name).write_text(text)
        text = (d / "train.sbatch").read_text()
        for old, new in swaps:
            assert old in text, (old, text)
            text = text.replace(old, new)
        return plan_script(text, "train.sbatch", d, KNOBS, only="halve_micro_batch")["rungs"][0]


def _mm_plan(edit: str | None = None, files: dict[str, str] | None = None) -> dict:
    """The mm-config fixture planned with its job's words after the GPU count, or some of its
    files, changed."""
    swaps = [("--work-dir work/net", edit)] if edit is not None else []
    return _plan_copy("mm-config", files, *swaps)


def _sched(old: str, new: str) -> dict[str, str]:
    text = (DATA / "mm-config" / _SCHED).read_text()
    assert old in text
    return {_SCHED: text.replace(old, new)}


def test_mm_the_job_s_own_cfg_options_are_the_value_in_force_and_changed_in_place():
    r = _mm_plan("--cfg-options train_dataloader.batch_size=16 model.backbone.depth=101")
    assert r["applicable"] and r["values_after"] == {"micro_batch": 8, "grad_accum": 2}, r
    added = _edited(r["changes"][0]["diff"])
    assert added == [
        "bash tools/launch.sh configs/classifier/net_4xb48_images.py 4 --cfg-options "
        "optim_wrapper.accumulative_counts=2 train_dataloader.batch_size=8 model.backbone.depth=101"
    ], added
    assert any("in force 16 (the job's --cfg-options)" in c for c in r["checks"]), r["checks"]


def test_mm_auto_scale_lr_is_refused_it_would_halve_the_learning_rate():
    r = _mm_plan("--auto-scale-lr")
    assert not r["applicable"] and "halve the learning rate" in r["reason"], r
    r = _mm_plan(files=_sched("base_batch_size=384)", "base_batch_size=384, enable=True)"))
    assert not r["applicable"] and f"auto_scale_lr.enable ({_SCHED}:3" in r["reason"], r


def test_mm_a_stated_accumulation_is_doubled_and_another_wrapper_refused():
    r = _mm_plan(
        files=_sched("optim_wrapper = dict(", "optim_wrapper = dict(accumulative_counts=3, ")
    )
    assert r["applicable"] and r["values_after"] == {"micro_batch": 24, "grad_accum": 6}, r
    r = _mm_plan(
        files=_sched("optim_wrapper = dict(", "optim_wrapper = dict(type='DeepSpeedOptimWrapper', ")
    )
    assert not r["applicable"] and "'DeepSpeedOptimWrapper'" in r["reason"], r


def test_mm_a_config_that_does_more_than_assign_or_a_variable_word_is_refused():
    cfg = "configs/classifier/net_4xb48_images.py"
    text = (DATA / "mm-config" / cfg).read_text()
    r = _mm_plan(
        files={cfg: "from mmengine.config import read_base\nwith read_base():\n    pass\n" + text}
    )
    assert not r["applicable"] and "does more than assign" in r["reason"], r
    r = _mm_plan("$EXTRA")
    assert not r["applicable"] and "not all words runbook reads" in r["reason"], r


def test_mm_an_mmcv_1x_program_is_refused_with_its_reason():
    prog = (
        (DATA / "mm-config/tools/train.py").read_text().replace("from mmengine.config", "from mmcv")
    )
    r = _mm_plan(files={"tools/train.py": prog})
    assert not r["applicable"] and "mmcv 1.x" in r["reason"], r


def test_mm_config_merges_bases_in_order_and_a_delete_replaces():
    from runbook.jobfiles import mmconfig

    texts = {
        "c/a.py": "d = dict(batch_size=8, workers=2)\nopt = dict(lr=1)\n",
        "c/b.py": "d = dict(batch_size=16)\n",
        "c/x.py": "_base_ = ['a.py', './b.py']\nn = 4\nopt = dict(_delete_=True, momentum=n * 2)\n",
    }
    c = mmconfig.read("c/x.py", texts.get)
    assert mmconfig.get(c.values, "d.batch_size") == (16, "c/b.py:1")
    assert mmconfig.get(c.values, "d.workers") == (2, "c/a.py:1")
    assert mmconfig.get(c.values, "opt.lr") == (None, None)
    assert mmconfig.get(c.values, "opt.momentum") == (8, "c/x.py:3")
    assert c.chain == ["c/a.py", "c/b.py", "c/x.py"]
    broken = mmconfig.read("c/y.py", {"c/y.py": "_base_ = 'mmdet::x.py'\n"}.get)
    assert isinstance(broken.values, mmconfig.Unknown) and "mmdet::x.py" in broken.values.why


# --- LightningCLI (issue 54, item 3) ---


def _cli_plan(line: str | None = None, files: dict[str, str] | None = None) -> dict:
    written = "srun python train.py fit -c config.yaml --trainer.max_epochs 30"
    return _plan_copy("lightning-cli", files, *([(written, line)] if line is not None else []))


def test_lightning_the_job_s_own_words_are_in_force_and_changed_where_written():
    r = _cli_plan("srun python train.py fit -c config.yaml --data.train_loader.batch_size=8")
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4, "grad_accum": 6}, r
    assert _edited(r["changes"][0]["diff"]) == [
        "srun python train.py fit -c config.yaml --data.train_loader.batch_size=4 "
        "--trainer.accumulate_grad_batches 6"
    ]


def test_lightning_manual_optimization_another_subcommand_or_an_unread_config_is_refused():
    model = (DATA / "lightning-cli/speech/model.py").read_text()
    manual = model.replace(
        "        self.lr = lr\n",
        "        self.lr = lr\n        self.automatic_optimization = False\n",
    )
    r = _cli_plan(files={"speech/model.py": manual})
    assert (
        not r["applicable"]
        and "speech/model.py:" in r["reason"]
        and "automatic optimization" in r["reason"]
    ), r
    r = _cli_plan("srun python train.py validate -c config.yaml")
    assert not r["applicable"] and "'validate', not fit" in r["reason"], r
    r = _cli_plan("srun python train.py fit -c $CFG")
    assert not r["applicable"] and "could not be read" in r["reason"], r


def test_lightning_a_loader_batch_that_is_no_init_parameter_is_refused():
    data = (DATA / "lightning-cli/speech/data.py").read_text()
    fixed = data.replace("batch_size=cfg.batch_size", "batch_size=16")
    r = _cli_plan(files={"speech/data.py": fixed})
    assert not r["applicable"] and "passes no one self.X as batch_size" in r["reason"], r


def test_lightning_a_datamodule_given_in_code_with_its_default():
    from runbook.jobfiles import lightning_cli

    src = (
        "import lightning.pytorch as pl\n"
        "class Shards(pl.LightningDataModule):\n"
        "    def __init__(self, root: str, batch_size: int = 32):\n"
        "        super().__init__()\n"
        "        self.save_hyperparameters()\n"
        "    def train_dataloader(self):\n"
        "        return DataLoader(self.ds, batch_size=self.hparams.batch_size)\n"
    )
    found = lightning_cli.data_class(ast.parse(src), "shards.py", "Shards")
    assert found.micro == "batch_size" and found.default == 32, found
    assert "shards.py:7" in found.proof


# --- an option routed into a yacs config (issue 54, item 3) ---


def _yacs_plan(line: str | None = None, base: str | None = None, cfg: str = "") -> dict:
    swaps = [("--batch-size 96", line)] if line is not None else []
    swaps += [("configs/large.yaml", cfg)] if cfg else []
    return _plan_copy(
        "yacs-default", {"configs/base.yaml": base} if base is not None else None, *swaps
    )


def test_yacs_the_yaml_base_and_the_job_s_opts_are_the_value_in_force():
    r = _yacs_plan(base="TRAIN:\n  ACCUMULATION_STEPS: 3\n")
    assert r["applicable"] and r["values_after"] == {"micro_batch": 48, "grad_accum": 6}, r
    assert any("configs/base.yaml, over config.py:17" in c for c in r["checks"]), r["checks"]
    r = _yacs_plan("--batch-size 96 --opts TRAIN.ACCUMULATION_STEPS 4")
    assert r["applicable"] and r["values_after"] == {"micro_batch": 48, "grad_accum": 8}, r


def test_yacs_a_value_that_is_no_whole_number_or_an_unread_yaml_adds_nothing():
    r = _yacs_plan(base="TRAIN:\n  ACCUMULATION_STEPS: auto\n")
    assert not r["applicable"], r
    r = _yacs_plan(cfg="configs/missing.yaml")
    assert not r["applicable"], r
    assert _yacs_plan()["applicable"]


# --- the same families in an incident (sbatch_patch.patch, as `runbook oom` calls it) ---


def _incident_patch(case: str, micro: int | None):
    from runbook.planning import sbatch_patch as sp
    from runbook.planning.fit import Fit

    d = DATA / case
    text = (d / EXPECT[case]["script"]).read_text()
    fit = None
    if micro is not None:  # a fit from the failure's numbers that names this micro-batch
        fit = Fit(24, 81559.0, 80000.0, 90000.0, (1000.0, 1000.0), "oom_message", micro)
    return sp.patch(text, "halve_micro_batch", KNOBS, program=program_options(text, d),
                    configs=[], fit=fit)  # fmt: skip


def test_incident_a_lightning_job_gets_the_fit_s_micro_batch_with_the_global_batch_kept():
    p = _incident_patch("lightning-cli", 6)
    assert (
        "--data.init_args.train_loader.batch_size 6 --trainer.accumulate_grad_batches 12" in p.new
    )
    assert p.from_program and any("24 x 3 = 6 x 12" in c for c in p.checks), p.checks
    halved = _incident_patch("lightning-cli", None)
    assert (
        "--data.init_args.train_loader.batch_size 12 --trainer.accumulate_grad_batches 6"
        in halved.new
    )


def test_incident_a_fit_that_breaks_the_global_batch_is_refused_not_rounded():
    from runbook.errors import RungNotApplicable

    with pytest.raises(RungNotApplicable, match="does not keep micro-batch 24 x accumulation 3"):
        _incident_patch("lightning-cli", 7)


def test_incident_an_openmmlab_job_run_directly_gets_its_cfg_options():
    from runbook.planning import sbatch_patch as sp

    d = DATA / "mm-config"
    text = (
        (d / "train.sbatch")
        .read_text()
        .replace(
            "bash tools/launch.sh configs/classifier/net_4xb48_images.py 4 --work-dir work/net",
            "srun python tools/train.py configs/classifier/net_4xb48_images.py --launcher slurm",
        )
    )
    p = sp.patch(text, "halve_micro_batch", KNOBS, program=program_options(text, d), configs=[])
    assert p.new.rstrip().endswith(
        "--launcher slurm --cfg-options train_dataloader.batch_size=24 "
        "optim_wrapper.accumulative_counts=2"
    ), p.new


# --- asking the program itself (issue 54, item 2): real processes of the job's interpreter ---


def _ask(*more: str):
    import sys

    script = str(DATA / "ask-help" / "train.sbatch")
    args = ["plan", script, "--rung", "halve_micro_batch", "--json", "--ask", sys.executable]
    result = CliRunner().invoke(cli, [*args, *more])
    return result, (
        json.loads(result.output)["rungs"][0] if result.output.startswith("{") else None
    )


def test_ask_the_program_s_parser_decides_the_edit_and_proves_it():
    # Its parser run parse-only (runbook.asking) names --batch_size and --grad_accum by their
    # own names; the overrides appended are parsed again: those two values changed, no other.
    result, r = _ask()
    assert result.exit_code == 0 and r["applicable"], result.output
    assert r["checks"][0].startswith(
        "the program's parser (argparse) on the new command line: batch_size 16 -> 8, "
        "grad_accum 1 -> 2; nothing else of its 3 values changed (asked: "
    ), r["checks"]
    assert r["lands"] == ["--batch_size 8 --grad_accum 2 appended to the training command, as "
                          "its argparse parser reads them (the check below)"]  # fmt: skip


def test_ask_a_parser_that_does_not_take_the_flag_at_run_time_refuses_showing_both():
    # The static reading sees --grad_accum in the parser; the job's environment (TRAINER_V2=0,
    # an older version of the trainer) leaves it out: its parser has no accumulation, and it
    # rejects the static reading's edit with its own words.
    result, r = _ask("--env", "TRAINER_V2=0")
    assert result.exit_code == 4 and not r["applicable"], result.output
    assert "unrecognized arguments: --grad_accum 2" in r["reason"], r
    assert "--grad_accum added: the default, train.py:12" in r["reason"], r
    assert "neither an accumulation nor a global batch" in r["reason"], r


def test_ask_a_program_that_cannot_answer_leaves_the_reading_and_says_so(tmp_path):
    import shutil

    d = tmp_path / "job"
    shutil.copytree(DATA / "ask-help", d)
    text = (d / "train.py").read_text()
    (d / "train.py").write_text("import a_module_this_venv_lacks  # noqa\n" + text)
    import sys

    result = CliRunner().invoke(cli, ["plan", str(d / "train.sbatch"), "--rung", "halve_micro_batch",
                                      "--json", "--ask", sys.executable])  # fmt: skip
    r = json.loads(result.output)["rungs"][0]
    assert r["applicable"], r
    note = [c for c in r["checks"] if c.startswith("asked the program")]
    assert "no answer (exit 1: ModuleNotFoundError" in note[0] and "the plan stands" in note[0], (
        note
    )
    assert not list(d.rglob("__pycache__")), "asking wrote bytecode into the job's folder"


def test_ask_only_as_the_job_script_s_owner(tmp_path):
    import os
    import shutil
    import sys

    if os.geteuid() != 0:
        pytest.skip("giving a file to another account needs root (CI runs as root)")
    d = tmp_path / "job"
    shutil.copytree(DATA / "ask-help", d)
    os.chown(d / "train.sbatch", 65534, 65534)  # nobody's script
    result = CliRunner().invoke(cli, ["plan", str(d / "train.sbatch"), "--ask", sys.executable])
    assert (
        result.exit_code == 4 and "runbook asks a program only as its job's owner" in result.output
    )
    result = CliRunner().invoke(
        cli, ["plan", str(DATA / "ask-help/train.sbatch"), "--ask", "/no/python"]
    )
    assert result.exit_code == 2 and "--ask /no/python: not an interpreter" in result.output


def test_a_data_file_on_the_command_line_is_never_a_config():
    # Measured in issue 63: `data/chat.jsonl` was cut to `data/chat.json` and reported as "a
    # config file runbook could not read".
    from runbook.jobfiles.configs import config_tokens

    script = ("srun python train.py --config c.yaml --data data/chat.jsonl --train_file t.json "
              "--dataset_config d.yaml --deepspeed ds.json --annotations a.json x.toml\n")  # fmt: skip
    assert [w for w, _ in config_tokens(script)] == ["c.yaml", "d.yaml", "ds.json", "x.toml"]
