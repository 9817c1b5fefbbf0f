"""The watch reads only what running jobs wrote since the last period (issue 65): the node-side
read (the real shell script, run here on real files: `[logs] read_on = "local"`), what it hands
back, and the series it holds between periods."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from runbook import state
from runbook.evidence import collect, trend
from runbook.site import LogsSection, SiteConfig, SweepSection
from runbook.slurm.client import JobInfo


def _site(grow_mib: int = 256) -> SiteConfig:
    return dataclasses.replace(
        SiteConfig(),
        logs=LogsSection(read_on="local"),
        sweep=SweepSection(watch_max_read_mib=grow_mib),
    )


def _mem(rank: int, step: int, mib: float, total: int = 81920) -> str:
    b = int(mib * 2**20)
    return (
        f"RUNBOOK_INSTRUMENT mem rank={rank} step={step} allocated={b} peak={b} "
        f"reserved={b} retries=0 total={total * 2**20}"
    )


def _job(path) -> JobInfo:
    return JobInfo(
        job_id="77", user="", state="RUNNING", stdout=str(path), work_dir=str(path.parent)
    )


def _period(site, job, held: collect.Held) -> collect.JobLogs:
    got, errors = collect.read_logs_many(site, [(job, "")], None, held={job.job_id: held})
    assert not errors, errors
    return got[job.job_id]


def _next(logs: collect.JobLogs) -> collect.Held:
    offsets = {
        ident: (end, lines if lines is not None else -1)
        for ident, end, lines in logs.watched.values()
    }
    return collect.Held(offsets=offsets, series=logs.series, excerpt=logs.excerpts)


def _write(path, lines, mode="a") -> None:
    with open(path, mode) as f:
        f.write("".join(line + "\n" for line in lines))


def test_a_second_period_reads_only_the_new_bytes_and_numbers_lines_as_the_file_does(tmp_path):
    log = tmp_path / "slurm-77.out"
    _write(log, [f"step {s} loss 0.5" for s in range(1000)] + [_mem(0, 999, 1000)], "w")
    site, job = _site(), _job(log)
    first = _period(site, job, collect.Held())
    assert first.bytes_read == log.stat().st_size
    size = log.stat().st_size
    _write(log, ["step 1000 loss 0.4", _mem(0, 1000, 1001)])
    second = _period(site, job, _next(first))
    assert second.bytes_read == log.stat().st_size - size  # the new bytes, not the file
    (ident, end, lines) = second.watched[str(log)]
    st = os.stat(log)
    assert ident.startswith(f"{st.st_dev}:{st.st_ino}/") and end == st.st_size and lines is None
    # The new memory line is numbered by its byte offset in the file, after the held one.
    at = size + len("step 1000 loss 0.4\n")
    assert f"\0{at}=RUNBOOK_INSTRUMENT mem rank=0 step=1000" in second.raw  # a series line
    assert [t.points for t in second.launch.trends] == [2]


def test_a_line_still_being_written_is_read_next_period_whole(tmp_path):
    log = tmp_path / "slurm-77.out"
    _write(log, [_mem(0, s, 1000 + s) for s in range(3)], "w")
    with open(log, "a") as f:
        f.write(_mem(0, 3, 1003)[:30])  # cut mid-line: the writer's buffer
    site, job = _site(), _job(log)
    first = _period(site, job, collect.Held())
    assert first.launch.trends[0].points == 3
    with open(log, "a") as f:
        f.write(_mem(0, 3, 1003)[30:] + "\n")
    second = _period(site, job, _next(first))
    t = second.launch.trends[0]
    assert t.points == 4 and t.steps[-1] == 3 and t.values_mib[-1] == 1003


def test_a_truncated_or_replaced_log_is_read_from_its_start_and_no_point_counts_twice(tmp_path):
    log = tmp_path / "slurm-77.out"
    _write(log, [_mem(0, s, 1000) for s in range(5)], "w")
    site, job = _site(), _job(log)
    first = _period(site, job, collect.Held())
    # Truncated in place (same inode, smaller): read from its start.
    _write(log, [_mem(0, 5, 1000)], "w")
    second = _period(site, job, _next(first))
    assert second.bytes_read == log.stat().st_size
    # Replaced (a new inode at the same path): read from its start too.
    os.unlink(log)
    _write(log, [_mem(0, 6, 1000), _mem(0, 7, 1000)], "w")
    third = _period(site, job, _next(second))
    assert third.bytes_read == log.stat().st_size
    steps = third.launch.trends[0].steps
    assert steps == sorted(set(steps)) == [0, 1, 2, 3, 4, 5, 6, 7]


def test_a_log_that_grew_past_the_cap_is_read_from_its_tail_and_says_so(tmp_path):
    log = tmp_path / "slurm-77.out"
    _write(log, [_mem(0, 0, 1000)], "w")
    site, job = _site(grow_mib=1), _job(log)
    first = _period(site, job, collect.Held())
    _write(log, [f"noise line {i:08d} " + "x" * 100 for i in range(20000)] + [_mem(0, 1, 1001)])
    second = _period(site, job, _next(first))
    assert second.bytes_read <= 1 << 20
    assert any("only its last 1.0 MiB were read" in n for n in second.notes), second.notes
    assert second.launch.trends[0].steps == [0, 1]


def test_the_held_series_gives_the_watch_a_full_read_gives(tmp_path):
    """Three periods over one log of four ranks (rank 2 leaking), against one read of the
    whole: the same trends, point for point, and the same watch."""
    log = tmp_path / "slurm-77.out"
    lines = [
        _mem(r, s, 20000 + (s * 120 if r == 2 else (s % 3) * 5))
        for s in range(600)
        for r in range(4)
    ]
    site, job = _site(), _job(log)
    held = collect.Held()
    for part in (lines[:700], lines[700:1900], lines[1900:]):
        _write(log, part)
        logs = _period(site, job, held)
        held = _next(logs)
    whole = trend.every_rank(lines, most=trend.WATCH_POINTS)
    assert [dataclasses.asdict(t) for t in logs.launch.trends] == [
        dataclasses.asdict(t) for t in whole
    ]
    got, want = trend.watch(logs.launch.trends, 0.1), trend.watch(whole, 0.1)
    assert got is not None and (got.kind, got.rank, got.why) == (want.kind, want.rank, want.why)
    # Bounded: at most WATCH_POINTS lines per rank held.
    assert len(held.series[str(log)]) <= 4 * trend.WATCH_POINTS


def test_the_state_holds_a_runs_offsets_and_forgets_ended_jobs(tmp_path):
    db = state.open_db(str(tmp_path / "state.db"))
    state.save_watch(
        db,
        "77",
        "2026-12-01T10:00:00",
        {"/x/slurm-77.out": ("1:2/99", 300, 7)},
        {"/x/slurm-77.out": ["a"]},
    )
    assert state.watch_held(db, "77", "2026-12-01T10:00:00") == (
        {"1:2/99": (300, 7)},
        {"/x/slurm-77.out": ["a"]},
        {},
    )
    held = {
        "/x/slurm-77.out": {"ident": "1:2/99", "lines": [[0, "b"]], "tail": ["c"], "whole": True}
    }
    state.save_watch(db, "77", "r", {"/x/slurm-77.out": ("1:2/99", 300, None)}, {}, held)
    assert state.watch_held(db, "77", "r")[2] == held
    # What an earlier runbook held (the series alone) still reads, with nothing of an excerpt.
    with db.write():
        db.execute(
            "UPDATE watch_series SET data = ? WHERE job_id = ?", ('{"/x/a.out": ["a"]}', "77")
        )
    assert state.watch_held(db, "77", "r")[1:] == ({"/x/a.out": ["a"]}, {})
    assert state.watch_held(db, "77", "2026-12-02T08:00:00") == ({}, {}, {})  # a requeue: anew
    assert state.drop_watch(db, {"78"}) == 1
    assert state.watch_held(db, "77", "r") == ({}, {}, {})


REAL = Path(__file__).resolve().parents[1] / "data" / "gpu"


def _read(site, job, held=None) -> collect.JobLogs:
    return collect.read_logs(site, job, "", None, held=held)


def _diagnosed(logs: collect.JobLogs) -> dict:
    from runbook.diagnosis import Evidence, classify
    from runbook.playbook import load

    d = classify(Evidence(launch=logs.launch), load().thresholds)
    ff = logs.launch.first_failure
    return {
        "verdict": d.verdict,
        "phase": d.phase.contract() if d.phase else None,
        "cause": d.cause.name if d.cause else None,
        "first_failure": ff.contract() if ff else None,
        "failing_ranks": logs.launch.failing_ranks,
        "trends": [(t.series, t.rank, t.points, t.kind) for t in logs.launch.trends],
        "tails": logs.launch.tails,
    }


ZOO = REAL.parent / "zoo"


@pytest.mark.parametrize(
    "path",
    [REAL / n for n in ("phase_leak.log", "lightning_forward.log", "trend_varlen.log",
                        "hf_eval_accumulation.log")] + sorted(ZOO.glob("*.log")),
    ids=lambda p: p.name,
)  # fmt: skip
@pytest.mark.parametrize("split", ["thirds", "at_the_traceback"])
def test_replayed_real_log_an_incident_after_the_watch_reads_only_the_rest_and_sees_the_whole(
    tmp_path, path, split
):
    """A real recorded run's log (tests/data/gpu on an H100/H200, and the framework zoo's: their
    SOURCES.md), written in three parts with a
    watch period after each of the first two (at its thirds; or ending on the line before its
    traceback, then on its first line), then the job ends: the incident's read with what
    the watch held reads only the third part's bytes, and its diagnosis (verdict, when and
    where, cause, first failure, trends, the log's last lines) is a whole read's."""
    lines = path.read_text().splitlines()
    log = tmp_path / "slurm-77.out"
    site, job = _site(), _job(log)
    cuts = (len(lines) // 3, 2 * len(lines) // 3)
    if split == "at_the_traceback":  # a period ends on the line before it, the next on it
        at = next((i for i, x in enumerate(lines) if "Traceback" in x), len(lines) // 2)
        cuts = (max(1, at - 1), max(2, at + 1))
    held = collect.Held()
    _write(log, lines[: cuts[0]], "w")
    for part in (lines[cuts[0] : cuts[1]], lines[cuts[1] :]):
        held = _next(_period(site, job, held))
        size = log.stat().st_size
        _write(log, part)
    ended = dataclasses.replace(job, state="FAILED")
    got = _read(site, ended, held)
    assert got.bytes_read == log.stat().st_size - size  # only the rest
    assert any("are what the watch held" in n for n in got.notes), got.notes
    assert _diagnosed(got) == _diagnosed(_read(site, ended))


def test_what_the_watch_cannot_hold_whole_is_read_again(tmp_path):
    """A period cut by the growth cap holds nothing of the file's start: the incident reads the
    whole log, and finds the failure it holds."""
    lines = (REAL / "lightning_forward.log").read_text().splitlines()
    log = tmp_path / "slurm-77.out"
    _write(log, lines[:20], "w")
    site, job = _site(grow_mib=1), _job(log)
    first = _period(site, job, collect.Held())
    _write(log, [f"noise line {i:08d} " + "x" * 100 for i in range(20000)])
    second = _period(site, job, _next(first))
    assert not second.excerpts[str(log)]["whole"] and not second.excerpts[str(log)]["lines"]
    _write(log, lines[20:])
    got = _read(site, dataclasses.replace(job, state="FAILED"), _next(second))
    assert not any("are what the watch held" in n for n in got.notes)
    assert got.launch.first_failure is not None and got.bytes_read == 0  # a whole read's


def test_the_watcher_reads_the_files_the_scan_reads(tmp_path):
    """One watcher process reads every watched location of a host, listing each folder itself:
    the files it reads are those the shell scan's find reads (the glob, regular files only, the
    owner's only), location by location, in one exec with an unwatched location between."""
    import getpass

    from runbook.evidence.log_filter import (
        parse_grep_output,
        remote_grep_many_argv,
        split_locations,
    )
    from runbook.transport.local import LocalTransport

    me = getpass.getuser()
    logs, other = tmp_path / "logs", tmp_path / "other"
    logs.mkdir()
    other.mkdir()
    for name in ("job-5_0.out", "job-5_1.out", "job-6_0.out", "notes.txt"):
        _write(logs / name, ["step 1", "Traceback (most recent call last):", name])
    (logs / "job-5_2.out").symlink_to(logs / "job-6_0.out")  # a link: never followed
    (logs / "job-5_3.out").mkdir()  # a folder: not a file
    _write(other / "job-5_0.out", ["Traceback (most recent call last):"])
    locations = [
        (str(logs), "job-5_*.out", me),
        (str(other), "*.out", ""),
        (str(logs), "job-6_*.out", "no-such-account-here"),
        (str(tmp_path / "missing"), "*.out", me),
    ]

    def files(watched: bool) -> list[set]:
        argv = remote_grep_many_argv(
            [(*loc, "W" if watched and n != 1 else "") for n, loc in enumerate(locations)]
        )
        per = split_locations(LocalTransport().run(argv).stdout)
        return [set(parse_grep_output(per.get(n, ""))) for n in range(len(locations))]

    assert files(True) == files(False)
    assert files(True)[0] == {str(logs / "job-5_0.out"), str(logs / "job-5_1.out")}
    assert files(True)[1] == {str(other / "job-5_0.out")} and files(True)[2] == set()


def _oldest_python3() -> str | None:
    """The oldest Python 3 this machine has besides runbook's own (pyenv's 3.6 here): a
    node's python3 is its distribution's (RHEL 8's platform Python is 3.6), not runbook's."""
    import glob

    found = sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.[6-9].*/bin/python3")),
        key=lambda p: [int(x) for x in p.split("/versions/")[1].split("/")[0].split(".")],
    )
    return found[0] if found else None


def test_the_watcher_runs_on_a_nodes_old_python3(tmp_path, monkeypatch):
    """The node program is sent to whatever python3 the node has: on Python 3.6 two periods
    read what they read on runbook's own Python (the same offsets, lines and series)."""
    import pytest

    old = _oldest_python3()
    if old is None:
        pytest.skip(
            "no Python 3.6-3.9 on this machine (pyenv's versions/3.x) to run the watcher on"
        )
    log = tmp_path / "slurm-77.out"
    _write(log, [f"step {s} loss 0.5" for s in range(50)] + [_mem(0, 49, 1000)], "w")
    site, job = _site(), _job(log)

    def two_periods() -> list:
        first = _period(site, job, collect.Held())
        _write(log, ["Traceback (most recent call last):", _mem(0, 50, 1001)])
        second = _period(site, job, _next(first))
        with open(log, "r+") as f:  # as it was, for the next interpreter's run
            f.truncate(first.watched[str(log)][1])
        # What each period read: where it stopped, how much, the lines it sent (the @@file
        # line's clock left out: the second run is later) and the series it holds.
        return [
            (p.watched, p.bytes_read, [x for x in p.raw.split("\n") if x[:1] == "/"], p.series)
            for p in (first, second)
        ]

    own = two_periods()
    assert own[1][1] > 0 and any("=RUNBOOK_INSTRUMENT" in x for x in own[1][2])
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python3").symlink_to(old)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    assert two_periods() == own


def test_a_whole_read_capped_by_dense_memory_lines_still_sees_the_failure_at_the_end(tmp_path):
    """A long run's log with a memory line per rank and step passes the 1 MiB of matching lines
    a read keeps (the earliest) long before it runs out: the failure at its end is read from its
    last lines, and the read says so; the watch's read, whose memory lines go apart, sees it in
    its own lines."""
    log = tmp_path / "slurm-77.out"
    oom = (REAL / "lightning_forward.log").read_text().splitlines()
    _write(log, [_mem(r, s, 20000 + s) for s in range(3000) for r in range(4)] + oom, "w")
    site, job = _site(), dataclasses.replace(_job(log), state="FAILED")
    whole = _read(site, job)
    ff = whole.launch.first_failure
    assert ff is not None and ff.kind == "oom", whole.notes
    assert any("read after the capped excerpt" in n for n in whole.notes), whole.notes
    watched = _period(site, _job(log), collect.Held())
    assert watched.launch.first_failure.kind == "oom"
    assert not any("read after the capped excerpt" in n for n in watched.notes)
