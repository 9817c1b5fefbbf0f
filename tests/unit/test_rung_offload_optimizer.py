"""offload_optimizer, the rung the optimizer_state cause prefers: data in (a job's script and the
config files it names, in their real shapes), the edit or the refusal out.

Shapes followed (read, not copied): DeepSpeed JSON configs as HF's integration documents them
and axolotl's deepspeed/zero2.json (`zero_optimization.stage`, `offload_optimizer.device`, an
`optimizer` section with "auto" values); accelerate config YAML as alignment-handbook's
recipes/accelerate_configs/deepspeed_zero2.yaml (`deepspeed_config: offload_optimizer_device:
none`, `zero_stage: 2`); accelerate's launch flag `--offload_optimizer_device`.
"""

from __future__ import annotations

import json

import pytest

from runbook import cause, rungs
from runbook.errors import RungNotApplicable
from runbook.jobfiles.configs import read_configs
from runbook.planning import ladder, walk
from runbook.planning.offline import plan_script
from runbook.planning.sbatch_patch import patch
from runbook.playbook import load
from runbook.site import SiteConfig

KNOBS = SiteConfig().knobs
BOOK = load()
SCRIPT = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:8
srun accelerate launch --config_file {accel} train.py --deepspeed {ds} \\
    --per_device_train_batch_size 4 --gradient_accumulation_steps 8
"""
ZERO2 = {
    "zero_optimization": {
        "stage": 2,
        "offload_optimizer": {"device": "none"},
        "contiguous_gradients": True,
        "overlap_comm": True,
    },
    "bf16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}},
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
}
ACCELERATE = """compute_environment: LOCAL_MACHINE
debug: false
deepspeed_config:
  gradient_accumulation_steps: 1
  offload_optimizer_device: none
  offload_param_device: none
  zero_stage: 2
distributed_type: DEEPSPEED
mixed_precision: bf16
num_machines: 1
num_processes: 8
"""


def job(tmp_path, ds: dict | None = None, accel: str | None = None):
    if ds is not None:
        (tmp_path / "ds_zero2.json").write_text(json.dumps(ds, indent=4) + "\n")
    if accel is not None:
        (tmp_path / "zero2.yaml").write_text(accel)
    script = SCRIPT.format(
        accel="zero2.yaml" if accel is not None else "none.yaml",
        ds="ds_zero2.json" if ds is not None else "none.json",
    )
    return script, read_configs(script, tmp_path)


def test_a_deepspeed_config_gets_its_optimizer_state_on_the_cpu_in_a_copy(tmp_path):
    script, configs = job(tmp_path, ds=ZERO2)
    p = patch(script, "offload_optimizer", KNOBS, configs=configs)
    ((name, text),) = p.files.items()
    assert name == "ds_zero2.runbook-offload_optimizer.json" and name in p.new
    new = json.loads(text)
    assert new["zero_optimization"]["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
    # Nothing else moved: the rest of the config reads as it did.
    del new["zero_optimization"]["offload_optimizer"]
    old = json.loads(json.dumps(ZERO2))
    del old["zero_optimization"]["offload_optimizer"]
    assert new == old
    assert '    "zero_optimization"' in text  # the file's own indent
    assert "--per_device_train_batch_size 4 --gradient_accumulation_steps 8" in p.new
    assert any("re-read" in c for c in p.checks) and any("bash -n" in c for c in p.checks)


@pytest.mark.parametrize(
    ("zero", "why"),
    [
        ({"stage": 0}, "only with ZeRO stage 1, 2 or 3"),
        ({"stage": 3, "offload_optimizer": {"device": "nvme"}}, "already offloads"),
    ],
)
def test_a_config_without_zero_or_already_offloading_is_refused_with_why(tmp_path, zero, why):
    script, configs = job(tmp_path, ds={**ZERO2, "zero_optimization": zero})
    with pytest.raises(RungNotApplicable, match=why):
        patch(script, "offload_optimizer", KNOBS, configs=configs)


def test_a_config_that_names_no_optimizer_is_refused(tmp_path):
    no_optimizer = {k: v for k, v in ZERO2.items() if k != "optimizer"}
    script, configs = job(tmp_path, ds=no_optimizer)
    with pytest.raises(RungNotApplicable, match="names no optimizer"):
        patch(script, "offload_optimizer", KNOBS, configs=configs)


def test_accelerate_s_config_file_and_its_launch_flag(tmp_path):
    script, configs = job(tmp_path, accel=ACCELERATE)
    p = patch(script, "offload_optimizer", KNOBS, configs=configs)
    ((name, text),) = p.files.items()
    assert name == "zero2.runbook-offload_optimizer.yaml"
    assert text == ACCELERATE.replace(
        "offload_optimizer_device: none", "offload_optimizer_device: cpu"
    )
    flagged = "accelerate launch --use_deepspeed --offload_optimizer_device none train.py\n"
    q = patch("#!/bin/bash\n" + flagged, "offload_optimizer", KNOBS)
    assert "--offload_optimizer_device cpu train.py" in q.new
    with pytest.raises(RungNotApplicable, match="no optimizer offload"):
        patch("#!/bin/bash\ntorchrun train.py --batch-size 4\n", "offload_optimizer", KNOBS)


def test_the_optimizer_state_cause_prefers_it_and_the_ladder_follows_where_it_cannot(tmp_path):
    c = cause.Cause("optimizer_state", ["the optimizer's state at its first step"])
    script, configs = job(tmp_path, ds=ZERO2)

    def walked(**kw):
        return ladder.plan(
            "true_oom",
            BOOK.ladder,
            causes=BOOK.causes,
            script=script,
            knobs=KNOBS,
            tried=[],
            node="gpu-01",
            cause=c,
            **kw,
        )

    p = walked(configs=configs)
    assert p.rung == "offload_optimizer" and p.acts and p.patch.files
    without = walked()  # the config not readable where runbook runs: passed over, with why
    assert without.passed_over[0][0] == "offload_optimizer"
    assert "halve_micro_batch" in dict(without.passed_over)  # the activation rungs still are
    step = walk.next_step_for_cause(c, "true_oom", BOOK.ladder, BOOK.causes)
    assert step["rung"] == "offload_optimizer" and not step["for_a_person"]
    assert rungs.REGISTRY["offload_optimizer"].setting.startswith("move the optimizer's state")


def test_runbook_plan_shows_it(tmp_path):
    script, _ = job(tmp_path, ds=ZERO2)
    (tmp_path / "job.sbatch").write_text(script)
    doc = plan_script(script, "job.sbatch", tmp_path, KNOBS, only="offload_optimizer")
    (r,) = doc["rungs"]
    assert r["applicable"] and r["values_after"] == {"offload_optimizer": "cpu"}
    everything = [r["id"] for r in plan_script(script, "job.sbatch", tmp_path, KNOBS)["rungs"]]
    assert everything[-1] == "offload_optimizer"
