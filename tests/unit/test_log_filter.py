"""The relevance filter (remote grep -F and its Python twin) never loses evidence: on every real
record, the excerpt it keeps gives the same answers as the whole text."""

from __future__ import annotations

import pytest

from runbook.evidence import oom_message
from runbook.evidence.launcher_log import scan
from runbook.evidence.log_filter import (
    filter_lines,
    parse_grep_output,
    remote_grep_many_argv,
    split_locations,
)
from runbook.transport.local import LocalTransport
from tests import corpus_checks as cc
from tests.conftest import corpus_records

# The shared corpus and runbook's own (tests/data/corpus): both are real logs.
LOGS = corpus_records("ops/launcher_logs.jsonl") + cc.read(cc.OWN / "ops/launcher_logs.jsonl")
# Messages as a job prints them; one a person retyped by hand (lower case, its own spacing) is
# read by `diagnose`, but never comes out of a job's log, which is what the filter scans.
OOMS = corpus_records("oom_messages.jsonl") + [
    r
    for r in cc.read(cc.OWN / "oom_messages.jsonl")
    if "retyped by hand" not in (r.get("notes") or "")
]
NOISE = "".join(
    f"step {i} | loss 2.{i:04d} | mem allocated 70.12 GiB | tokens/s 41234\n" for i in range(50)
)


def _excerpt(text: str) -> str:
    return filter_lines((NOISE + text + "\n" + NOISE).splitlines()).text()


@pytest.mark.parametrize("rec", LOGS, ids=[r["id"] for r in LOGS])
def test_filtered_launcher_log_gives_the_same_answer(rec):
    whole, kept = scan(rec["text"]), scan(_excerpt(rec["text"]))
    assert kept.failing_ranks == whole.failing_ranks
    assert kept.timed_out_ranks == whole.timed_out_ranks
    assert (kept.first_failure is None) == (whole.first_failure is None)
    if whole.first_failure:
        a, b = kept.first_failure, whole.first_failure
        assert (a.kind, a.ranks, a.node, a.time) == (b.kind, b.ranks, b.node, b.time)


@pytest.mark.parametrize("rec", OOMS, ids=[r["id"] for r in OOMS])
def test_filtered_oom_message_keeps_its_numbers(rec):
    whole, kept = oom_message.parse(rec["text"]), oom_message.parse(_excerpt(rec["text"]))
    assert kept is not None
    for k in (
        "tried_mib",
        "total_mib",
        "free_mib",
        "allocated_by_pytorch_mib",
        "reserved_total_mib",
        "reserved_unallocated_mib",
        "limit_mib",
        "gpu",
        "rank",
    ):
        assert getattr(kept, k) == getattr(whole, k), k


def test_noise_is_dropped():
    assert filter_lines(NOISE.splitlines()).lines == []


def test_remote_and_python_filters_agree(tmp_path):
    """The grep -F command and the Python filter keep the same lines of the same file."""
    text = NOISE + "\n".join(r["text"] for r in LOGS[:8]) + "\n" + NOISE
    (tmp_path / "job-7_0.out").write_text(text)
    r = LocalTransport().run(remote_grep_many_argv([(str(tmp_path), "job-7_*.out")]))
    assert r.ok, r.stderr
    remote = parse_grep_output(split_locations(r.stdout)[0])[str(tmp_path / "job-7_0.out")].lines
    assert remote == filter_lines(text.splitlines()).lines


def test_output_cap_is_reported(tmp_path):
    (tmp_path / "big.out").write_text("RuntimeError: boom\n" * 100_000)
    r = LocalTransport().run(remote_grep_many_argv([(str(tmp_path), "big.out")], cap=10_000))
    out = split_locations(r.stdout)[0]
    assert len(out) == 10_000
    assert all(e.truncated for e in parse_grep_output(out, cap=10_000).values())


def test_a_live_logs_unfinished_last_line_is_never_read(tmp_path):
    """The real remote script over two locations, the first log still being written (its last
    line has no newline yet): that line is left out and said, and it does not run into the next
    location's marker; a finished log's last line is kept."""
    from runbook.evidence.log_filter import remote_grep_many_argv, split_locations

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "live-1.out").write_text("step 10 peak 74.7 GiB\nstep 11 peak 7")
    (tmp_path / "b" / "done-2.out").write_text("step 10 peak 74.7 GiB\nstep 11 peak 75.1 GiB\n")
    argv = remote_grep_many_argv(
        [(str(tmp_path / "a"), "live-*.out"), (str(tmp_path / "b"), "done-*.out")], tail=5
    )
    r = LocalTransport().run(argv)
    assert r.ok, r.stderr
    per = split_locations(r.stdout)
    assert sorted(per) == [0, 1]
    live = parse_grep_output(per[0])[str(tmp_path / "a" / "live-1.out")]
    done = parse_grep_output(per[1])[str(tmp_path / "b" / "done-2.out")]
    assert live.tail == ["step 10 peak 74.7 GiB"]
    assert "still being written" in live.notes[0] and "step 11 peak 7" in live.notes[0]
    assert done.tail == ["step 10 peak 74.7 GiB", "step 11 peak 75.1 GiB"] and done.notes == []


@pytest.mark.parametrize("watched", [False, True], ids=["scanned", "watched"])
def test_a_logs_own_location_marker_does_not_pass_for_another_jobs_location(tmp_path, watched):
    """Two jobs' logs read in one exec (the sweep's read of a host): the second job writes lines
    that read as the first location's marker and a grep line of the first job's file, with an
    OOM. A tail's lines are the log's own text, so the marker carries the exec's nonce: the
    first job's part holds no OOM, and the second's holds its lines as its own text."""
    from runbook.evidence.log_filter import remote_grep_many_argv, split_locations
    from runbook.transport.local import LocalTransport

    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "v.out").write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")
    fake = f"{first / 'v.out'}\0" + "99:torch.OutOfMemoryError: CUDA out of memory."
    (second / "e.out").write_text(f"step 1\n@@loc 0\n{fake}\n@@loc 1\n@@now 1\n")
    known = "W" if watched else ""
    argv = remote_grep_many_argv(
        [(str(first), "*.out", "", known), (str(second), "*.out", "", known)], tail=200
    )
    per = split_locations(LocalTransport().run(argv).stdout)
    assert "step 2 loss 1.9" in per[0] and "out of memory" not in per[0]
    assert "@@loc 0" in per[1] and "out of memory" in per[1]
