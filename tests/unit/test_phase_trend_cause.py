"""When and where an OOM happened, the memory trend before it, and its cause (docs/design.md §3.1).

Phase: real tracebacks from public threads (tests/data/phase/records.py, each with its source),
replayed through `runbook diagnose` as a user pastes them. Trend, cause and the source check:
data in, data out."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from runbook import cause as causes
from runbook.evidence import phase, trend
from runbook.evidence.launcher_log import scan
from runbook.evidence.oom_message import log_lines, parse_all
from runbook.jobfiles.source_check import check_text
from tests.data.phase.frames import FRAME_RECORDS
from tests.data.phase.records import RECORDS

IDS = [r["id"] for r in RECORDS]


def phase_of_record(rec: dict) -> phase.Phase:
    msg = parse_all(rec["text"])[0]
    return phase.phase_of(log_lines(rec["text"]), msg.line, msg.rank)


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_real_traceback_where_and_when(rec):
    p = phase_of_record(rec)
    assert (p.where, p.when) == (rec["answer"]["where"], rec["answer"]["when"])
    if p.where != "unknown":
        assert p.evidence, "the lines used are said"


@pytest.mark.parametrize("rec", RECORDS, ids=IDS)
def test_records_are_sourced(rec):
    assert rec["source_url"].startswith("https://github.com/")
    assert rec["answer"]["where"] in phase.WHERE_KINDS
    assert rec["answer"]["when"] in phase.WHEN_KINDS
    assert rec["answer"]["cause"] in (None, *causes.CAUSES)


def test_every_frame_table_phase_is_met_by_a_real_traceback_or_said_missing():
    met = {phase_of_record(r).where for r in RECORDS}
    # No public paste with both a save's frames and the OOM message was found yet: a save is
    # met by the excerpts cut before the message (tests/data/phase/frames.py), and the gap of
    # the whole records is said here.
    assert set(phase.PRIORITY) - met == {"checkpoint_save"}
    cut = {r["answer"]["where"] for r in FRAME_RECORDS}
    assert set(phase.PRIORITY) <= met | cut and "checkpoint_save" in cut


def test_a_save_outranks_the_serialization_module_it_runs_in():
    frames = [
        phase.Frame("lib/torch/serialization.py", 260, "save", "return _with_file_like(f)"),
        phase.Frame("lib/torch/serialization.py", 185, "_with_file_like", "return body(f)"),
    ]
    assert phase.where_from_frames(frames)[0] == "checkpoint_save"
    frames = [phase.Frame("lib/torch/utils/data/_utils/pin_memory.py", 55, "pin_memory", "")]
    assert phase.where_from_frames(frames)[0] == "data"


def test_diagnose_json_carries_phase_and_cause_through_the_cli(tmp_path):
    rec = next(r for r in RECORDS if r["id"] == "phase-001")
    log = tmp_path / "slurm-1.out"
    log.write_text(rec["text"])
    out = subprocess.run(
        [sys.executable, "-m", "runbook", "diagnose", "--json", "--log", str(log)],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["phase"]["where"] == "eval"
    assert doc["cause"] == "eval_batch"
    assert doc["next_step"]["rung"] == "halve_eval_batch"
    assert doc["verdict"] == "true_oom"  # the verdict keeps its meaning


def test_a_resume_that_restores_onto_the_saved_gpu_is_checkpoint_map_location():
    rec = next(r for r in RECORDS if r["id"] == "phase-003")
    p = phase_of_record(rec)
    assert p.restored_to_saved_device
    c = causes.cause_of(causes.Facts(verdict="true_oom", phase=p))
    assert c.name == "checkpoint_map_location"


def test_the_job_s_own_ranks_loading_onto_one_gpu_are_not_a_co_tenant():
    p = phase_of_record(next(r for r in RECORDS if r["id"] == "phase-003"))
    from_message = causes.Facts(verdict="co_tenant", phase=p, co_tenant_from_message=True)
    assert causes.cause_of(from_message).name == "checkpoint_map_location"
    from_node = causes.Facts(verdict="co_tenant", phase=p, co_tenant_from_message=False)
    assert causes.cause_of(from_node).name == "co_tenant"


def test_optimizer_step_at_the_start_skips_the_activation_rungs():
    p = phase_of_record(next(r for r in RECORDS if r["id"] == "phase-002"))
    c = causes.cause_of(causes.Facts(verdict="true_oom", phase=p))
    assert c.name == "optimizer_state"
    later = phase.Phase(where="optimizer_step", when="mid_run", step=5000)
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=later)).name == "unknown"


def test_a_rerun_that_halved_and_ran_out_later_is_a_leak_the_same_step_is_not():
    p = phase.Phase(where="forward", when="mid_run", step=900)
    halved = ("halve_micro_batch",)
    later = causes.Facts(verdict="true_oom", phase=p, tried=halved, parent_failed_step=600)
    assert causes.cause_of(later).name == "leak"
    # The same long batch again at the same step: the next rung, not a leak.
    same = causes.Facts(verdict="true_oom", phase=p, tried=halved, parent_failed_step=900)
    assert causes.cause_of(same).name == "unknown"
    unknown = causes.Facts(verdict="true_oom", phase=p, tried=halved)
    assert causes.cause_of(unknown).name == "unknown"
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=p)).name == "unknown"


def test_the_parent_s_failed_step_is_signed_in_the_lineage_tag():
    from runbook import lineage

    t = lineage.tag(b"k", "inc-1", "41", "halve_micro_batch", 600)
    claim = lineage.read("42", t, "rb", secret=b"k", runbook_user="rb")
    assert claim.trusted and claim.fields["step"] == "600"
    forged = t.replace("step=600", "step=9")
    assert not lineage.read("42", forged, "rb", secret=b"k", runbook_user="rb").trusted
    old = lineage.tag(b"k", "inc-1", "41", "halve_micro_batch")  # tags made before the step
    assert "step=" not in old
    assert lineage.read("42", old, "rb", secret=b"k", runbook_user="rb").trusted


def test_other_verdicts_keep_their_own_cause():
    p = phase.Phase(where="eval", when="mid_run")
    for v in ("gpu_fault", "host_oom"):
        assert causes.cause_of(causes.Facts(verdict=v, phase=p)).name == v
    assert causes.cause_of(causes.Facts(verdict="not_oom", phase=p)).name == "unknown"


# -- trend ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values, kind",
    [
        ([100, 110, 120, 130, 140, 150, 160, 170], "leak"),
        ([50, 80, 100, 100, 100, 100, 100, 100, 101, 100], "warmup"),
        # a slow warm-up over half the points, then flat: still not a leak
        ([50, 60, 70, 80, 90, 95, 100, 100, 100, 100, 100, 100], "warmup"),
        ([100, 100, 101, 100, 100, 150], "spike"),
        ([100, 100, 100, 100], "flat"),
        ([100, 120, 90], "unknown"),
    ],
)
def test_trend_kinds(values, kind):
    assert trend.classify(values)[0] == kind


def test_a_warm_up_curve_is_never_a_leak():
    # Any curve that rises then stays flat for its last half.
    for rise in range(1, 9):
        values = [50 + 50 * min(i, rise) / rise for i in range(16)]
        assert trend.classify(values)[0] != "leak", values


def test_megatron_memory_lines_give_a_series():
    lines = [
        f"[Rank 0] (after {i} iterations) memory (MB) | allocated: {1000 + 100 * i}.0 | "
        f"max allocated: {2000 + 100 * i}.0 | reserved: 4000.0 | max reserved: 4000.0"
        for i in range(1, 9)
    ]
    t = trend.trend_of(lines)
    assert (t.series, t.points, t.kind, t.rank) == ("megatron", 8, "leak", 0)


def test_instrument_per_step_line_is_read_with_its_rank():
    lines = [
        f"RUNBOOK_INSTRUMENT mem rank=3 step={s} allocated={(1 << 30) + s * (1 << 20)} "
        f"peak={2 << 30} reserved={3 << 30} retries=0 inactive=0"
        for s in range(0, 800, 100)
    ]
    t = trend.trend_of(lines, rank=3)
    assert (t.series, t.rank, t.points) == ("instrument", 3, 8)


def test_scan_keeps_the_trend_of_a_log():
    lines = "\n".join(
        f"step: {i}  loss: 2.1  memory: {20 + (i > 2) * 3:.2f}GiB(25.12%)  tps: 1,000"
        for i in range(1, 12)
    )
    report = scan(lines)
    assert report.trend_for(None).kind == "warmup"


# -- source check -----------------------------------------------------------------------------
SOURCE = """
import torch
def train(model, opt, loader):
    total = 0
    for x, y in loader:
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        total += loss
        seen.append(loss.item())

@torch.no_grad()
def validate(model, loader):
    for x in loader:
        model(x)

def evaluate(model, loader):
    model.eval()
    for x, y in loader:
        out = model(x)

ck = torch.load("a.pt")
ok = torch.load("a.pt", map_location="cpu")
"""


def test_source_check_names_each_pattern_by_file_and_line():
    found = {(f.kind, f.line) for f in check_text(SOURCE, "train.py")}
    assert found == {
        ("keeps_graph", 10),
        ("eval_no_grad", 21),
        ("load_no_map_location", 23),
    }


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("running = running + loss", True),  # the real H100 leak's spelling (gpu/phase_leak.log)
        ("running = loss + running", True),
        ("self.total = self.total + outputs.logits", True),
        ("running = running + loss.item()", False),
        ("running = running + loss.detach()", False),
        ("running = other + loss", False),  # a fresh value each step: nothing accumulates
    ],
)
def test_a_sum_kept_across_steps_in_any_spelling(line, kept):
    src = (
        "def train(model, opt, data):\n    running = 0\n    for x in data:\n"
        "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
        f"        opt.zero_grad()\n        {line}\n"
    )
    found = {(f.kind, f.line) for f in check_text(src, "train.py")}
    assert found == ({("keeps_graph", 8)} if kept else set())


def test_source_check_reads_code_it_cannot_parse_as_nothing():
    assert check_text("def broken(:\n", "x.py") == []


def test_check_job_reads_the_entry_file_and_the_job_s_own_imports_only(tmp_path):
    from runbook.jobfiles.source_check import check_job

    (tmp_path / "pkg").mkdir()
    (tmp_path / "train.py").write_text(
        "import torch\nfrom pkg import loop\nimport helpers\nloop.run()\n"
    )
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "loop.py").write_text(
        "import torch\ndef run(model, opt, data):\n    total = 0\n    for x in data:\n"
        "        loss = model(x)\n        loss.backward()\n        opt.step()\n"
        "        opt.zero_grad()\n        total += loss\n"
    )
    (tmp_path / "helpers.py").write_text("import torch\nck = torch.load('x.pt')\n")
    (tmp_path / "unrelated.py").write_text("import torch\nck = torch.load('y.pt')\n")
    script = "#!/bin/bash\n# python old.py\nsrun python3 train.py --lr 3e-4\n"
    r = check_job(script, tmp_path)
    got = {(f.kind, f.file, f.line) for f in r.findings}
    assert got == {("keeps_graph", "pkg/loop.py", 9), ("load_no_map_location", "helpers.py", 2)}
    assert r.files == 4  # train.py, pkg/__init__.py, pkg/loop.py, helpers.py; never unrelated.py


def test_srun_l_labels_before_an_indented_traceback_recorded_on_the_cluster():
    """A variant the public records do not show: every line under srun -l's `3: ` label, the
    frames indented after it (recorded, tests/data/logs/SOURCES.md)."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "data" / "logs" / "train_oom-eval-oom-srun-l.out"
    report = scan(log.read_text())
    p = report.phase_of(report.first_oom)
    assert (p.where, p.when, p.step) == ("eval", "eval_start", 2)
    assert [f.func for f in p.frames][:2] == ["main", "evaluate"]


def test_a_job_that_has_ended_on_the_node_has_unknown_pids_not_none():
    from runbook.evidence.gpu_health import parse_listpids

    gone = (
        "JobId=1226 does not exist on node (null).\nPID      JOBID    STEPID   LOCALID GLOBALID\n"
    )
    assert parse_listpids(gone, 0)[0] is None
    live = "PID      JOBID    STEPID   LOCALID GLOBALID\n29557    1226     0        1       3\n"
    assert parse_listpids(live, 0)[0] == {29557}


@pytest.mark.parametrize("rec", FRAME_RECORDS, ids=[r["id"] for r in FRAME_RECORDS])
def test_where_and_when_on_real_traceback_excerpts_cut_before_the_message(rec):
    lines = rec["text"].splitlines()
    p = phase.phase_of(lines, len(lines))
    assert (p.where, p.when) == (rec["answer"]["where"], rec["answer"]["when"]), rec["note"]


def _mem(rank, step, retries, total=None):
    t = f" total={total}" if total else ""
    return (
        f"RUNBOOK_INSTRUMENT mem rank={rank} step={step} allocated={30 << 30} peak={70 << 30} "
        f"reserved={72 << 30} retries={retries} inactive=0{t}"
    )


@pytest.mark.parametrize(
    ("retries", "thrashes"),
    [
        ([0, 0, 0, 0], False),
        ([0, 5, 10, 15], True),
        ([3, 4, 4, 5], False),  # one flat step in the last three: not rising throughout
        ([0, 9, 9, 12, 20], True),
        ([1, 2], False),  # too few lines to tell
    ],
)
def test_the_allocator_thrashes_when_its_retries_rise_over_the_last_lines(retries, thrashes):
    lines = [_mem(3, i, r, total=80 << 30) for i, r in enumerate(retries)]
    t = trend.trend_of(lines)
    assert (trend.thrashing(t) is not None) == thrashes
    assert t.total_mib == 80 * 1024 and t.peak_mib == 70 * 1024


def test_torchtitans_rising_retry_warnings_are_thrashing_too():
    warn = "[titan] 2025-01-01 10:00:0{i} WARNING - {n} CUDA memory allocation retries."
    lines = [warn.format(i=i, n=n) for i, n in enumerate((1, 2, 4))]
    lines.append("[titan] step:  10  loss:  7.1  memory: 60.00GiB(75.40%)  tps: 1,000")
    why = trend.thrashing(trend.trend_of(lines))
    assert why is not None and "torchtitan" in why and "1 -> 4" in why
    assert trend.thrashing(trend.trend_of(lines[:2] + lines[3:])) is None


def test_a_long_series_keeps_its_points_nearest_the_oom():
    """Over trend.MAX_POINTS lines, the last ones are kept (they end at the OOM): flat for 4500
    steps, then rising into the OOM, is never read as flat from its first 4096 points."""
    lines = [
        f"RUNBOOK_INSTRUMENT mem rank=0 step={n} "
        f"allocated={(1000 if n < 4500 else 1000 + 4 * (n - 4500)) * 2**20}"
        for n in range(5000)
    ]
    t = trend.trend_of(lines)
    assert t is not None and t.points == trend.MAX_POINTS and t.steps[-1] == 4999
    assert t.kind != "flat"


def test_a_megatron_line_with_a_rank_of_thousands_of_digits_is_no_rank_not_a_crash():
    """Log text is untrusted: int() refuses over 4300 digits; the rank is then unknown."""
    line = (
        f"[Rank {'9' * 5000}] (after 3 iterations) memory (MB) | allocated: 1024.0 | "
        "max allocated: 2048.0 | reserved: 3072.0"
    )
    t = trend.trend_of([line])
    assert t is not None and t.series == "megatron" and t.rank is None and t.steps == [3]


# -- the OOM against the steps' peaks (trend.at_oom) --------------------------------------------
def _steps(allocated_gib: list[float], peak_gib: list[float | None]) -> list[str]:
    return [
        f"RUNBOOK_INSTRUMENT mem rank=0 step={i + 1} allocated={int(a * 2**30)}"
        + (f" peak={int(p * 2**30)}" if p is not None else "")
        + f" reserved={int(30 * 2**30)} retries=0 inactive=0"
        for i, (a, p) in enumerate(zip(allocated_gib, peak_gib, strict=True))
    ]


@pytest.mark.parametrize(
    ("allocated", "peaks", "demand_gib", "kind"),
    [
        # flat starts, peaks up to 9 GiB, the failing step held and asked for 20: a spike
        ([2.5] * 6, [4, 9, 6, 5, 8, 7], 20, "spike"),
        # a warm-up (the optimizer's state at step 1) then flat: the same
        ([1, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5], [4, 9, 6, 5, 8, 7, 6, 5], 20, "spike"),
        # 1.2x the largest peak: the longest batch so far, but not far enough to say so
        ([2.5] * 6, [4, 9, 6, 5, 8, 7], 10.8, "flat"),
        # a leak stays a leak, however much the last step asked for
        ([2, 3, 4, 5, 6, 7, 8, 9], [5, 6, 7, 8, 9, 10, 11, 12], 60, "leak"),
        # too few peaks to know what a step needs
        ([2.5] * 6, [None, None, None, 9, 8, None], 40, "flat"),
    ],
)
def test_the_oom_weighed_against_the_peaks_of_the_steps_before(allocated, peaks, demand_gib, kind):
    t = trend.trend_of(_steps(allocated, peaks))
    assert trend.at_oom(t, demand_gib * 1024).kind == kind


def test_without_the_oom_s_numbers_or_a_series_the_trend_is_as_it_was():
    t = trend.trend_of(_steps([2.5] * 6, [4, 9, 6, 5, 8, 7]))
    assert trend.at_oom(t, None) is t and trend.at_oom(None, 99999.0) is None


# -- an evaluation banner, then a forward with no evaluation function in the traceback ---------
def _eval_log(between: list[str], frames: list[tuple[str, str]]) -> list[str]:
    tb = ["Traceback (most recent call last):"]
    for func, file in frames:
        tb += [f'  File "{file}", line 10, in {func}', "    x = f(y)"]
    return [
        "step 5 loss 11.57",
        "***** Running Evaluation *****",
        "  Batch size = 256",
        *between,
        *tb,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 31.25 GiB. GPU 0 has a "
        "total capacity of 79.18 GiB of which 28.48 GiB is free.",
    ]


TORCH_F = "/venv/lib/python3.12/site-packages/torch/nn/functional.py"


@pytest.mark.parametrize(
    ("between", "frames", "where"),
    [
        # the script's own loop, named anything: the banner says evaluation
        ([], [("main", "run.py"), ("score_all", "run.py"), ("cross_entropy", TORCH_F)], "eval"),
        # the evaluation ended ({'eval_loss': ...}); training's forward ran out after it
        (["{'eval_loss': 2.31, 'eval_runtime': 12.0}"], [("cross_entropy", TORCH_F)], "forward"),
        # a training loop's function in the traceback: its forward
        ([], [("train_one_epoch", "run.py"), ("cross_entropy", TORCH_F)], "forward"),
        ([], [("_inner_training_loop", "trainer.py"), ("forward", "model.py")], "forward"),
    ],
)
def test_an_evaluation_banner_names_a_forward_under_no_training_loop(between, frames, where):
    lines = _eval_log(between, frames)
    p = phase.phase_of(lines, len(lines) - 1)
    assert p.where == where
    if where == "eval":
        assert p.when == "eval_start" and "***** Running Evaluation *****" in p.evidence


@pytest.mark.parametrize(
    ("code", "kept"),
    [
        ("all_preds.append(logits)", True),
        ("preds_host = logits if preds_host is None else torch.cat((preds_host, logits))", True),
        ("all_preds.append(logits.detach().cpu())", False),  # kept, but on the host
        ("predictions.extend(logits.argmax(-1).tolist())", False),
        ("out = model(batch)", False),
    ],
)
def test_an_evaluation_loop_that_keeps_its_outputs_on_the_gpu(code, kept):
    lines = [
        "Traceback (most recent call last):",
        '  File "eval.py", line 40, in evaluate',
        f"    {code}",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 79.18 GiB of which 1.00 GiB is free.",
    ]
    p = phase.phase_of(lines, len(lines) - 1)
    assert p.where == "eval" and bool(p.kept_predictions) == kept
    cause = causes.cause_of(causes.Facts(verdict="true_oom", phase=p))
    assert cause.name == ("eval_predictions" if kept else "eval_batch")


def test_static_sizing_needs_a_sized_phase_or_no_traceback_at_all():
    """nnU-Net#593's paste: the OOM in a DDP set-up's barrier (trainer.initialize), no training
    step yet. Before the first step, yes; but it ran out inside torch.distributed's collective,
    which no batch size changes, so the job's sizing is not what it shows."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "run/run_training_DDP.py", line 157, in main\n'
        "    trainer.initialize(not validation_only)\n"
        '  File "/x/nnunet/training/network_training/nnUNetTrainerV2_DDP.py", line 160, in '
        "initialize\n"
        "    distributed.barrier()\n"
        '  File "/x/torch/distributed/distributed_c10d.py", line 2420, in barrier\n'
        "    work = default_pg.barrier(opts=opts)\n"
        "RuntimeError: CUDA error: out of memory\n"
    )
    lines = text.splitlines()
    p = phase.phase_of(lines, len(lines) - 1)
    assert (p.where, p.when) == ("unknown", "first_step") and p.frames
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=p)).name == "unknown"
    bare = phase.Phase(where="unknown", when="first_step")  # a message without its traceback
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=bare)).name == "static_sizing"


STARTUP_COUNTERS = {
    "workers": [f"Worker-{i} started" for i in range(6)],
    "loaders": [f"[dataloader #{i}] ready" for i in range(6)],
    "index": [f"Building index: sorted {n} entries" for n in (1000, 2000, 3000, 4000)],
    "compile": [f"Compiling layer {i} of 24" for i in range(1, 5)],
    "scaler": [f"loss scale: {n}" for n in (512, 1024, 2048, 4096)],
}


@pytest.mark.parametrize("kind", sorted(STARTUP_COUNTERS))
@pytest.mark.parametrize("marker", [True, False], ids=["with-start-marker", "no-marker"])
def test_a_start_up_counter_is_never_a_step(kind, marker):
    """Issue 55: counts printed before the loop begins (workers, loaders, an index built, layers
    compiled, a loss scale) are no steps: the real first-step optimizer OOM (phase-002) after
    them is never mid-run: a first step after a "Starting training" line, unknown without one
    (as the record alone reads), and its cause (Adam's state) is kept either way."""
    from runbook.evidence import progress

    lines = STARTUP_COUNTERS[kind]
    assert progress.rising_counts(lines) == {}, kind
    rec = next(r for r in RECORDS if r["id"] == "phase-002")
    head = "\n".join([*lines, *(["Starting training"] if marker else [])]) + "\n"
    text = head + rec["text"]
    msg = parse_all(text)[0]
    p = phase.phase_of(log_lines(text), msg.line, msg.rank)
    # Without the marker nothing says the loop began: "unknown", as phase-002 alone reads.
    when = "first_step" if marker else "unknown"
    assert (p.where, p.when, p.step) == ("optimizer_step", when, None), p
    assert causes.cause_of(causes.Facts(verdict="true_oom", phase=p)).name == "optimizer_state"


def test_a_training_start_marker_resets_the_counts_before_it():
    """A loop of the job's own shape that rose before "***** Running training *****" (a warm-up
    pass, say) is set-up: the OOM after the marker with no step since is a first step."""
    rec = next(r for r in RECORDS if r["id"] == "phase-002")
    before = [f"prefetch pass {i} done loss 0.{i}" for i in range(1, 6)]
    text = "\n".join([*before, "***** Running training *****"]) + "\n" + rec["text"]
    msg = parse_all(text)[0]
    p = phase.phase_of(log_lines(text), msg.line, msg.rank)
    assert p.when == "first_step" and p.step is None, p
    # Without the marker, the same loop is the training's: mid-run at its last count.
    text = "\n".join(before) + "\n" + rec["text"]
    msg = parse_all(text)[0]
    p = phase.phase_of(log_lines(text), msg.line, msg.rank)
    assert p.when == "mid_run" and p.step == 5, p


def _mem_lines(per_rank: dict[int, list[tuple[float, float, int]]], card_gib: float = 81.5):
    """runbook.instrument's per-step lines (`0: ` srun -l prefixes), from (allocated GiB, peak
    GiB, retries) per rank and step."""
    g = 2**30
    out = []
    steps = len(next(iter(per_rank.values())))
    for step in range(steps):
        for rank, points in per_rank.items():
            a, p, r = points[step]
            out.append(
                f"{rank}: RUNBOOK_INSTRUMENT mem rank={rank} step={step + 1} "
                f"allocated={int(a * g)} peak={int(p * g)} reserved={int(p * g)} retries={r} "
                f"inactive=0 total={int(card_gib * g)}"
            )
    return out


def test_the_watch_names_the_worst_rank_of_a_running_job():
    """Issue 56: every rank's series is read (rank 1 thrashes while rank 0 is calm); the worst
    rank wins whatever its place: thrashing over near capacity over a leak."""
    calm = [(50.0, 60.0, 0)] * 8
    thrash = [(55.0, 76.5, r) for r in (0, 0, 1, 3, 6, 10, 15, 21)]
    near = [(55.0, 76.0, 0)] * 8
    leak = [(40.0 + 2 * i, 50.0 + 2 * i, 0) for i in range(8)]
    lines = _mem_lines({0: calm, 1: thrash, 2: near, 3: leak})
    trends = trend.every_rank(lines)
    assert [t.rank for t in trends] == [0, 1, 2, 3]
    w = trend.watch(trends, margin=0.10)
    assert (w.kind, w.rank) == ("thrashing", 1) and "10 -> 15 -> 21" in w.why, w
    w = trend.watch([t for t in trends if t.rank != 1], margin=0.10)
    assert (w.kind, w.rank) == ("near_capacity", 2) and "76.0 of 81.5 GiB" in w.why, w
    w = trend.watch([t for t in trends if t.rank in (0, 3)], margin=0.10)
    assert (w.kind, w.rank) == ("leak", 3), w
    # 54 GiB at step 8, 2 GiB a step: the 81.5 GiB card at step 8 + ceil(27.5 / 2) = 22.
    assert w.projected_step == 22 and "about step 22" in w.why, w
    # Nothing seen is nothing said: no "healthy" line for a job whose telemetry is calm.
    assert trend.watch([trends[0]], margin=0.10) is None
    assert trend.watch([], margin=0.10) is None


def test_a_running_jobs_scan_keeps_every_ranks_series():
    """Without an OOM in the log, the scan reads each rank's series (it read only the rank with
    the most lines: rank 0 of four equal ones, and rank 1's thrashing was never seen)."""
    from runbook.evidence.launcher_log import scan as scan_log

    calm = [(50.0, 60.0, 0)] * 8
    thrash = [(55.0, 76.5, r) for r in (0, 0, 1, 3, 6, 10, 15, 21)]
    # As the test cluster's job printed them under srun -l: every rank's start line, all of one
    # length, which read as a terminal's cut lines and were joined into rank 0's.
    starts = [
        f"{r}: RUNBOOK_INSTRUMENT start rank={r} torch=2.13.0+cpu cuda=False allocator "
        "PYTORCH_ALLOC_CONF= PYTORCH_CUDA_ALLOC_CONF= PYTORCH_HIP_ALLOC_CONF=(unset)"
        for r in (0, 1, 3, 2)
    ]
    report = scan_log("\n".join([*starts, *_mem_lines({0: calm, 1: thrash, 2: calm, 3: calm})]))
    assert sorted(t.rank for t in report.trends) == [0, 1, 2, 3]
    assert trend.watch(report.trends, margin=0.10).rank == 1
