"""A large local log read by two greps over overlapping halves (issue 45): the same lines, the
same context, the same order as one grep over the whole file, wherever the matches fall; real
grep, real files."""

from __future__ import annotations

import random

import pytest

from runbook.evidence import files


def log(path, lines: int, hits: set[int]) -> None:
    with open(path, "w") as f:
        for i in range(lines):
            word = "torch.OutOfMemoryError: CUDA out of memory" if i in hits else "step"
            f.write(f"[rank{i % 8}] {i:07d} {word} {'x' * (i % 37)}\n")


def scan(path, monkeypatch, split: bool):
    monkeypatch.setattr(files, "SPLIT_FROM", 0 if split else 1 << 62)
    monkeypatch.setattr(files.os, "cpu_count", lambda: 2)
    return files._grep_local(str(path), "--log")


@pytest.mark.parametrize("seed", range(6))
def test_two_halves_read_what_one_grep_reads(tmp_path, monkeypatch, seed):
    rnd = random.Random(seed)
    n = 4000
    # Matches everywhere, and packed around the middle, where the halves meet.
    hits = {rnd.randrange(n) for _ in range(30)} | {n // 2 + d for d in range(-12, 13, 3)}
    path = tmp_path / "big.log"
    log(path, n, hits)
    monkeypatch.setattr(files, "_SPLIT_WINDOW", 4096)
    one, two = scan(path, monkeypatch, False), scan(path, monkeypatch, True)
    assert len(files._pieces(str(path), path.stat().st_size)) == 2
    assert two.lines == one.lines and two.tail == one.tail and not two.truncated
    assert {int(t.split()[1]) for _, t in two.lines if "OutOfMemory" in t} == hits


def test_the_halves_meet_at_line_starts_with_the_context_between_them():
    head = b"".join(b"line %d\n" % i for i in range(100))
    second, first_end = files.split_points(head, 1000)
    assert head[first_end - 1000 - 1 : first_end - 1000] == b"\n"
    assert head[second - 1000 - 1 : second - 1000] == b"\n"
    between = head[second - 1000 : first_end - 1000]
    assert between.count(b"\n") == files.OVERLAP_LINES
    assert files.split_points(b"x" * 5000, 0) is None  # no line ends near the middle: one grep


def test_a_piece_that_hit_the_cap_ends_the_excerpt_there(tmp_path, monkeypatch):
    path = tmp_path / "big.log"
    log(path, 4000, set(range(0, 4000, 2)))
    monkeypatch.setattr(files, "_SPLIT_WINDOW", 4096)
    monkeypatch.setattr(files, "KEEP_CAP", 2000)
    got = scan(path, monkeypatch, True)
    one = scan(path, monkeypatch, False)
    assert got.truncated and files.CAP_NOTE in got.notes
    assert got.lines == one.lines and one.truncated
