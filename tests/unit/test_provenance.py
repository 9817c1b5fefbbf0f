"""Evidence belongs to this run (issue 34 item 3), data in, data out: lines of a shared or
requeued job's log are this run's only where the log shows it. The requeue notice below is the
one Slurm 22.05 wrote on the test cluster (`scontrol requeue` of a running job, 2026-11-25)."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

from runbook.evidence.collect import attribute, log_appends
from runbook.evidence.log_filter import Excerpt
from runbook.evidence.provenance import this_run

START = datetime(2026, 11, 25, 13, 27, 40)
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
REQUEUE = (
    "slurmstepd-gpu-01: error: *** JOB 55 ON gpu-01 CANCELLED AT 2026-11-25T13:25:39 "
    "DUE TO JOB REQUEUE ***"
)


def numbered(*texts: str) -> list[tuple[int, str]]:
    return list(enumerate(texts, 1))


def test_a_log_of_its_own_is_all_this_run_s():
    lines = numbered("step 1", OOM)
    assert this_run(lines, START, "55", shared=False).kept == lines


def test_after_this_job_s_requeue_notice_is_the_current_run():
    lines = numbered("0: step 6", f"3: {OOM}", REQUEUE, "0: step 1", "3: ValueError: empty label")
    got = this_run(lines, START, "55", shared=True)
    assert [t for _, t in got.kept] == ["0: step 1", "3: ValueError: empty label"]
    assert (got.earlier, got.unproven) == (3, 0)


def test_another_job_s_end_notice_sets_aside_what_is_above_and_proves_nothing_below():
    for notice in (
        REQUEUE.replace("JOB 55", "JOB 54"),
        "slurmstepd: error: *** JOB 54 ON gpu-01 CANCELLED AT 2026-11-25T13:27:39 ***",
    ):
        lines = numbered(OOM, notice, "ValueError: x")
        got = this_run(lines, START, "55", shared=True)
        assert got.kept == [] and (got.earlier, got.unproven) == (2, 1), notice


def test_this_job_s_requeue_seconds_before_the_start_still_ends_the_earlier_run():
    lines = numbered(OOM, REQUEUE.replace("13:25:39", "13:27:38"), "ValueError: x")
    assert [t for _, t in this_run(lines, START, "55", shared=True).kept] == ["ValueError: x"]


def test_this_run_s_own_cancel_notice_is_this_run_s():
    cancel = "slurmstepd: error: *** JOB 55 ON gpu-01 CANCELLED AT 2026-11-25T13:30:00 ***"
    lines = numbered(OOM, REQUEUE, "step 1", cancel)
    assert [t for _, t in this_run(lines, START, "55", shared=True).kept] == ["step 1", cancel]


def test_a_shared_log_with_stamps_keeps_what_is_stamped_from_the_start_on():
    lines = numbered(
        "[2026-11-25 12:00:01] step 6",
        f"[2026-11-25 12:00:02] {OOM}",
        "Traceback (most recent call last):",  # earlier job's, unstamped: after an old stamp
        "[2026-11-25 13:27:41] step 1",
        "ValueError: empty label",
    )
    got = this_run(lines, START, "77", shared=True)
    assert [t for _, t in got.kept] == ["[2026-11-25 13:27:41] step 1", "ValueError: empty label"]
    assert got.earlier == 2 and got.unproven == 1


def test_a_shared_log_without_stamps_proves_nothing():
    got = this_run(numbered("step 6", OOM), START, "77", shared=True)
    assert got.kept == [] and got.unproven == 2


def test_stamps_under_srun_labels_and_glog_count():
    lines = numbered(
        f"3: [2026-11-25 11:00:00] {OOM}",
        "0: [E1125 13:28:00.123 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective",
        f"3: {OOM}",
    )
    got = this_run(lines, START, "77", shared=True)
    assert got.earlier == 1 and len(got.kept) == 2


def test_a_date_inside_a_line_is_content_not_when_it_was_written():
    lines = numbered("loading snapshot data-2024-01-01 00:00:00.parquet", OOM)
    assert this_run(lines, START, "77", shared=False).kept == lines


def test_a_log_not_known_to_be_shared_is_all_this_run_s_whatever_its_stamps_say():
    """A job may print old text (a replayed log), and its logger may stamp in UTC on a UTC+8
    site: stamps alone never set a log's lines aside."""
    lines = numbered(f"2026-11-24 09:00:00 {OOM}", "ValueError: x")
    assert this_run(lines, START, "77", shared=False).kept == lines


def job(restarts=0, submit_line="", start=START):
    return SimpleNamespace(restarts=restarts, submit_line=submit_line, start=start, raw="55")


def test_when_a_log_appends():
    # Requeued alone: Slurm truncated the log when the rerun started; the file is this run's.
    assert log_appends(job(1), "") is None
    appends = "#!/bin/bash\n#SBATCH --open-mode=append\n"
    assert "requeued 1" in log_appends(job(1), appends)
    assert "append" in log_appends(job(), appends)
    assert "append" in log_appends(job(submit_line="sbatch --open-mode append x.sh"), "")
    assert log_appends(job(), "#!/bin/bash\n# #SBATCH --open-mode=append is off\n") is None


def test_a_shared_log_with_only_an_earlier_run_s_lines_is_incomplete():
    e = Excerpt("/logs/train.log", numbered(f"3: {OOM}", REQUEUE))
    notes, gaps = attribute(job(1, "sbatch --open-mode=append x.sh"), "", e)
    assert e.lines == [] and "earlier run" in notes[0]
    assert gaps and "no line of this run" in gaps[0]


def test_a_log_not_shared_is_left_as_it_is():
    e = Excerpt("/logs/train-77.log", numbered("2020-01-01 00:00:00 step 1", OOM))
    assert attribute(job(), "", e) == ([], []) and len(e.lines) == 2


def test_set_aside_lines_make_the_evidence_incomplete_with_the_reason():
    e = Excerpt("/logs/train.log", numbered("step 6", OOM))
    notes, gaps = attribute(job(1, "sbatch --open-mode=append x.sh"), "", e)
    assert e.lines == [] and gaps and "requeued 1 time" in gaps[0]
    assert "no verdict" in gaps[0]
