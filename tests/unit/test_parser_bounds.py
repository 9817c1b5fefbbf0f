"""Every parser entry point, on any text and on the hostile inputs of the bounded-inputs issue,
raises nothing but the project's own errors and enumerates nothing beyond the job's size.

Time and memory on those inputs are measured in bench/hostile.py (targets live there, not in
timed tests); here each input must give the right answer, or a clear refusal."""

from __future__ import annotations

import contextlib
import gzip
import io
import lzma
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runbook.errors import InputError, RunbookError
from runbook.evidence import (
    events,
    files,
    gpu_health,
    launcher_log,
    log_filter,
    nvsmi,
    oom_message,
    xid,
)
from runbook.evidence.units import MAX_DIGITS, small_int
from runbook.slurm import hostlist, paths
from runbook.slurm import text as slurm_text

fast = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = "9" * 5000  # past Python's 4300-digit int-string limit
OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.02 GiB is free."
)

# Text built from the pieces parsers look for, with runs that make naive regexes backtrack.
pieces = st.sampled_from(
    [
        "NVRM: Xid (PCI:0000:3b:00): ",
        "SXid (PCI:0000:05:00): ",
        "[rank",
        "]: ",
        "[Rank ",
        "] Watchdog caught collective operation timeout",
        "srun: error: gpu-01: tasks ",
        ": Killed",
        "Exited with exit code ",
        "Tried to allocate ",
        " GiB",
        " MiB",
        "GPU ",
        "Process ",
        " has ",
        "(local_rank: ",
        "(pid: ",
        "exitcode: ",
        "JobId=",
        " NodeList=gpu-[",
        "-",
        ",",
        "]",
        ":",
        "| ",
        " C ",
        "python ",
        "Volatile",
        "DRAM Uncorrectable",
        "    ",
        "\t",
        "\n",
        "\r",
        LONG[:40],
    ]
)
hostile = st.lists(
    st.one_of(pieces, st.text(max_size=8), st.integers(0, 10**30).map(str)), max_size=40
).map("".join)


def every_parser(text: str) -> None:
    oom_message.parse_all(text)
    launcher_log.scan(text)
    launcher_log.scan(text, nodes="gpu-[01-02]", tasks_per_node=2, world_size=4)
    xid.parse(text)
    nvsmi.parse_memory_health(text)
    nvsmi.parse_compute_apps(text)
    gpu_health.health_from_sections("gpu-01", gpu_health.split_sections(text))
    log_filter.parse_grep_output(text)
    log_filter.split_locations(text)
    with contextlib.suppress(InputError):
        slurm_text.parse(text)
    with contextlib.suppress(InputError):
        hostlist.expand(text.strip()[:200])
    with contextlib.suppress(RunbookError):
        paths.locate(text[:200], job_id="7", work_dir="/w")


@fast
@given(hostile)
def test_every_parser_on_hostile_text(text):
    every_parser(text)


@fast
@given(st.text())
def test_every_parser_on_any_text(text):
    every_parser(text)


@pytest.mark.parametrize(
    "text",
    [
        f"[rank{LONG}]: {OOM}",
        f"[Rank {LONG}] Watchdog caught collective operation timeout",
        f"srun: error: gpu-01: task 3: Exited with exit code {LONG}",
        f"srun: error: gpu-01: task {LONG}: Killed",
        f"NVRM: Xid (PCI:0000:3b:00): {LONG}, pid=1",
        f"pid, used_gpu_memory [MiB]\n{LONG}, 100 MiB",
        f"| 0 N/A N/A {LONG} C python {LONG}MiB |",
        OOM + " " + "1" * 16000,
        "DRAM Uncorrectable" + " " * 40000 + ": 0",
        f"JobId=1 JobName=x JobState=FAILED ExitCode={LONG}:0",
        "%" + LONG + "j",
    ],
    ids=lambda t: t[:30],
)
def test_numbers_past_the_digit_limit_are_never_int_parsed(text):
    every_parser(text)


def test_small_int_bounds():
    assert small_int("12") == 12 and small_int("-3") == -3 and small_int(" 7 ") == 7
    assert small_int("9" * MAX_DIGITS) == int("9" * MAX_DIGITS)
    for bad in ("9" * (MAX_DIGITS + 1), LONG, "", None, "-", "1e3", "١٢"):
        assert small_int(bad) is None, bad


def test_ranks_beyond_the_job_are_set_aside_and_said():
    r = launcher_log.scan(
        "[Rank 100000000] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds"
    )
    assert r.suspect_ranks == [] and any("100000000" in n for n in r.notes)
    r = launcher_log.scan("[Rank 9] Watchdog caught collective operation timeout", world_size=8)
    assert r.timed_out_ranks == [] and any("size of 8" in n for n in r.notes)
    many = "srun: error: n: tasks " + ",".join(["0-99999"] * 20) + ": Killed"
    ranks = {e.rank for e in launcher_log.scan(many).events}
    assert len(ranks) <= launcher_log.MAX_RANKS and max(r for r in ranks if r is not None) < 100000


def test_srun_task_list_complement_and_caps():
    assert events.task_ranks("0-3,5,7-9") == [0, 1, 2, 3, 5, 7, 8, 9]
    assert events.task_ranks("0-99999", limit=10) == list(range(10))
    assert events.task_ranks(f"0-{LONG}") == []


def test_slurm_pattern_width_is_capped():
    loc = paths.locate("/w/%" + "9" * 30 + "j.out", job_id="7", work_dir="/w")
    assert loc.name_glob == "0000000007.out"


# -- reading files as people have them ----------------------------------------------------------
LOG = OOM + "\n"


def _excerpt(path, **kw) -> str:
    return files.read_text_input(str(path), "--log", **kw).text()


def test_gzip_and_xz_logs_read_by_their_magic_bytes(tmp_path):
    (tmp_path / "a.log.1").write_bytes(gzip.compress(LOG.encode()))  # rotated: no .gz suffix
    (tmp_path / "b.xz").write_bytes(lzma.compress(LOG.encode()))
    assert "Tried to allocate" in _excerpt(tmp_path / "a.log.1")
    assert "Tried to allocate" in _excerpt(tmp_path / "b.xz")
    (tmp_path / "cut.gz").write_bytes(gzip.compress(LOG.encode() * 100)[:-30])
    with pytest.raises(InputError, match="cut.gz"):
        _excerpt(tmp_path / "cut.gz")


def test_nul_runs_of_a_crash_truncated_log_are_dropped_not_called_binary(tmp_path):
    p = tmp_path / "crash.log"
    p.write_bytes(b"step 1\n" + b"\0" * 9000 + b"\n" + LOG.encode())
    assert "Tried to allocate" in _excerpt(p)
    elf = tmp_path / "core"
    elf.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InputError, match="binary data"):
        _excerpt(elf)


def test_a_fifo_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer: what `<(zcat log)` is
        with open(fifo, "wb") as w:
            w.write(LOG.encode())
        os._exit(0)
    try:
        assert "Tried to allocate" in _excerpt(fifo)
    finally:
        os.waitpid(pid, 0)


def test_long_lines_are_cut_and_matching_lines_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "WHOLE_BELOW", 1 << 16)
    monkeypatch.setattr(files, "KEEP_CAP", 4 * files.LINE_CAP)
    p = tmp_path / "tqdm.log"
    p.write_bytes(b"\r 10%|#  | 1/10 Error" * 50_000 + b"\n" + LOG.encode())
    e = files.read_text_input(str(p), "--log")
    assert "Tried to allocate" in e.text()
    assert all(len(t) <= files.LINE_CAP + 64 for _, t in e.lines)
    assert any("cut" in n for n in e.notes)
    many = tmp_path / "many.log"
    many.write_text("CUDA error: x\n" * 20_000 + LOG)
    e = files.read_text_input(str(many), "--log")
    assert e.truncated and sum(len(t) for _, t in e.lines) <= files.KEEP_CAP + files.LINE_CAP


def test_large_file_through_grep_keeps_failure_lines_and_tail(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "WHOLE_BELOW", 1 << 12)
    p = tmp_path / "big.log"
    p.write_text("step 1 loss 2.0\n" * 2000 + "[rank3]: " + OOM + "\n" + "step 2 loss 1.9\n" * 5)
    e = files.read_text_input(str(p), "--log")
    assert "[rank3]: torch.OutOfMemoryError" in e.text()
    assert e.tail[-1] == "step 2 loss 1.9" and len(e.tail) == files.TAIL_LINES
    offset = p.read_bytes().index(b"[rank3]:")
    assert e.numbering == "byte" and (offset, "[rank3]: " + OOM) in e.lines


def test_kernel_log_over_the_whole_size_keeps_xid_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "WHOLE_BELOW", 1 << 12)
    p = tmp_path / "dmesg"
    p.write_text(
        "[ 1.0] usb 1-1: new device\n" * 1000
        + "[ 9.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
    )
    text = files.read_text_input(str(p), "--dmesg", keep="kernel").text()
    assert [e.xid for e in xid.parse(text).events] == [79]


def test_standard_input_stream(monkeypatch):
    class Stdin(io.TextIOWrapper):
        def isatty(self):
            return False

    monkeypatch.setattr("sys.stdin", Stdin(io.BytesIO(LOG.encode())))
    assert "Tried to allocate" in files.read_text_input("-", "--log").text()


def test_errors_name_the_input(tmp_path):
    with pytest.raises(InputError, match="nope.log: no such file"):
        _excerpt(tmp_path / "nope.log")
    with pytest.raises(InputError, match="is a directory"):
        _excerpt(tmp_path)
    (tmp_path / "empty.log").write_text("")
    with pytest.raises(InputError, match="empty"):
        _excerpt(tmp_path / "empty.log")


def test_corpus_samples_still_read_through_the_file_path(tmp_path):
    log = Path(__file__).resolve().parents[2] / "examples" / "logs" / "torchrun-oom-rank3.log"
    assert launcher_log.scan(_excerpt(log)).first_failure.ranks == [3]
