"""The ladder walk and the rung registry as data in, data out: no cluster, no stand-in client."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook import rungs
from runbook.planning import ladder, walk
from runbook.playbook import load
from runbook.site import SiteConfig
from runbook.verify import expected_allocator

DATA = Path(__file__).resolve().parents[1] / "data" / "sbatch"
KNOBS = SiteConfig().knobs
LADDER = load().ladder
CAUSES = load().causes
HF = (DATA / "hf_accelerate.sbatch").read_text()


def plan(verdict, script=HF, tried=(), node="gpu-01", **kw):
    return ladder.plan(
        verdict,
        LADDER,
        causes=kw.pop("causes", CAUSES),
        script=script,
        knobs=KNOBS,
        tried=list(tried),
        node=node,
        **kw,
    )


def test_every_playbook_rung_is_registered_once():
    ids = [r.id for rs in LADDER.values() for r in rs]
    assert set(ids) <= set(rungs.REGISTRY)
    for r in rungs.REGISTRY.values():
        assert r.kind in {
            rungs.SCRIPT,
            rungs.ALLOCATOR,
            rungs.NODE,
            rungs.HUMAN,
            rungs.CONTINUE,
            rungs.SHRINK,
            rungs.GROW,
        }
        assert (r.allocator is not None) == (r.kind == rungs.ALLOCATOR)
        assert r.setting


def test_an_unknown_rung_in_a_site_playbook_is_a_config_error(tmp_path):
    from runbook.errors import ConfigError

    text = (Path(load().path)).read_text().replace("id: max_split_size", "id: max_split_sise")
    (tmp_path / "oom.yaml").write_text(text)
    with pytest.raises(ConfigError, match="max_split_sise"):
        load(str(tmp_path))


def test_first_rung_of_each_acting_verdict():
    assert plan("fragmentation").rung == "expandable_segments"
    assert plan("true_oom").rung == "halve_micro_batch"
    p = plan("co_tenant")
    assert p.rung == "exclude_node" and p.exclude == ["gpu-01"] and p.drain is None
    p = plan("gpu_fault")
    assert p.rung == "drain_and_exclude" and p.drain == "gpu-01"


def test_report_only_verdicts_change_nothing():
    for v in ("not_oom", "unknown"):
        p = plan(v)
        assert not p.acts and p.patch is None and "report only" in p.why


def test_a_tried_rung_is_never_applied_again():
    p = plan("fragmentation", tried=[("101", "expandable_segments")])
    assert p.rung == "max_split_size"
    assert ("expandable_segments", "already tried on this lineage") in p.passed_over
    assert p.allocator == "max_split_size_mb:512"


def test_fragmentation_continues_into_the_true_oom_ladder():
    p = plan("fragmentation", tried=[("1", "expandable_segments"), ("2", "max_split_size")])
    assert p.rung == "halve_micro_batch"


def test_a_rung_that_cannot_apply_is_passed_over_with_why():
    p = plan("true_oom", only_sharding="weights and optimizer state alone fill the card")
    assert p.rung != "halve_micro_batch"
    assert ("halve_micro_batch", "weights and optimizer state alone fill the card") in p.passed_over


def test_more_ram_is_passed_over_when_one_refused_allocation_outgrows_it():
    # hf_accelerate.sbatch asks --mem=512G: doubled, 1 TiB.
    assert plan("host_oom").rung == "raise_mem"
    assert plan("host_oom", host_request_mib=900 * 1024.0).rung == "raise_mem"
    p = plan("host_oom", host_request_mib=128 * 1024.0**2)  # the captures' 128 TiB request
    assert p.rung == "escalate" and p.needs_human and not p.acts
    (rung, why), *_ = p.passed_over
    assert rung == "raise_mem" and "131072.00 GiB" in why and "1024.00 GiB" in why
    # --mem the script does not state (the sbatch command line's): nothing to compare, no guess.
    bare = HF.replace("#SBATCH --mem=512G\n", "")
    raise_mem = rungs.REGISTRY["raise_mem"]
    assert raise_mem.applies(rungs.Situation(bare, host_request_mib=128 * 1024.0**2)) is None


def test_job_mem_reads_slurm_units_and_runbook_templates():
    from runbook.jobfiles.bash import job_mem_mib

    assert job_mem_mib("#!/bin/bash\n#SBATCH --mem=64G\n") == 64 * 1024
    assert job_mem_mib("#!/bin/bash\n#SBATCH --mem=4000\n") == 4000  # Slurm's default unit: MB
    assert job_mem_mib("#!/bin/bash\n#SBATCH --mem=2T\n") == 2 * 1024**2
    assert job_mem_mib("#!/bin/bash\nsrun python train.py\n") is None
    assert job_mem_mib("#SBATCH --mem=" + "9" * 5000 + "\n") is None  # noise, not a size
    from runbook.jobfiles.templates import render

    variables = {"nodes": 1, "ranks_per_node": 2, "micro_batch": 8, "grad_accum": 2}
    variables.update(workdir="/scratch/run", alloc_conf="")
    rendered = render(str(DATA / "train.sbatch.j2"), {**variables, "mem_mib": 4096})
    assert job_mem_mib(rendered) == 4096


def test_human_rung_stops_and_says_so():
    tried = [("1", "halve_micro_batch"), ("2", "activation_checkpointing"), ("3", "raise_sharding")]
    p = plan("true_oom", tried=tried)
    assert p.needs_human and p.rung == "sequence_length" and not p.acts


def test_node_rungs_need_the_node():
    p = plan("co_tenant", node=None)
    assert ("exclude_node", "the failing node is not known") in p.passed_over
    assert not p.acts


def test_thin_pool_adds_the_allocator_to_the_first_true_oom_rung():
    p = plan("true_oom", with_allocator=True)
    assert p.rung == "halve_micro_batch" and p.allocator == rungs.EXPANDABLE
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in p.patch.new
    assert any("allocator" in c for c in p.patch.changes)
    assert any("micro" in c or "batch" in c for c in p.patch.changes)
    # verify then checks the setting the rerun ran with
    assert expected_allocator({"rung": p.rung, "allocator": p.allocator}) == rungs.EXPANDABLE


def test_without_a_thin_pool_a_script_rung_sets_no_allocator():
    p = plan("true_oom")
    assert p.allocator is None and "ALLOC_CONF" not in p.patch.diff()
    assert expected_allocator({"rung": "halve_micro_batch"}) is None
    assert expected_allocator({"rung": "max_split_size"}) == "max_split_size_mb:512"


def test_next_step_names_the_exact_setting():
    n = walk.next_step("fragmentation", LADDER)
    assert n["rung"] == "expandable_segments"
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in n["setting"]
    assert n["then"][:2] == ["max_split_size", "halve_micro_batch"]
    n = walk.next_step("true_oom", LADDER, with_allocator=True)
    assert n["rung"] == "halve_micro_batch" and "expandable_segments:True" in n["setting"]
    assert walk.next_step("unknown", LADDER) is None


# -- shrink_world: fewer nodes, the same global batch (issue 20) ---------------------------------
def shrink(script=HF, nodes=2, capacity=1, tried=()):
    return plan("gpu_fault", script, tried=tried, nodes=nodes, capacity=capacity)


def test_with_no_node_to_replace_the_faulty_one_the_job_shrinks_and_keeps_its_global_batch():
    p = shrink(tried=())
    assert ("drain_and_exclude", p.passed_over[0][1]) == p.passed_over[0]
    assert "would wait for a node that will not come" in p.passed_over[0][1]
    assert p.rung == "shrink_world" and p.world == (2, 1)
    assert p.drain == "gpu-01" and p.exclude == ["gpu-01"]
    new = p.patch.new
    # accelerate's own world follows: 16 processes on 2 machines -> 8 on 1; accumulation x 2
    assert "--gradient_accumulation_steps 8" in new
    assert "--num_machines 1" in new and "--num_processes 8" in new
    assert any("unchanged" in c for c in p.patch.checks)


def test_with_a_spare_node_the_job_keeps_its_size():
    p = shrink(capacity=2)
    assert p.rung == "drain_and_exclude" and p.world is None


def test_unknown_capacity_never_shrinks_a_job():
    p = shrink(capacity=None)
    assert p.rung == "drain_and_exclude"
    p2 = shrink(capacity=None, tried=[("40", "drain_and_exclude")])
    assert p2.needs_human  # escalate: shrinking on a guess is not an option
    assert any("not known" in why for r, why in p2.passed_over if r == "shrink_world")


def test_accumulation_that_does_not_divide_stops_with_the_reason():
    script = HF.replace("--gradient_accumulation_steps 4", "--gradient_accumulation_steps 1")
    p = shrink(script=script, nodes=3, capacity=2)
    assert p.needs_human and p.rung == "escalate"
    why = dict(p.passed_over)["shrink_world"]
    assert "not a whole number" in why


def test_a_template_job_gets_its_nodes_and_accumulation_from_the_variables():
    from runbook.jobfiles.templates import render

    template = str(DATA / "train.sbatch.j2")
    variables = {
        "nodes": 3,
        "ranks_per_node": 2,
        "micro_batch": 8,
        "grad_accum": 2,
        "workdir": "/scratch/run",
        "alloc_conf": "",
    }
    script = render(template, variables)
    p = shrink(script=script, nodes=3, capacity=2)
    assert p.rung == "shrink_world" and p.patch.variables["grad_accum"] == 3
    assert p.patch.variables["nodes"] == 2


def test_resources_follow_the_smaller_world_and_the_readback_expects_it():
    from types import SimpleNamespace

    from runbook.planning import resources

    job = SimpleNamespace(num_nodes=3, num_tasks=6, tres="cpu=6,gres/gpu=6")
    assert resources.resized(job, 3, 2) == ["--nodes=2", "--ntasks=4"]
    new = SimpleNamespace(num_nodes=2, num_tasks=4, tres="cpu=4,gres/gpu=4")
    assert resources.mismatches(job, new, "shrink_world", (3, 2)) == []
    assert resources.mismatches(job, new, "unchanged") != []  # not asked for: a mismatch


def test_usable_node_states():
    from runbook.slurm.client import usable_state

    assert all(usable_state(s) for s in ("idle", "allocated", "mixed", "completing"))
    assert not any(
        usable_state(s) for s in ("drained", "draining", "down", "idle*", "down*", "maint", "")
    )


def test_the_plan_takes_the_refused_request_from_the_diagnosis():
    """From a real capture (Lightning on the CPU) to the number the ladder compares."""
    import json

    from runbook.diagnosis import Evidence, classify
    from runbook.evidence.launcher_log import scan
    from runbook.planning.plan import host_request_mib

    captured = Path(__file__).resolve().parents[1] / "data" / "corpus" / "captured_lightning.jsonl"
    recs = [json.loads(ln) for ln in captured.read_text(encoding="utf-8").splitlines() if ln]
    by = {r["id"]: r["text"] for r in recs}
    d = classify(
        Evidence(launch=scan(by["own-launch-lightning-hold-2-alloc-rank1"])), load().thresholds
    )
    assert d.verdict == "host_oom" and host_request_mib(d) == 2**47 / 2**20
    # A SIGKILL with no traceback (the OOM killer's signature) refused nothing: --mem is the rung.
    d = classify(
        Evidence(launch=scan(by["own-launch-lightning-hold-4-kill-rank2"])), load().thresholds
    )
    assert d.verdict == "host_oom" and host_request_mib(d) is None


# -- the cause changes the plan (docs/design.md §3.1) -------------------------------------------------
def _cause(name):
    from runbook import cause

    return cause.Cause(name, [f"{name} for the test"])


EVAL_HF = HF.replace(
    "--per_device_train_batch_size", "--per_device_eval_batch_size 16 --per_device_train_batch_size"
)


def test_an_evaluation_oom_halves_the_evaluation_batch_only():
    p = plan("true_oom", script=EVAL_HF, cause=_cause("eval_batch"))
    assert p.rung == "halve_eval_batch" and not p.needs_human
    assert "--per_device_eval_batch_size 8" in p.patch.new
    assert p.patch.new.count("--per_device_train_batch_size") == 1
    assert "--per_device_train_batch_size 8" in p.patch.new
    assert "--gradient_accumulation_steps 4" in p.patch.new


def test_an_evaluation_oom_without_an_eval_knob_goes_to_a_person_not_the_micro_batch():
    p = plan("true_oom", cause=_cause("eval_batch"))
    assert p.needs_human and p.rung is None
    assert p.passed_over[0][0] == "halve_eval_batch"
    again = plan(
        "true_oom", script=EVAL_HF, cause=_cause("eval_batch"), tried=[("1", "halve_eval_batch")]
    )
    assert again.needs_human and "already halved the evaluation batch" in again.why


def _kept_predictions():
    from runbook import cause

    return cause.Cause("eval_predictions", ["predictions kept on the GPU"])


def test_an_evaluation_that_keeps_its_predictions_sets_eval_accumulation_not_its_batch():
    """HF Trainer keeping every batch's logits on the GPU (a real H200:
    tests/data/gpu/hf_eval_accumulation.log): halving the evaluation batch keeps as much in
    all; eval_accumulation_steps=1 moves them to the CPU (and ran there: ..._1.log)."""
    p = plan("true_oom", script=EVAL_HF, cause=_kept_predictions())
    assert p.rung == "eval_accumulation" and not p.needs_human
    assert "--per_device_eval_batch_size 16 --eval_accumulation_steps 1 " in p.patch.new
    assert p.patch.new.replace(" --eval_accumulation_steps 1", "") == EVAL_HF
    # A value above 1 is lowered; at 1 already, a person decides (with what to do by hand).
    lowered = plan(
        "true_oom", script=EVAL_HF + " --eval_accumulation_steps 20", cause=_kept_predictions()
    )
    assert lowered.patch.new.endswith("--eval_accumulation_steps 1")
    at_one = plan(
        "true_oom", script=EVAL_HF + " --eval_accumulation_steps=1", cause=_kept_predictions()
    )
    assert at_one.needs_human and "already 1" in at_one.why
    assert at_one.human_action.startswith("set eval_accumulation_steps=1 where the job builds")


def test_kept_predictions_in_a_script_with_no_hf_trainer_go_to_a_person():
    megatron = "#!/bin/bash\ntorchrun pretrain_gpt.py --micro-batch-size 4 --global-batch-size 64\n"
    p = plan("true_oom", script=megatron, cause=_kept_predictions())
    assert p.needs_human and p.patch is None
    assert p.passed_over[0][0] == "eval_accumulation" and "no HF Trainer batch flag" in p.why
    again = plan(
        "true_oom", script=EVAL_HF, cause=_kept_predictions(), tried=[("1", "eval_accumulation")]
    )
    assert again.needs_human and "already set eval_accumulation_steps to 1" in again.why


@pytest.mark.parametrize("name", ["leak", "checkpoint_map_location", "eval_no_grad"])
def test_causes_no_batch_rung_can_help_stop_for_a_person(name):
    p = plan("true_oom", cause=_cause(name))
    assert p.needs_human and p.patch is None and name in p.why


def test_optimizer_state_passes_over_the_activation_rungs():
    p = plan("true_oom", cause=_cause("optimizer_state"))
    skipped = [r for r, _ in p.passed_over]
    assert "halve_micro_batch" in skipped and "activation_checkpointing" in skipped
    assert p.rung != "halve_micro_batch"


def test_without_a_cause_the_ladder_is_unchanged():
    assert plan("true_oom").rung == "halve_micro_batch"


def test_a_cause_s_first_rungs_come_before_its_verdict_s_ladder_and_its_pass_over_holds():
    from runbook.playbook import Preference

    prefers = {"optimizer_state": Preference(first=("raise_mem",), pass_over="shrinks_activations")}
    c = _cause("optimizer_state")
    p = plan("true_oom", cause=c, causes=prefers)
    assert p.rung == "raise_mem" and p.passed_over == []
    again = plan("true_oom", cause=c, causes=prefers, tried=[("1", "raise_mem")])
    assert [r for r, _ in again.passed_over] == [
        "raise_mem",
        "halve_micro_batch",
        "activation_checkpointing",
        "raise_sharding",  # the script has no sharding knob
    ]
    assert again.rung == "sequence_length" and again.needs_human
    step = walk.next_step_for_cause(c, "true_oom", LADDER, prefers)
    assert step["rung"] == "raise_mem" and step["then"][0] == "raise_sharding"


def test_the_partition_is_asked_only_by_a_rung_that_places_the_job():
    """capacity as a call (collect.capacity_later): a script rung never makes it; the node and
    shrink rungs make it, and decide as they do with the number."""
    asked: list = []

    def capacity():
        asked.append(1)
        return 1

    assert plan("fragmentation", HF, capacity=capacity).rung == "expandable_segments"
    assert asked == []
    p = shrink(capacity=capacity)
    assert p.rung == "shrink_world" and p.world == (2, 1) and asked
