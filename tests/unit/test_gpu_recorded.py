"""Outputs recorded on a real H100 (tests/data/gpu, SOURCES.md says how), replayed through the
real path: `runbook diagnose` as an on-call runs it, the node probe's section parser, the
nvidia-smi parser, and the fit against the peaks the GPU measured (bench/gpu_fit.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from runbook.evidence import nvsmi
from runbook.evidence.gpu_health import health_from_sections, split_sections

GPU = Path(__file__).resolve().parents[1] / "data" / "gpu"
REPO = GPU.parents[2]


def diagnose(*args: str) -> dict:
    r = CliRunner().invoke(cli, ["diagnose", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_real_h100_nvidia_smi_q_reads_as_healthy_with_every_counter_read():
    health = nvsmi.parse_memory_health((GPU / "nvidia-smi-q.log").read_text())
    assert health.row_remap() == {
        "pending": False,
        "failure": False,
        "correctable": 0,
        "uncorrectable": 0,
    }
    assert health.ecc() == {"volatile_uncorrectable": 0, "aggregate_uncorrectable": 0}


@pytest.mark.parametrize("mode", ["query", "table"])
def test_real_h100_probe_names_the_co_tenant_and_says_what_it_could_not_read(mode):
    """The probe script's own output on the H100 while pid 650 held 24 GiB (no Slurm there)."""
    h = health_from_sections("vm", split_sections((GPU / f"probe-{mode}.log").read_text()))
    assert [(a.pid, a.used_mib) for a in h.apps or []] == [(650, 25094.0)]
    assert h.owners[650].user == "root" and h.owners[650].job is None
    assert h.job_pids is None and "exited 127" in h.unavailable["job_pids"]
    assert h.kernel is not None and h.kernel.events == [] and h.kernel.driver == "580.159.04"
    assert h.memory is not None and h.memory.row_remap()["pending"] is False
    # Nothing says pid 650 is the job's: it is foreign, reported, never killed.
    assert [a.pid for a in h.foreign_apps("4242")] == [650]


# (log, verdict, cause, where): what an on-call engineer would say of each real failure.
CASES = [
    ("oom_plain", "true_oom", "unknown", "unknown"),
    ("oom_after_some", "true_oom", "unknown", "unknown"),
    ("oom_expandable", "true_oom", "unknown", "unknown"),
    ("oom_cotenant", "co_tenant", "co_tenant", "unknown"),
    ("oom_fragmentation", "fragmentation", "fragmentation", "unknown"),
    ("oom_fraction", "true_oom", "unknown", "unknown"),
    ("oom_async", "true_oom", "unknown", "unknown"),
    ("oom_cublas", "unknown", "unknown", "unknown"),
    ("phase_optimizer_state", "true_oom", "optimizer_state", "optimizer_step"),
    ("phase_load", "true_oom", "checkpoint_map_location", "checkpoint_load"),
    ("phase_leak", "true_oom", "leak", "backward"),
    ("fit-m96", "true_oom", "static_sizing", "backward"),
    ("fit-m112", "true_oom", "unknown", "backward"),
    ("fit-m128", "true_oom", "unknown", "forward"),
    ("phase_eval_graph", "not_oom", "unknown", None),
    # The evaluation outside no_grad, from the log alone: its own batch is what the log shows
    # (with the source, below: eval_no_grad).
    ("phase_eval_nograd", "true_oom", "eval_batch", "eval"),
    # Lightning: backward runs inside optimizer.step(closure); the leak is not in the log.
    ("lightning_stats", "true_oom", "unknown", "backward"),
    ("lightning_forward", "true_oom", "unknown", "forward"),  # the forward, in the closure too
    ("push_oom", "true_oom", "static_sizing", "unknown"),  # torch.randn's own ask, at step 1
    # 40 steps of 128..1024 tokens, then one batch of 65536: the longest batch.
    ("trend_varlen", "true_oom", "longest_batch", "forward"),
    # HF's evaluation banner, then the OOM in cross_entropy under the script's own function.
    ("phase_eval_batch", "true_oom", "eval_batch", "eval"),
]


@pytest.mark.parametrize(("log", "verdict", "cause", "where"), CASES, ids=[c[0] for c in CASES])
def test_real_h100_failure_through_diagnose(log, verdict, cause, where):
    d = diagnose("--log", str(GPU / f"{log}.log"))
    assert (d["verdict"], d["cause"]) == (verdict, cause)
    assert (d["phase"] or {}).get("where") == where


def test_real_h100_memory_fraction_is_the_cap_not_the_card():
    """ "19.79 GiB allowed" with 68.66 GiB free: the shortfall is against the cap, and the
    reason says the card had room (raise the fraction)."""
    why = diagnose("--log", str(GPU / "oom_fraction.log"))["reasons"][0]
    assert "capped at 19.79 GiB" in why and "The card itself had 68.66 GiB free" in why
    assert "the shortfall is 5.21 GiB (request - room under the memory fraction)" in why
    assert "outside this process" not in why  # 10 MiB of rounding is nobody's memory


def test_real_h100_cuda_malloc_async_never_claims_others_hold_its_pool():
    d = diagnose("--log", str(GPU / "oom_async.log"))
    why = d["reasons"][0]
    assert "in use outside this process" not in why
    assert "29.18 GiB of the card is neither allocated nor free" in why
    assert "co_tenant" not in d["alternatives"]  # 29.18 GiB does not cover the 30.60 GiB asked


def test_real_h100_leak_series_is_a_leak_from_runbook_instruments_lines():
    d = diagnose("--log", str(GPU / "phase_leak.log"))
    assert d["trend"]["kind"] == "leak" and d["trend"]["series"] == "instrument"
    assert d["phase"]["step"] == 285 and d["next_step"]["for_a_person"] is True


def test_real_h100_fit_against_measured_peaks():
    """bench/gpu_fit.py on the recordings: micro-batches 1-80 ran, 96/112/128 ran out. The fit
    never chooses one that ran out (no under-prediction), never goes below half of the largest
    exact micro-batch that ran, and with the fixed part known (the step line's, or the
    parameter count) its prediction of the chosen micro-batch's measured peak is within 20%."""
    rows = _gpu_fit().figures(GPU)
    assert {(r["from_micro_batch"], r["params_given"]) for r in rows} == {
        (m, p) for m in (96, 112, 128) for p in (False, True)
    }
    for r in rows:
        assert r["chosen"] and not r["under_predicted"], r
        assert 2 * r["chosen"] >= r["largest_exact_that_ran"], r
        if not r["range"]:
            assert abs(r["error"]) <= 0.20, r
    by = {(r["from_micro_batch"], r["params_given"]): r for r in rows}
    assert by[(96, False)]["source"] == "oom_message+telemetry"
    assert by[(112, True)]["chosen"] == 56 and abs(by[(112, True)]["error"]) < 0.02


def _gpu_fit():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gpu_fit
    finally:
        sys.path.remove(str(REPO / "bench"))
    return gpu_fit


def test_real_h200_fit_from_ooms_past_the_largest_that_ran_across_four_families():
    """bench/gpu_families.py on a real H200: GPT-2 medium, a 1.1 B Llama, ResNet-50 and ViT-B/16,
    each run at 1.3x and at 2x the largest micro-batch that ran two steps in a fresh process,
    ran out in the forward pass, where the card filled part way through the step: taken as the
    step's need, those numbers put the card's edge at the failing micro-batch itself. From each,
    with and without an accumulation to keep, the fit takes the halving (the largest candidate
    at most half the failing micro-batch), which never passes the largest that ran. Counted as
    the step's need, as before, the line chose 72 of GPT-2's candidates from 96 with an
    accumulation of 6: the same OOM again."""
    rows = _gpu_fit().families(GPU / "families")
    assert {(r["family"], r["overshoot"], r["grad_accum"]) for r in rows} == {
        (f, o, a)
        for f, over in {
            "gpt2_medium": (1.29, 2.0),
            "llama_1b": (1.32, 2.0),
            "resnet50": (1.3, 2.0),
            "vit_b16": (1.3, 2.0),
        }.items()
        for o in over
        for a in (None, 6)
    }
    truth = {"gpt2_medium": (48, 49), "llama_1b": (22, 23), "resnet50": (3291, 3317)}
    for r in rows:
        assert r["where"] == "forward" and r["step_factor"] == 2.0, r
        assert r["chosen"] == r["halving"] and r["chosen"] <= r["largest_ran"], r
        assert r["line_fits_card_unscaled"] >= 0.95 * r["from_micro_batch"], r
        if r["family"] in truth:
            assert (r["largest_ran"], r["smallest_out"]) == truth[r["family"]]
    log = GPU / "families" / "fit-gpt2_medium-m96.log"
    once = diagnose("--log", str(log), "--micro-batch", "96", "--grad-accum", "6")["fit"]
    line = (once["needed_mib"] - once["fixed_mib"][1]) / 96
    counted_once = max(
        c["micro_batch"]
        for c in once["candidates"]
        if once["fixed_mib"][1] + c["micro_batch"] * line <= once["limit_mib"]
    )
    assert counted_once == 72 and once["micro_batch"] == 48


def test_the_fit_reads_the_parameter_count_from_runbook_instruments_start_line():
    """The recording's start line predates `params=`; the same log with the line as
    runbook.instrument prints it now (install(model=...)) gives the point fit that --params
    gives, with nothing but the log."""
    log = (GPU / "fit-m128.log").read_text()
    start = log.splitlines()[0]
    assert start.startswith("RUNBOOK_INSTRUMENT start") and "params=" not in start
    now = log.replace(" allocator ", " params=216690688 allocator ", 1)
    runner = CliRunner()
    r = runner.invoke(cli, ["diagnose", "--log", "-", "--micro-batch", "128", "--json"], input=now)
    by_line = json.loads(r.output)["fit"]
    by_flag = diagnose(
        "--log", str(GPU / "fit-m128.log"), "--micro-batch", "128", "--params", "216690688"
    )["fit"]
    assert by_line["source"] == "oom_message+params" and by_line == by_flag
    assert by_line["micro_batch"] == 64


def test_a_memory_fraction_on_a_card_with_nothing_free_keeps_the_card_s_zero():
    """A variant of the H100's message: the same cap with "0 bytes is free" on the card (another
    process took the rest): the room is the card's 0, not the cap's 9.79 GiB, and the other
    process's 68.67 GiB is the call (co-tenants come first, docs/design.md §3)."""
    text = (GPU / "oom_fraction.log").read_text().replace("68.66 GiB is free", "0 bytes is free")
    r = CliRunner().invoke(cli, ["diagnose", "--log", "-", "--json"], input=text)
    d = json.loads(r.output)
    assert d["verdict"] == "co_tenant"
    assert (
        "the shortfall is 15.00 GiB (request - room under the memory fraction)" in d["reasons"][0]
    )


def test_real_h100_lightning_closure_is_backward_mid_run_from_its_rich_bar():
    """Lightning 2.6.6's automatic optimization: the OOM's frames run optimizer.step ->
    closure -> backward; its RichProgressBar's last line says 582 steps were done."""
    p = diagnose("--log", str(GPU / "lightning_stats.log"))["phase"]
    assert (p["where"], p["when"], p["step"]) == ("backward", "mid_run", 582)
    assert "torch/autograd" in p["evidence"][0]
    # Its TQDM bar (Lightning's other bar): the forward ran out at batch 30.
    p = diagnose("--log", str(GPU / "lightning_forward.log"))["phase"]
    assert (p["where"], p["when"], p["step"]) == ("forward", "mid_run", 30)


def test_real_h100_eval_outside_no_grad_with_the_source_is_eval_no_grad(tmp_path):
    """The job's own file (the recording script, as the job ran it) read by the static check:
    the evaluation loop's `total += model(batch)...` is in the traceback."""
    (tmp_path / "gpu_record.py").write_text((REPO / "bench" / "gpu_record.py").read_text())
    d = diagnose("--log", str(GPU / "phase_eval_nograd.log"), "--source", str(tmp_path))
    assert d["cause"] == "eval_no_grad" and d["next_step"]["for_a_person"] is True
    hit = [f for f in d["source_findings"] if f["in_traceback"]]
    assert [(f["kind"], f["text"].split("#")[0].strip()) for f in hit] == [
        ("eval_no_grad", "total += model(batch).float().mean()")
    ]
    # The leak's `running = running + loss` (no +=) is found too, in its own traceback.
    d = diagnose("--log", str(GPU / "phase_leak.log"), "--source", str(tmp_path))
    hit = [(f["kind"], f["text"]) for f in d["source_findings"] if f["in_traceback"]]
    assert hit == [
        ("keeps_graph", "running = running + loss  # the bug: the graph of every step is kept")
    ]


def test_real_h100_push_after_the_traceback_and_half_a_second_after_the_oom(tmp_path):
    """runbook.instrument on a real uncaught OOM with RUNBOOK_HOOK_URL set: one POST of the job
    id with the bearer token, after the traceback is printed; the line says what the hook
    answered; diagnose reads the log the same with or without that line."""
    log = (GPU / "push_oom.log").read_text()
    assert log.index("torch.OutOfMemoryError: CUDA out of memory") < log.index("push rank=0")
    assert "push rank=0 job=4242 reason=oom to=http://127.0.0.1:" in log
    assert "status=202 incident=recorded-4242" in log
    (req,) = json.loads((GPU / "push_requests.json").read_text())
    assert json.loads(req["body"]) == {"job_id": "4242"} and req["bearer"] is True
    dump = json.loads((GPU / "oom-dump-4242-rank0-1006.json").read_text())
    assert 0.4 < req["arrived"] - dump["time"] < 2.0  # RUNBOOK_HOOK_SETTLE_S (0.5 s), then sent
    cut = tmp_path / "without-push.log"
    cut.write_text("".join(ln for ln in log.splitlines(True) if "INSTRUMENT push" not in ln))
    assert diagnose("--log", str(cut)) == diagnose("--log", str(GPU / "push_oom.log"))


def test_real_h100_transformers_5_log_dicts_quote_their_numbers_and_still_count_as_steps():
    from runbook.evidence.progress import DEFAULT_STEP_PATTERN, known_progress

    lines = (GPU / "hf_mem_metrics.log").read_text().splitlines()
    train = [ln for ln in lines if ln.startswith("{'loss': '")]
    assert len(train) == 6
    assert all(known_progress(ln, re.compile(DEFAULT_STEP_PATTERN))[0] is True for ln in train)
    # Its memory metrics come only at the end of train() and evaluate(): a run that runs out
    # never prints them, so they are no series to read a trend from.
    evals = [ln for ln in lines if ln.startswith("{'eval_loss'")]
    assert evals and not any("mem_gpu" in ln for ln in evals)
    assert any("train_mem_gpu_peaked_delta" in ln for ln in lines[-40:])


def test_real_h100_fit_beside_a_co_tenant_counts_the_other_process_as_fixed():
    """The fit's model ran out at micro-batch 64 while another process held 24.51 GiB of the
    card (alone, 64 ran). The fit counts everything the card held outside this process's pool
    as fixed: it chooses 48 (64 x 3 = 48 x 4), which ran beside the co-tenant, and its
    prediction is within 5% of what the card held at 48's peak (its reserved peak plus what
    was outside the pool at the failure). Counting only the process's own non-PyTorch memory,
    as before, it predicted 24.5 GiB less (44.8 GiB for 69.2 GiB held)."""
    import re

    d = diagnose(
        "--log", str(GPU / "fit-cotenant-m64.log"), "--micro-batch", "64", "--grad-accum", "3"
    )
    assert d["verdict"] == "co_tenant"
    f = d["fit"]
    assert f["micro_batch"] == 48 and f["source"] == "oom_message+telemetry", f
    ran = (GPU / "fit-cotenant-m48.log").read_text()
    assert "step 2 micro_batch 48" in ran and "OutOfMemoryError" not in ran
    reserved = max(int(x) for x in re.findall(r"mem .* reserved=(\d+)", ran)) / 2**20
    oom = d["oom"]
    outside = oom["total_mib"] - oom["free_mib"] - oom["reserved_mib"]
    assert outside > 24 * 1024  # the co-tenant's 24.51 GiB and the context
    held = reserved + outside
    assert abs(f["predicted_peak_mib"] - held) / held < 0.05, (f["predicted_peak_mib"], held)


def test_real_h100_memory_fraction_fit_sizes_for_the_cap_not_the_card():
    """set_per_process_memory_fraction capped the process at 19.79 GiB of the 79.18 GiB card
    (oom_fraction.log): the fit's card is the cap plus what the process holds outside PyTorch,
    never the 71 GiB a full card would leave under the margin."""
    d = diagnose("--log", str(GPU / "oom_fraction.log"), "--micro-batch", "8")
    f = d["fit"]
    assert f["card_mib"] == pytest.approx(19.79 * 1024 + f["outside_mib"], abs=8), f
    assert any("a memory fraction caps this process at 19.79 GiB" in r for r in f["reasons"])
    assert all(c["predicted_peak_mib"] <= f["card_mib"] for c in f["candidates"] if c["fits"])


def _instrument_peaks(log: str) -> list[float]:
    """GiB: each `RUNBOOK_INSTRUMENT mem` line's peak since the line before."""
    text = (GPU / log).read_text()
    return [int(m) / 2**30 for m in re.findall(r"RUNBOOK_INSTRUMENT mem .*? peak=(\d+)", text)]


def test_real_h100_longest_batch_is_a_spike_of_the_failing_step_not_of_the_step_starts():
    """Variable-length batches: the step starts stay flat (parameters and AdamW state), each
    step's peak follows its length (4.2 to 8.9 GiB), and the batch 64 times longer runs out
    holding 74.80 GiB and asking for 4 GiB more. The step-start series alone is flat; the OOM
    against the steps' peaks is the spike, so the cause is the longest batch and the ladder
    (halving the micro-batch) stands, with the reason a person needs to cap lengths."""
    peaks = _instrument_peaks("trend_varlen.log")
    assert len(peaks) == 40 and min(peaks) > 4.1 and max(peaks) < 9.0
    d = diagnose("--log", str(GPU / "trend_varlen.log"))
    assert d["trend"]["kind"] == "spike" and d["trend"]["points"] == 40
    assert "peaked at 9113 MiB at most" in d["trend"]["why"]
    assert "held and asked for 80691 MiB (8.9x)" in d["trend"]["why"]
    assert d["phase"]["when"] == "mid_run" and d["phase"]["step"] == 41
    assert d["cause"] == "longest_batch" and d["next_step"]["rung"] == "halve_micro_batch"
    assert any("capping lengths is a person's call" in r for r in d["reasons"])


def test_real_h100_eval_batch_runs_out_and_its_half_runs():
    """The evaluation's own batch (256, under no_grad) ran out in cross_entropy after HF's
    banner; the rung runbook chooses halves that batch and leaves training alone; the same
    script at 128 (phase_eval_batch_half.log) evaluated to the end, its peak well under the
    card: the rung is one that works here."""
    d = diagnose("--log", str(GPU / "phase_eval_batch.log"))
    assert (d["phase"]["where"], d["phase"]["when"]) == ("eval", "eval_start")
    # The banner, or the script's own function (case_eval_batch), whose name says evaluation.
    said = d["phase"]["evidence"]
    assert "***** Running Evaluation *****" in said or any("in case_eval_batch" in e for e in said)
    assert d["cause"] == "eval_batch" and d["next_step"]["rung"] == "halve_eval_batch"
    half = (GPU / "phase_eval_batch_half.log").read_text()
    assert "Batch size = 128" in half and "eval_loss" in half
    assert "OutOfMemoryError" not in half
    peak = re.search(r"RUNBOOK_INSTRUMENT peak .*max_memory_allocated=(\d+)", half)
    assert peak and int(peak.group(1)) / 2**30 < 0.6 * 79.18


def test_real_hf_trainer_keeping_eval_predictions_on_the_gpu_sets_eval_accumulation():
    """transformers 5.17's Trainer on an H200 under a 20% memory fraction: evaluation keeps
    every batch's logits on the GPU (eval_accumulation_steps unset) and runs out concatenating
    them (EvalLoopContainer.add -> nested_concat -> torch.cat). The rung is eval_accumulation,
    not the evaluation's batch (a smaller batch keeps as much in all); the same run with
    eval_accumulation_steps=1 evaluated all 600 samples (hf_eval_accumulation_1.log)."""
    d = diagnose("--log", str(GPU / "hf_eval_accumulation.log"))
    assert (d["phase"]["where"], d["phase"]["when"]) == ("eval", "eval_start")
    assert d["cause"] == "eval_predictions" and d["next_step"]["rung"] == "eval_accumulation"
    assert any("keeps every batch's predictions on the GPU" in r for r in d["reasons"])
    fixed = (GPU / "hf_eval_accumulation_1.log").read_text()
    assert "eval_accumulation_steps=1" in fixed and "'eval_predictions': 600" in fixed
    assert "OutOfMemoryError" not in fixed


def test_a_resume_s_peers_named_in_the_message_are_the_job_s_own_without_the_node_s_pid_list(
    tmp_path,
):
    """The real load failure, with the lines a message carries when the job's other local ranks
    restored onto the same GPU ("Process N has X in use"), read from the log alone (the job had
    ended: no `scontrol listpids`). The verdict says what the cause says: not a co-tenant."""
    text = (GPU / "phase_load.log").read_text()
    peers = "Process 4242 has 30.00 GiB memory in use. Process 4243 has 30.00 GiB memory in use. "
    marker = "Including non-PyTorch memory, this process"
    assert marker in text
    (tmp_path / "load.log").write_text(text.replace(marker, peers + marker, 1))
    d = diagnose("--log", str(tmp_path / "load.log"))
    assert d["verdict"] != "co_tenant", d["reasons"]
    assert d["cause"] == "checkpoint_map_location"
    assert any("4242, 4243 in the message are the job's own" in r for r in d["reasons"])
    # The same lines outside a checkpoint load are a co-tenant: the reading is the traceback's.
    plain = (GPU / "oom_plain.log").read_text()
    assert marker in plain
    (tmp_path / "plain.log").write_text(plain.replace(marker, peers + marker, 1))
    assert diagnose("--log", str(tmp_path / "plain.log"))["verdict"] == "co_tenant"


def test_a_resume_s_peers_that_exited_before_the_pid_list_are_not_co_tenants(tmp_path):
    """The same real load failure, the job still running when runbook read its PIDs on the node:
    its ranks were exiting, so the list held the ranks still wedged and not the peers the
    message names, and those peers were gone when the node was probed (seen on the test cluster
    under load). Not in the list and not alive is no known owner, never a co-tenant; a named
    process alive on the node and not the job's still is one."""
    from runbook.diagnosis import classify
    from runbook.evidence.gather import gather
    from runbook.evidence.gpu_health import NodeHealth
    from runbook.evidence.launcher_log import scan
    from runbook.playbook import load

    text = (GPU / "phase_load.log").read_text()
    marker = "Including non-PyTorch memory, this process"
    peers = "Process 4242 has 30.00 GiB memory in use. Process 4243 has 30.00 GiB memory in use. "
    launch = scan(text.replace(marker, peers + marker, 1))
    thresholds = load(None).thresholds
    gone = NodeHealth(node="gpu-01", job_pids={5001, 5002}, apps=[])
    d = classify(gather(launch=launch, node_health=gone), thresholds)
    assert d.verdict != "co_tenant", d.reasons
    assert any("had exited before the node was probed" in r for r in d.reasons), d.reasons
    alive = NodeHealth(
        node="gpu-01", job_pids={5001, 5002}, apps=[nvsmi.ComputeApp(pid=4242, used_mib=30720)]
    )
    assert classify(gather(launch=launch, node_health=alive), thresholds).verdict == "co_tenant"


@pytest.mark.parametrize(
    "label",
    ["{r}: ", "[rank{r}]: ", "[default{r}]:", ""],
    ids=["srun -l", "torchrun", "torchrun --tee", "no label"],
)
def test_the_last_step_before_eight_ranks_real_tracebacks_is_still_in_the_tail(tmp_path, label):
    """A real GPT-2 OOM's traceback (transformers on an H200) printed by 8 ranks after rank 0's
    last step line, under each launcher's label: the tail runbook reads, locally and by the
    node-side script alike, still holds that step (the log's last 60 lines, as before, held
    none of it)."""
    from runbook.evidence.log_filter import (
        filter_lines,
        parse_grep_output,
        remote_grep_many_argv,
        split_locations,
    )
    from runbook.evidence.progress import training_steps
    from runbook.site import STEP_PATTERN
    from runbook.transport.local import LocalTransport

    real = (GPU / "families" / "fit-gpt2_medium-m96.log").read_text().splitlines()
    start = next(i for i, ln in enumerate(real) if ln.startswith("Traceback"))
    lines = [label.format(r=0) + "step 7 loss 2.3412"]
    for rank in range(8):
        lines += [label.format(r=rank) + ln for ln in real[start:]]
    tail = filter_lines(lines).tail
    assert training_steps(tail, STEP_PATTERN) == 7
    assert training_steps(lines[-60:], STEP_PATTERN) is None
    (tmp_path / "train-1.out").write_text("\n".join(lines) + "\n")
    r = LocalTransport().run(remote_grep_many_argv([(str(tmp_path), "train-*.out")], tail=200))
    remote = parse_grep_output(split_locations(r.stdout)[0])[str(tmp_path / "train-1.out")]
    assert remote.tail == tail


def test_real_h200_forward_fit_reads_as_a_range_in_diagnose_s_words():
    """`runbook diagnose` as a person reads it, on the real GPT-2 OOM at 62 (its forward pass):
    the halving is named, each candidate shows both ends, and 31 is never said to fit or not."""
    log = GPU / "families" / "fit-gpt2_medium-m62.log"
    r = CliRunner().invoke(cli, ["diagnose", "--log", str(log), "--micro-batch", "62"])
    assert r.exit_code == 0, r.output
    assert "micro-batch 31, the halving, from 62" in r.output
    assert "the OOM in the forward pass a lower bound" in r.output
    line = next(ln for ln in r.output.splitlines() if ln.strip().startswith("micro-batch 31 "))
    assert "predicted between" in line and line.endswith("may fit"), line
