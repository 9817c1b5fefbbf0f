"""`runbook plan`: knobs in the config files a script names, rung by rung, on fixtures written
here in the shapes of public projects' scripts and configs (tests/data/plan/SOURCES.md), and the
config readers on each format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from runbook.jobfiles import configs as cfg
from runbook.planning.offline import plan_script
from runbook.site import SiteConfig

DATA = Path(__file__).resolve().parents[1] / "data" / "plan"
KNOBS = SiteConfig().knobs


def plan(case: str, script: str, rung: str | None = None) -> dict:
    d = DATA / case
    return plan_script((d / script).read_text(), script, d, KNOBS, only=rung)


def rung(doc: dict, rid: str) -> dict:
    return next(r for r in doc["rungs"] if r["id"] == rid)


def test_hf_recipe_in_a_yaml_config_is_halved_in_a_copy():
    doc = plan("handbook-smollm", "train.sbatch")
    k = doc["knobs"]
    assert (k["micro_batch"]["key"], k["micro_batch"]["value"], k["micro_batch"]["kind"]) == (
        "per_device_train_batch_size",
        4,
        "config",
    )
    assert k["micro_batch"]["file"] == "recipes/smollm/sft/config.yaml"
    assert k["grad_accum"]["value"] == 4
    assert doc["global_batch"]["per_data_parallel_rank"] == 16
    r = rung(doc, "halve_micro_batch")
    assert r["applicable"] and r["values_after"] == {"micro_batch": 2, "grad_accum": 8}
    assert "global batch 4 x 4 = 2 x 8 per data-parallel rank" in r["checks"]
    script, config = r["changes"]
    assert config["new_file"] == "recipes/smollm/sft/config.runbook-halve_micro_batch.yaml"
    assert "+ACCELERATE_LOG_LEVEL" in script["diff"] and config["new_file"] in script["diff"]
    changed = [
        ln for ln in config["diff"].splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")
    ]
    assert changed == [
        "-gradient_accumulation_steps: 4",
        "+gradient_accumulation_steps: 8",
        "-per_device_train_batch_size: 4",
        "+per_device_train_batch_size: 2",
    ]
    # per_device_eval_batch_size is not a training knob: untouched
    assert "per_device_eval_batch_size" not in "\n".join(changed)
    # the user's checkpointing is already on: said, not changed
    assert "already on" in rung(doc, "activation_checkpointing")["reason"]


def test_plan_writes_nothing(tmp_path):
    shutil.copytree(DATA / "handbook-smollm", tmp_path / "case")
    before = {p: p.read_bytes() for p in (tmp_path / "case").rglob("*") if p.is_file()}
    plan_script(
        (tmp_path / "case" / "train.sbatch").read_text(), "train.sbatch", tmp_path / "case", KNOBS
    )
    after = {p: p.read_bytes() for p in (tmp_path / "case").rglob("*") if p.is_file()}
    assert before == after


def test_odd_micro_batch_in_toml_is_refused_with_why():
    r = rung(plan("torchtitan-8b", "train.sbatch"), "halve_micro_batch")
    assert not r["applicable"]
    assert "local_batch_size=3" in r["reason"] and "cannot be halved exactly" in r["reason"]


def test_config_path_from_the_jobs_arguments_is_named_in_the_refusal():
    doc = plan("handbook-launch", "launch.slurm")
    unread = [c for c in doc["configs"] if not c["read"]]
    assert any("$MODEL" in c["file"] and "set only when the job runs" in c["why"] for c in unread)
    r = rung(doc, "halve_micro_batch")
    assert not r["applicable"] and "could not read" in r["reason"] and "$MODEL" in r["reason"]


def test_cli_json_contract_and_exit_codes(tmp_path):
    runner = CliRunner()
    r = runner.invoke(cli, ["plan", str(DATA / "handbook-smollm" / "train.sbatch"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert list(doc) == [
        "script",
        "workdir",
        "arguments",
        "configs",
        "knobs",
        "global_batch",
        "rungs",
    ]
    assert doc["arguments"] is None  # none given: not known (an empty list: given, none)
    assert set(doc["knobs"]) == {"micro_batch", "grad_accum", "global_batch", "data_parallel"}
    for rr in doc["rungs"]:
        assert set(rr) in (
            {"id", "applicable", "reason"},
            {"id", "applicable", "changes", "values_after", "checks", "lands"},
        )
    none = runner.invoke(
        cli, ["plan", str(DATA / "torchtitan-8b" / "train.sbatch"), "--rung", "halve_micro_batch"]
    )
    assert none.exit_code == 4 and "cannot apply" in none.output
    missing = runner.invoke(cli, ["plan", str(tmp_path / "nope.sbatch")])
    assert missing.exit_code == 3 and "nope.sbatch" in missing.output
    bad = runner.invoke(cli, ["plan", str(DATA / "torchtitan-8b" / "train.sbatch"), "--rung", "x"])
    assert bad.exit_code == 2 and "not a rung" in bad.output


# -- the config readers, by format --------------------------------------------------------------
DS = """{
  "train_batch_size": 256,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 4,
  "zero_optimization": {"stage": 2}
}"""


def test_deepspeed_json_with_all_three_keeps_the_global_batch(tmp_path):
    (tmp_path / "ds.json").write_text(DS)
    script = "#!/bin/bash\ndeepspeed --num_gpus=8 train.py --deepspeed ds.json\n"
    doc = plan_script(script, "job.sh", tmp_path, KNOBS, only="halve_micro_batch")
    r = doc["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 4, "grad_accum": 8}
    config = r["changes"][1]
    assert '"train_batch_size": 256' in config["diff"].replace("\n ", "\n")  # context, unchanged
    assert '+  "train_micro_batch_size_per_gpu": 4,' in config["diff"]
    assert '+  "gradient_accumulation_steps": 8,' in config["diff"]


def test_auto_values_defer_to_the_script():
    text = '{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}'
    knobs = cfg.find_knobs("ds.json", text, ("train_micro_batch_size_per_gpu",))
    assert knobs and knobs[0].number is None  # "auto" is not a knob runbook can change


def test_global_batch_stated_means_halving_the_micro_batch_alone(tmp_path):
    (tmp_path / "train.yaml").write_text("global_batch_size: 512\nmicro_batch_size: 4\n")
    doc = plan_script(
        "python pretrain.py --config train.yaml\n",
        "job.sh",
        tmp_path,
        KNOBS,
        only="halve_micro_batch",
    )
    r = doc["rungs"][0]
    assert r["applicable"] and r["values_after"] == {"micro_batch": 2}
    assert any("global_batch_size=512: unchanged" in c for c in r["checks"])
    assert doc["global_batch"]["value"] == 512


def test_neither_accumulation_nor_global_batch_is_a_refusal(tmp_path):
    (tmp_path / "c.toml").write_text("[training]\nlocal_batch_size = 4\n")
    r = plan_script(
        "torchrun -m x --job.config_file c.toml\n",
        "job.sh",
        tmp_path,
        KNOBS,
        only="halve_micro_batch",
    )["rungs"][0]
    assert not r["applicable"] and "would change the global batch" in r["reason"]


@pytest.mark.parametrize(
    "text, key, value",
    [
        ("per_device_train_batch_size: '8'  # quoted\n", "per_device_train_batch_size", "'8'"),
        ("  micro_batch_size: 16\n", "micro_batch_size", "16"),
        ("local_batch_size = 2 # toml\n", "local_batch_size", "2"),
    ],
)
def test_find_and_replace_keep_layout(text, key, value):
    name = "c.toml" if "=" in text else "c.yaml"
    (k,) = cfg.find_knobs(name, text, (key,))
    assert k.value == value
    new = cfg.replace_value(text, k, 1)
    assert new.replace(value.strip("'"), "1", 1) == text.replace(value.strip("'"), "1", 1)
    assert cfg.find_knobs(name, new, (key,))[0].number == 1


def test_named_configs_follow_simple_variables_only():
    script = (
        'CONFIG=recipes/a.yaml\nMODEL=""\nMODEL="$2"\n'
        "python t.py --config $CONFIG --other recipes/$MODEL.yaml # see old.yaml\n"
    )
    assert cfg.named_configs(script) == ["recipes/a.yaml", "recipes/$MODEL.yaml"]


def test_runbook_oom_plans_the_same_config_change():
    """The ladder (what `runbook oom` acts on) takes the knob from the configs, as plan shows."""
    from runbook.jobfiles.configs import read_configs
    from runbook.planning import ladder
    from runbook.playbook import load

    d = DATA / "handbook-smollm"
    script = (d / "train.sbatch").read_text()
    p = ladder.plan(
        "true_oom",
        load().ladder,
        script=script,
        knobs=KNOBS,
        tried=[],
        node="gpu-01",
        configs=read_configs(script, d),
        causes={},
    )
    assert p.acts and p.rung == "halve_micro_batch"
    ((name, text),) = p.patch.files.items()
    assert name == "recipes/smollm/sft/config.runbook-halve_micro_batch.yaml"
    assert "per_device_train_batch_size: 2" in text and "gradient_accumulation_steps: 8" in text
    assert name in p.patch.new and "+per_device_train_batch_size: 2" in p.patch.diff()
    # without the configs (not readable where runbook runs) the rung is passed over, with why
    q = ladder.plan(
        "true_oom", load().ladder, causes={}, script=script, knobs=KNOBS, tried=[], node="gpu-01"
    )
    assert q.rung != "halve_micro_batch"
    assert any(r == "halve_micro_batch" and "micro-batch" in why for r, why in q.passed_over)


def test_the_rerun_script_points_at_the_copies_by_absolute_path(tmp_path):
    script = (
        "python t.py --config recipes/x.runbook-halve_micro_batch.yaml --other recipes/x.yaml\n"
    )
    new = cfg.point_script_at(
        script,
        "recipes/x.runbook-halve_micro_batch.yaml",
        str(tmp_path / "x.runbook-halve_micro_batch.yaml"),
    )
    assert f"--config {tmp_path}/x.runbook-halve_micro_batch.yaml" in new
    assert "--other recipes/x.yaml" in new  # another file's name is not touched


@pytest.mark.parametrize(
    "line, before, after, values",
    [
        # NeMo / Hydra overrides: the global batch is stated, the micro-batch alone is halved
        (
            "python megatron_gpt_pretraining.py model.micro_batch_size=4 model.global_batch_size=256",
            "model.micro_batch_size=4",
            "model.micro_batch_size=2",
            {"micro_batch": 2, "global_batch": 256},
        ),
        # torchtitan's command-line override of its TOML
        (
            "torchrun -m torchtitan.train --job.config_file x.toml --training.local_batch_size 8 "
            "--training.global_batch_size 64",
            "--training.local_batch_size 8",
            "--training.local_batch_size 4",
            {"micro_batch": 4, "global_batch": 64},
        ),
        # OpenRLHF
        (
            "deepspeed --module openrlhf.cli.train_sft --micro_train_batch_size 4 "
            "--gradient_accumulation_steps 2",
            "--micro_train_batch_size 4",
            "--micro_train_batch_size 2",
            {"micro_batch": 2, "grad_accum": 4},
        ),
        # OpenCLIP
        (
            "python -m open_clip_train.main --batch-size 256 --accum-freq 2",
            "--accum-freq 2",
            "--accum-freq 4",
            {"micro_batch": 128, "grad_accum": 4},
        ),
    ],
)
def test_framework_overrides_on_the_command_line(tmp_path, line, before, after, values):
    r = plan_script(f"#!/bin/bash\n{line}\n", "job.sh", tmp_path, KNOBS, only="halve_micro_batch")[
        "rungs"
    ][0]
    assert r["applicable"] and r["values_after"] == values
    diff = r["changes"][0]["diff"]
    assert before in diff and after in diff


SBATCH = Path(__file__).resolve().parents[1] / "data" / "sbatch"


def test_the_data_parallel_size_and_the_global_batch_from_the_numbers_the_script_states():
    from runbook.planning.offline import data_parallel

    def dp(name: str, text: str | None = None):
        script = text if text is not None else (SBATCH / name).read_text()
        k = data_parallel(script, name)
        return (k.value, k.text) if k else None

    # accelerate: --num_processes is the whole world.
    assert dp("hf_accelerate.sbatch") == (16, "16 processes")
    doc = plan_script((SBATCH / "hf_accelerate.sbatch").read_text(), "s", SBATCH, KNOBS)
    assert doc["knobs"]["data_parallel"]["value"] == 16
    assert doc["global_batch"]["value"] == 8 * 4 * 16
    # Megatron: nodes x tasks per node over the tensor-parallel size.
    assert dp("megatron.sbatch") == (16, "4 nodes x 8 tasks / (tensor 2)")
    # torchrun: --nnodes x --nproc_per_node, with pipeline parallelism.
    tr = "#!/bin/bash\n#SBATCH -N 2\nsrun torchrun --nnodes 2 --nproc_per_node 8 t.py \\\n"
    assert dp("t", tr + "  --pipeline-model-parallel-size 4\n") == (4, "2 nodes x 8 / (pipeline 4)")
    # A factor that is not a number, or a world that the split does not divide: unknown.
    assert dp("t", tr.replace("8", "$GPUS") + "\n") is None
    assert dp("t", tr + "  --tensor-model-parallel-size 3\n") is None
    assert dp("formula_accum.sbatch") is None  # -N 2 but ranks per node only in arithmetic
    # A flag in a comment is history, not the world.
    assert dp("t", "#!/bin/bash\n# torchrun --nproc_per_node 8 --nnodes 2\npython t.py\n") is None


EXPECT = json.loads((DATA / "expect.json").read_text())
CASES = [
    pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=EXPECT[k]["known_miss"]))
    if "known_miss" in EXPECT[k]
    else k
    for k in sorted(EXPECT)
    if not k.startswith("_")
]


@pytest.mark.parametrize("case", CASES)
def test_real_scripts_get_the_first_rung_an_engineer_would_plan(case):
    """Issue 16: launch scripts in the shapes of public training repositories' (written here:
    tests/data/plan/SOURCES.md) and the configs they name. Each gets the first true-OOM rung exactly as expected, or a
    refusal naming what is missing; no value is edited that should not be."""
    want = EXPECT[case]
    doc = plan(case, want["script"], "halve_micro_batch")
    r = rung(doc, "halve_micro_batch")
    if "refused" in want:
        assert not r["applicable"] and want["refused"] in r["reason"], r
    else:
        assert r["applicable"], r
        assert r["values_after"] == want["values_after"], r
        # Every changed line is a knob named in the values after: nothing else is edited.
        for change in r["changes"]:
            edited = [
                ln for ln in change["diff"].splitlines() if ln.startswith("+") and ln[1:2] != "+"
            ]
            assert len(edited) <= 2, change["diff"]
    if "data_parallel" in want:
        assert (doc["knobs"]["data_parallel"] or {}).get("value") == want["data_parallel"]
    if "global_batch" in want:
        assert doc["global_batch"]["value"] == want["global_batch"]


def test_a_here_document_read_into_a_variable_runs_but_one_fed_to_cat_does_not():
    from runbook.jobfiles.bash import find as _find

    live = "read -r -d '' cmd <<EOF\ntrain --micro_batch_size 4\nEOF\ndeepspeed $cmd\n"
    inert = "cat > notes.txt <<EOF\ntrain --micro_batch_size 4\nEOF\npython t.py\n"
    assert [h.value for h in _find(live, ["--micro_batch_size"])] == ["4"]
    assert _find(inert, ["--micro_batch_size"]) == []


def test_shrink_world_says_every_place_the_change_lands(tmp_path):
    """The launcher's node count and the accumulation are edited in the script; the node count
    the rerun asks Slurm for goes on sbatch's command line, which overrides the script's
    `#SBATCH --nodes` (said, with its line, and left as written)."""
    script = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:4\n"
        "srun torchrun --nnodes 2 --nproc_per_node 4 train.py "
        "--per_device_train_batch_size 8 --gradient_accumulation_steps 2\n"
    )
    doc = plan_script(script, "job.sbatch", tmp_path, KNOBS, only="shrink_world")
    (r,) = doc["rungs"]
    assert r["applicable"], r
    assert "--nnodes 2 -> 1" in r["lands"]
    assert any(c.startswith("gradient accumulation 2 -> 4") for c in r["lands"])
    assert (
        "sbatch --nodes=1 on the resubmission's command line: it overrides #SBATCH --nodes=2 "
        "(job.sbatch:2), left as written"
    ) in r["lands"]
    assert not any("->" in c for c in r["checks"])  # checks are checks, changes are changes
