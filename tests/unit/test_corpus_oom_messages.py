"""Every real OOM message in ../shared/corpus/oom_messages.jsonl against its answer key."""

from __future__ import annotations

import pytest

from runbook.evidence.oom_message import parse, parse_all
from tests import corpus_checks
from tests.conftest import corpus_records

RECORDS = corpus_records("oom_messages.jsonl")


@pytest.mark.parametrize("rec", RECORDS, ids=[r["id"] for r in RECORDS])
def test_record(rec):
    assert corpus_checks.oom(rec) == []


def test_corpus_is_all_there():
    assert len(RECORDS) >= 87


def test_two_ranks_two_messages_in_order():
    a = next(r for r in RECORDS if r["id"] == "oom-001")["text"]
    b = next(r for r in RECORDS if r["id"] == "oom-002")["text"]
    text = "[rank5]: " + a + "\nprogress 10%\n[rank2]: " + b
    msgs = parse_all(text)
    assert [(m.rank, m.format) for m in msgs] == [(5, "new"), (2, "old")]


def test_no_message_in_ordinary_text():
    assert parse("epoch 3 step 100 loss 2.31 mem 70.1 GiB\nall good") is None
