"""The fitted micro-batch (docs/design.md §3.2, issue 30), data in, data out. The modelled training job
(examples/train_oom/train.py) needs param + 2 x m x per-sample activations at micro-batch m (its
OOM message: allocated = param + activations, request = activations), so its fit can be checked
against the model's own numbers, not against the code under test."""

from __future__ import annotations

import pytest

from runbook.planning.fit import fit

CARD = 81559.0  # the modelled H100 80GB


def modelled(m: int, param: float = 20000.0, per_sample: float = 2000.0, seq: float = 2.5):
    """The modelled job's OOM numbers at micro-batch m (as train.py prints them)."""
    act = m * per_sample * seq
    return {"allocated_mib": param + act, "request_mib": act, "card_mib": CARD}


def true_peak(m: int, param: float = 20000.0, per_sample: float = 2000.0, seq: float = 2.5):
    return param + 2 * m * per_sample * seq


@pytest.mark.parametrize(
    ("m", "accum", "param", "seq", "want"),
    [
        (8, 2, 20000.0, 2.5, 4),  # halving is the largest that fits (8 x 2 = 4 x 4)
        (8, 3, 20000.0, 2.0, 6),  # 3/4 of m, accumulation 3 -> 4: 8 x 3 = 6 x 4
        (16, 1, 20000.0, 2.5, 4),  # a quarter: 8 is still predicted over the card
        (8, 2, 70000.0, 2.5, None),  # the fixed part alone nearly fills the card
    ],
)
def test_the_largest_micro_batch_that_fits_with_the_fixed_cost_known(m, accum, param, seq, want):
    f = fit(
        micro_batch=m, fixed_training_mib=param, grad_accum=accum, **modelled(m, param, seq=seq)
    )
    # What the model itself says: the largest exact micro-batch under the card less 10%.
    exact = [c for c in range(m - 1, 0, -1) if (m * accum) % c == 0]
    fits = [c for c in exact if true_peak(c, param, seq=seq) <= CARD * 0.9]
    assert f.known and f.micro_batch == (fits[0] if fits else None) == want, f.reasons
    if want:
        chosen = next(c for c in f.candidates if c.micro_batch == want)
        # Exact for the modelled job: within 5% of its own peak, and the global batch kept.
        assert chosen.peak_mib[1] == pytest.approx(true_peak(want, param, seq=seq), rel=0.05)
        assert chosen.grad_accum * want == m * accum
    else:
        assert "fixed part alone" in f.reasons[-1]


def test_without_the_parameter_count_the_fit_is_a_range_and_uses_its_pessimistic_end():
    f = fit(micro_batch=8, grad_accum=2, **modelled(8))
    assert not f.known and f.fixed_mib == (0.0, modelled(8)["allocated_mib"])
    for c in f.candidates:
        assert c.peak_mib[0] <= c.peak_mib[1]
        assert c.fits == (c.peak_mib[1] <= CARD * 0.9)


def test_non_pytorch_memory_counts_as_fixed():
    f = fit(
        micro_batch=4,
        allocated_mib=60000.0,
        request_mib=8000.0,
        card_mib=CARD,
        reserved_mib=62000.0,
        process_mib=63000.0,  # 1000 MiB outside PyTorch: CUDA context, NCCL
        fixed_training_mib=40000.0,
        grad_accum=1,
    )
    assert f.needed_mib == 69000.0 and f.fixed_mib == (41000.0, 41000.0)
    two = next(c for c in f.candidates if c.micro_batch == 2)
    assert two.peak_mib[1] == pytest.approx(41000.0 + 2 * (69000.0 - 41000.0) / 4)


def test_only_divisors_keep_the_batch_exact_without_accumulation():
    f = fit(micro_batch=6, fixed_training_mib=20000.0, **modelled(6))
    assert [c.micro_batch for c in f.candidates] == [3, 2, 1]
    assert all(c.grad_accum is None for c in f.candidates)


@pytest.mark.parametrize(
    "missing", [{"allocated_mib": None}, {"request_mib": None}, {"card_mib": None}]
)
def test_no_fit_without_the_numbers(missing):
    assert fit(micro_batch=8, **{**modelled(8), **missing}) is None
    assert fit(micro_batch=0, **modelled(8)) is None


FITTED_SCRIPT = """#!/bin/bash
#SBATCH -N 1
srun python train.py --micro-batch-size 8 --gradient-accumulation-steps 3
"""


def _true_oom(seq: float, fixed: float | None):
    from runbook.diagnosis import Diagnosis, Evidence
    from runbook.evidence.oom_message import OomMessage

    n = modelled(8, seq=seq)
    oom = OomMessage(
        format="new",
        family="test",
        device="CUDA",
        text="",
        line=0,
        tried_mib=n["request_mib"],
        total_mib=CARD,
        allocated_by_pytorch_mib=n["allocated_mib"],
    )
    dump = {"fixed_training_mib": fixed} if fixed is not None else None
    return Diagnosis("true_oom", oom=oom, evidence=Evidence(dump=dump))


def _plan(diagnosis, run=None):
    from types import SimpleNamespace

    from runbook.evidence.collect import CheckpointEvidence, LineageEvidence
    from runbook.planning.plan import make_plan
    from runbook.playbook import load
    from runbook.site import SiteConfig

    job = SimpleNamespace(job_id="9", work_dir="", excluded=[], resources={}, num_nodes=1)
    return make_plan(
        diagnosis,
        load(),
        SiteConfig(),
        job=job,
        script=FITTED_SCRIPT,
        run=run or LineageEvidence(),
        checkpoints=CheckpointEvidence(),
        node="gpu-01",
        failed_step=None,
        own_env={},
    )


def test_the_plan_sets_the_fitted_micro_batch_and_keeps_the_global_batch():
    p = _plan(_true_oom(seq=2.0, fixed=20000.0))
    assert p.rung == "halve_micro_batch" and p.fit.micro_batch == 6
    assert "--micro-batch-size 6 --gradient-accumulation-steps 4" in p.patch.new
    assert any("8 x 3 = 6 x 4" in c for c in p.patch.checks), p.patch.checks


def test_with_nothing_predicted_to_fit_the_batch_rung_is_passed_over_for_the_next():
    p = _plan(_true_oom(seq=2.5, fixed=70000.0))
    assert p.rung != "halve_micro_batch"
    assert ("halve_micro_batch", p.fit.reasons[-1]) in p.passed_over


def test_without_the_parameter_count_the_rung_halves_and_the_fit_is_shown_as_a_range():
    p = _plan(_true_oom(seq=2.0, fixed=None))
    assert p.rung == "halve_micro_batch" and not p.fit.known
    assert "--micro-batch-size 4 --gradient-accumulation-steps 6" in p.patch.new


def test_verify_records_prediction_against_the_rerun_and_stats_count_under_predictions():
    from types import SimpleNamespace

    from runbook.evidence.launcher_log import LaunchReport
    from runbook.report.cost import aggregate
    from runbook.site import LogsSection
    from runbook.verify import judge

    plan = {
        "rung": "halve_micro_batch",
        "failed_step": 6,
        "fit": {"micro_batch": 2, "predicted_peak_mib": 52600.0, "card_mib": CARD},
    }
    rerun = SimpleNamespace(job_id="9", state="COMPLETED", submit=None, start=None)
    peak = SimpleNamespace(
        kind="peak", rank=0, fields={"max_memory_reserved": str(50000 * 2**20), "total": "1"}
    )
    ok = judge(
        plan, rerun, LaunchReport(instrument=[peak]), ["step 10"], LogsSection().step_pattern
    )
    assert ok["fit"]["measured_peak_mib"] == 50000.0 and ok["fit"]["under_predicted"] is False
    assert ok["fit"]["error"] == pytest.approx((50000 - 52600) / 52600, abs=1e-4)
    assert ok["fit"]["measured_kind"] == "reserved" and "the reserved peak" in ok["fit"]["said"]
    # Today's peak line has the allocation's peak too: what the fit predicts is compared.
    both = SimpleNamespace(
        kind="peak",
        rank=0,
        fields={
            "max_memory_reserved": str(56000 * 2**20),
            "total": "1",
            "max_memory_allocated": str(51000 * 2**20),
        },
    )
    new = judge(
        plan, rerun, LaunchReport(instrument=[both]), ["step 10"], LogsSection().step_pattern
    )
    assert (new["fit"]["measured_peak_mib"], new["fit"]["measured_kind"]) == (51000.0, "allocated")
    assert new["fit"]["error"] == pytest.approx((51000 - 52600) / 52600, abs=1e-4)
    from runbook.evidence.launcher_log import scan

    again = scan("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    bad = judge(
        {**plan},
        SimpleNamespace(**{**vars(rerun), "state": "FAILED"}),
        again,
        ["step 3"],
        LogsSection().step_pattern,
    )
    assert bad["state"] == "failed" and bad["fit"]["under_predicted"] is True
    doc = aggregate([{"plan": plan, "verification": ok}, {"plan": plan, "verification": bad}])
    assert doc["fit"]["predictions"] == 2 and doc["fit"]["under_prediction_rate"] == 0.5
    assert doc["fit"]["by_gpu"]["80 GiB card"]["under_predictions"] == 1


def _needed(m: int, **kw) -> float:
    n = modelled(m, **kw)
    return n["allocated_mib"] + n["request_mib"]


@pytest.mark.parametrize(
    ("m1", "m2", "accum", "seq", "want"),
    [
        (8, 4, 2, 3.5, 2),  # halving under-predicted: the line through 8 and 4 says 2 fits
        (16, 8, 1, 2.5, 4),  # 16 then 8 (divisors of 16 only without accumulation)
        (8, 6, 3, 3.0, 4),  # a fitted 6 failed: the two points say 4 (8 x 3 = 4 x 6)
    ],
)
def test_two_attempts_of_the_lineage_measure_the_line_and_pick_the_largest_that_fits(
    m1, m2, accum, seq, want
):
    from runbook.planning.fit import refit

    kw = {"seq": seq}
    total = m1 * accum
    current = fit(micro_batch=m2, grad_accum=total // m2, **modelled(m2, **kw))
    assert current is not None and not current.known
    f = refit(current, (m1, _needed(m1, **kw)), outside_mib=0.0, grad_accum=total // m2)
    assert f.source == "lineage" and f.known and f.micro_batch == want, f.reasons
    assert f.fixed_mib[0] == pytest.approx(20000.0)  # the modelled weights, measured
    chosen = next(c for c in f.candidates if c.micro_batch == want)
    # Within 5% of the modelled step's peak (the message's P is the modelled need exactly).
    assert abs(chosen.peak_mib[1] - true_peak(want, seq=seq)) / true_peak(want, seq=seq) < 0.05
    assert "two attempts of the lineage" in f.reasons[0]


def test_a_rerun_that_needed_as_much_with_fewer_samples_fits_nothing_smaller():
    from runbook.planning.fit import refit

    current = fit(micro_batch=4, grad_accum=4, **modelled(4, seq=2.5))
    f = refit(current, (8, _needed(4, seq=2.5) - 100), outside_mib=0.0, grad_accum=4)
    assert f.known and f.micro_batch is None and "does not scale" in f.reasons[-1]


def test_a_parent_at_the_same_micro_batch_or_none_leaves_the_fit_as_it_was():
    from runbook.planning.fit import refit

    current = fit(micro_batch=4, grad_accum=4, **modelled(4))
    assert refit(current, None, outside_mib=0.0, grad_accum=4) is current
    assert refit(current, (4, 1.0), outside_mib=0.0, grad_accum=4) is current


def test_the_plan_takes_the_micro_batch_rung_again_only_with_a_measured_fit():
    """A rerun that halved and failed again: with the parent's need from the lineage the plan
    takes halve_micro_batch again at the measured micro-batch; without it, the rung is done and
    the next one is taken."""
    from runbook.evidence.collect import LineageEvidence

    d = _true_oom(seq=2.0, fixed=None)
    tried = [("8", "halve_micro_batch")]
    # The parent ran at 16 (FITTED_SCRIPT's 8 is this rerun's): the line through both.
    parent = (16, 2 * _needed(8, seq=2.0) - 20000.0)
    with_need = _plan(d, run=LineageEvidence(tried=tried, parent_need=parent))
    assert with_need.rung == "halve_micro_batch" and with_need.fit.source == "lineage"
    assert "again" in with_need.why and with_need.fit.micro_batch < 8
    without = _plan(d, run=LineageEvidence(tried=tried))
    assert without.rung != "halve_micro_batch"
    assert ("halve_micro_batch", "already tried on this lineage") in without.passed_over


TELEMETRY = """\
RUNBOOK_INSTRUMENT mem rank={r} step=4 allocated=32212254720 peak=64424509440 reserved=66571993088 retries=0 inactive=0
RUNBOOK_INSTRUMENT mem rank={r} step=5 allocated=32212254720 peak=64424509440 reserved=66571993088 retries=0 inactive=0
[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 3 has a total capacity of 79.65 GiB of which 10.05 GiB is free. Including non-PyTorch memory, this process has 69.60 GiB memory in use. Of the allocated memory 68.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.
"""


@pytest.mark.parametrize(
    ("series_rank", "source"), [(3, "oom_message+telemetry"), (1, "oom_message")]
)
def test_the_failing_ranks_step_boundary_series_measures_the_fixed_part(
    tmp_path, series_rank, source
):
    """runbook.instrument's per-step line before the OOM says what PyTorch held between steps
    (30 GiB): the fixed part, measured, so the fit is a point without the parameter count;
    another rank's series says nothing about the failing one. The allocator's pool is won back
    only where the plan sets the allocator (issue 30: "counted only where the verdict says
    fragmentation"): here it is not, and the pool counts as fixed."""
    import json

    from click.testing import CliRunner

    from runbook.cli import cli

    log = tmp_path / "job.log"
    log.write_text(TELEMETRY.format(r=series_rank))
    r = CliRunner().invoke(cli, ["diagnose", "--log", str(log), "--micro-batch", "8", "--json"])
    assert r.exit_code == 0, r.output
    f = json.loads(r.output)["fit"]
    assert f["source"] == source, f
    if series_rank == 3:
        assert f["range"] is False and f["micro_batch"] == 4
        # 30 GiB between steps, 614.4 MiB outside PyTorch, and the 1 GiB pool: the rerun gets
        # no allocator setting (true_oom, the pool would not have covered the request).
        assert f["fixed_mib"][0] == pytest.approx(30 * 1024 + 614.4 + 1024, abs=1)
        assert "measured" in f["reasons"][0]
        assert any("1.00 GiB reserved but unallocated is counted" in r for r in f["reasons"])
    else:
        assert f["range"] is True


@pytest.mark.parametrize(
    ("process", "reserved", "total", "free", "want"),
    [
        # PyTorch 2.x on a card of its own: total - free is the process (H100 recording:
        # 79.18 GiB, 10.18 free, 68.99 in use, 68.32 reserved), both ways agree.
        (70646.0, 69960.0, 81080.0, 10424.0, 696.0),
        # Before PyTorch 2.0 no process figure: only the card tells (Resume-NER#4, 1.96 GiB card,
        # 16.38 MiB free, 1.51 GiB reserved: 0.43 GiB held outside the pool).
        (None, 1546.24, 2007.04, 16.38, 444.42),
        # Another process on the card: outside this process, and not freed by a smaller batch.
        (20000.0, 19000.0, 81080.0, 1080.0, 61000.0),
        # A process figure past the card (the driver's unsigned wrap, own-oom-183): no figure.
        (17179869184.0 * 1024, 5391.88, 6144.0, 0.0, 752.12),
        # The card's numbers cut from the message: the process's own figure, or nothing.
        (20000.0, 19000.0, None, None, 1000.0),
        (None, 19000.0, None, 500.0, 0.0),
    ],
)
def test_memory_outside_pytorch_s_pool_is_all_the_card_held_beyond_it(
    process, reserved, total, free, want
):
    from runbook.planning.fit import outside_of

    got = outside_of(process, reserved, total_mib=total, free_mib=free)
    assert got == pytest.approx(want, abs=0.01)


FRAGMENTED = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total "
    "capacity of 79.18 GiB of which 12.19 MiB is free. Including non-PyTorch memory, this "
    "process has 79.16 GiB memory in use. Of the allocated memory 23.60 GiB is allocated by "
    "PyTorch, and 55.06 GiB is reserved by PyTorch but unallocated."
)  # the H100 recording's (tests/data/gpu), its request rounded


@pytest.mark.parametrize("kept", [True, False])
def test_the_pool_counts_as_fixed_only_where_the_rerun_keeps_it(kept):
    """A rerun without an allocator setting holds about as large a reserved-but-unallocated
    pool again; where the plan sets expandable segments it is won back (issue 30)."""
    from runbook.evidence.oom_message import parse
    from runbook.planning.fit import from_oom

    oom = parse(FRAGMENTED)
    f = from_oom(oom, micro_batch=8, fixed_training_mib=None, grad_accum=None, pool_kept=kept)
    assert f is not None
    pool = 55.06 * 1024
    assert f.outside_mib == pytest.approx(0.5 * 1024 + (pool if kept else 0.0), abs=25)
    assert any("reserved but unallocated is counted" in r for r in f.reasons) is kept


def test_a_fragmentation_verdict_s_fit_wins_the_pool_back(tmp_path):
    import json

    from click.testing import CliRunner

    from runbook.cli import cli

    log = tmp_path / "frag.log"
    log.write_text(FRAGMENTED + "\n")
    r = CliRunner().invoke(cli, ["diagnose", "--log", str(log), "--micro-batch", "8", "--json"])
    d = json.loads(r.output)
    assert d["verdict"] == "fragmentation", d["reasons"]
    assert not any("reserved but unallocated is counted" in x for x in d["fit"]["reasons"])


@pytest.mark.parametrize(
    ("kind", "want"), [("allocated", 40170 + 25866 + 2959), ("reserved", 44982 + 25866)]
)
def test_verify_adds_what_the_prediction_counted_outside_pytorch_to_the_measured_peak(kind, want):
    """The co-tenant recording's numbers (tests/data/gpu/fit-cotenant-m*.log): the prediction
    for 48 counts 25866 MiB held outside this process's pool (the co-tenant, the context) and
    the 2959 MiB pool kept; the rerun's peak line measures PyTorch's own. Compared like for like,
    the reserved peak (which holds the pool) gets the outside only."""
    from runbook.verify import fit_check

    fit = {
        "micro_batch": 48,
        "predicted_peak_mib": 69906.9,
        "outside_mib": 25866 + 2959,
        "pool_mib": 2959,
    }
    fields = {"max_memory_reserved": str(44982 * 2**20), "total": "1"}
    if kind == "allocated":
        fields["max_memory_allocated"] = str(40170 * 2**20)
    peak = type("Peak", (), {"fields": fields})()
    got = fit_check(fit, [peak], oomed_again=False)
    assert got["measured_kind"] == kind
    assert got["measured_peak_mib"] == pytest.approx(want, abs=0.5)
    assert "held outside PyTorch at the failure" in got["said"]
    assert abs(got["error"]) < 0.06


def _every_real_oom_message() -> list[dict]:
    import json
    from pathlib import Path

    from tests.conftest import corpus_records

    own = Path(__file__).resolve().parents[1] / "data" / "corpus" / "oom_messages.jsonl"
    mine = [json.loads(x) for x in own.read_text(encoding="utf-8").splitlines() if x.strip()]
    return corpus_records("oom_messages.jsonl") + mine


def test_the_fit_on_every_real_oom_message_stays_within_the_card_and_its_own_claims():
    """Every OOM message of both corpora (the shared one and tests/data/corpus), fitted at
    micro-batch 8 with accumulation 2: what it counts outside PyTorch is never negative nor more
    than the card; a smaller candidate never needs more; a candidate said to fit is under the
    limit; no message makes it raise."""
    from runbook.evidence.oom_message import parse
    from runbook.planning.fit import from_oom, outside_of_oom

    fitted = 0
    for r in _every_real_oom_message():
        oom = parse(r["text"])
        if oom is None:
            continue
        for kept in (False, True):
            f = from_oom(oom, micro_batch=8, fixed_training_mib=None, grad_accum=2, pool_kept=kept)
            if f is None:
                continue
            fitted += 1
            outside = outside_of_oom(oom)
            assert 0.0 <= outside <= f.card_mib + 1e-6 or oom.limit_mib, (r["id"], outside)
            peaks = [c.peak_mib[1] for c in f.candidates]
            assert peaks == sorted(peaks, reverse=True), r["id"]
            assert all(c.peak_mib[0] <= c.peak_mib[1] + 1e-6 for c in f.candidates), r["id"]
            assert all(c.peak_mib[1] <= f.limit_mib for c in f.candidates if c.fits), r["id"]
    assert fitted > 200


def _frames(*funcs: str):
    from runbook.evidence.phase import Frame

    return [Frame(file="train.py", line=i + 1, func=f) for i, f in enumerate(funcs)]


@pytest.mark.parametrize(
    "where, funcs, want",
    [
        ("backward", ("train", "backward"), 1.0),
        ("optimizer_step", ("train", "step", "_init_group"), 1.0),
        (None, (), 1.0),
        ("forward", ("train", "forward", "cross_entropy"), 1.25),
        ("forward", ("train", "ForCausalLMLoss", "fixed_cross_entropy"), 1.25),
        ("forward", ("compute_loss", "forward", "gelu"), 2.0),
        ("forward", ("train", "forward"), 2.0),
    ],
)
def test_a_forward_oom_counts_its_per_sample_memory_as_a_lower_bound(where, funcs, want):
    from runbook.planning.fit import step_factor

    assert step_factor(where, _frames(*funcs)) == want


def test_the_step_factor_scales_the_pessimistic_end_and_the_choice_follows_it():
    # 40 GiB fixed, 80 GiB needed at 8: 5 GiB a sample as the OOM showed it.
    args = dict(micro_batch=8, allocated_mib=80 * 1024, request_mib=0, card_mib=100 * 1024)
    once = fit(**args, fixed_training_mib=40 * 1024, outside_mib=0)
    twice = fit(**args, fixed_training_mib=40 * 1024, outside_mib=0, factor=2.0)
    assert once.micro_batch == 4 and once.contract()["step_factor"] == 1.0
    assert twice.micro_batch == 4 and twice.contract()["candidates"][0]["micro_batch"] == 4
    assert twice.candidates[0].peak_mib == (60 * 1024, 80 * 1024)  # optimistic, pessimistic
    tight = fit(**args, fixed_training_mib=50 * 1024, outside_mib=0, factor=2.0)
    # 3.75 GiB a sample counted twice: 4 would need 80 GiB, under 90; 6 does not divide 8.
    assert tight.micro_batch == 4 and tight.candidates[0].peak_mib[1] == 80 * 1024
