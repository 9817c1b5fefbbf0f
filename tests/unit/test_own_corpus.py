"""runbook's own corpus (tests/data/corpus): real records from public threads, each with its source
and a hand-made answer key, read as the shared corpus is read. The same checks as the shared
corpus's tests (tests/corpus_checks.py); `bench/corpus_score.py` reports the scores per split."""

from __future__ import annotations

import re

import pytest

from tests import corpus_checks as cc
from tests.conftest import corpus_dir

OWN = {f: cc.read(cc.OWN / f) for f in cc.FILES}
ALL = [(cc.FILES[f], r) for f, recs in OWN.items() for r in recs]
SHARED_TEXTS = {r.get("text") for f in cc.FILES for r in cc.read(corpus_dir() / f)}


def numbers(rec: dict) -> tuple:
    """An OOM message's own numbers: the same message, whatever quoting."""
    f = rec["fields"]
    keys = ("tried_mib", "total_mib", "free_mib", "allocated_by_pytorch_mib")
    return tuple(None if f.get(k) is None else round(f[k], 2) for k in keys)


SHARED_OOM_NUMBERS = {numbers(r) for r in cc.read(corpus_dir() / "oom_messages.jsonl")}


@pytest.mark.parametrize("kind, rec", ALL, ids=[r["id"] for _, r in ALL])
def test_own_record(kind, rec):
    assert cc.CHECKS[kind](rec) == []


def test_every_own_record_is_sourced_split_and_new():
    assert len(ALL) >= 30
    ids = [r["id"] for _, r in ALL]
    assert len(ids) == len(set(ids))
    for _, r in ALL:
        url = r.get("source_url") or ""
        assert re.match(r"https://\S+$", url), r["id"]
        assert r["split"] in ("tune", "measure"), r["id"]
        assert r["text"] not in SHARED_TEXTS, f"{r['id']} copies a shared corpus record"
    for r in OWN["oom_messages.jsonl"]:
        if any(n is not None for n in numbers(r)):  # a message without numbers: its text decides
            assert numbers(r) not in SHARED_OOM_NUMBERS, f"{r['id']} is a shared record's message"
    assert {r["split"] for _, r in ALL} == {"tune", "measure"}


def test_own_answer_keys_were_not_made_by_the_parser():
    """build.py converts the printed sizes itself: spot-check it against the printed strings."""
    from tests.data.corpus.build import mib

    assert mib("627.20 KiB") == pytest.approx(0.6125)
    assert mib("0 bytes") == 0 and mib("1.96 GiB") == pytest.approx(2007.04)
    for r in OWN["oom_messages.jsonl"]:
        for printed in r["fields_raw"].values():
            if isinstance(printed, str):
                assert printed in r["text"], (r["id"], printed)


def test_verdicts_agree_with_confirmed_labels():
    """Labelled records whose message carries the numbers (shared and own): runbook's verdict from
    the message alone against what the thread reported fixed it. docs/design.md §3: labels are evidence,
    not ground truth (a smaller batch fixes fragmentation too), so the bar is a rate, and every
    disagreement is listed."""
    from runbook.evidence.oom_message import parse

    shared = cc.labelled(cc.read(corpus_dir() / "oom_messages.jsonl"))
    own = cc.labelled(OWN["oom_messages.jsonl"])
    judged = [r for r in shared + own if (m := parse(r["text"])) and m.tried_mib is not None]
    misses = {r["id"]: cc.verdict(r) for r in judged if cc.verdict(r)}
    assert len(judged) >= 12
    assert 1 - len(misses) / len(judged) >= 0.9, misses
