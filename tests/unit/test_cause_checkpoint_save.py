"""The checkpoint_save cause: an OOM inside saving a checkpoint is no batch's, so no batch rung
is taken. Data in (real traceback excerpts that run out in a save, tests/data/phase/frames.py),
the cause and the plan out."""

from __future__ import annotations

import pytest

from runbook import cause as causes
from runbook.evidence import phase
from runbook.planning import ladder, walk
from runbook.playbook import load
from runbook.site import SiteConfig
from tests.data.phase.frames import FRAME_RECORDS

BOOK = load()
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
HF = "#!/bin/bash\ntorchrun train.py --per_device_train_batch_size 8 --gradient_accumulation_steps 2\n"


def saving(record_id: str):
    rec = next(r for r in FRAME_RECORDS if r["id"] == record_id)
    lines = [*rec["text"].splitlines(), OOM]
    return phase.phase_of(lines, len(lines) - 1)


@pytest.mark.parametrize("record_id", ["frames-014", "frames-015", "frames-009"])
def test_an_oom_inside_a_save_is_the_save_s_not_the_batch_s(record_id):
    """jodie#6 (save_model -> torch.save after an epoch), Chinese-Vicuna#147 ('cuda out of
    memory in saving steps', state_dict in rich's box), apex#589 (state_dict before torch.save)."""
    p = saving(record_id)
    assert p.where == "checkpoint_save"
    c = causes.cause_of(causes.Facts(verdict="true_oom", phase=p))
    assert c.name == "checkpoint_save" and "gather it on the CPU" in c.reasons[0]
    plan = ladder.plan(
        "true_oom",
        BOOK.ladder,
        causes=BOOK.causes,
        script=HF,
        knobs=SiteConfig().knobs,
        tried=[],
        node="gpu-01",
        cause=c,
    )
    assert plan.needs_human and plan.rung is None and plan.patch is None
    assert plan.why.startswith("cause checkpoint_save: the OOM is inside saving a checkpoint")
    step = walk.next_step_for_cause(c, "true_oom", BOOK.ladder, BOOK.causes)
    assert step["for_a_person"] and step["rung"] == "escalate"


def test_a_save_on_a_card_another_process_fills_keeps_its_own_verdict_s_ladder():
    c = causes.cause_of(causes.Facts(verdict="co_tenant", phase=saving("frames-014")))
    assert c.name == "co_tenant"
    forward = phase.Phase(where="forward", when="first_step")
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=forward)).name != (
        "checkpoint_save"
    )
