"""Every real OOM message in ../shared/corpus/oom_messages.jsonl against its answer key."""

from __future__ import annotations

import pytest

from runbook.evidence.oom_message import parse, parse_all
from tests.conftest import corpus_records

RECORDS = corpus_records("oom_messages.jsonl")
NUMERIC = [
    "tried_mib", "total_mib", "free_mib", "allocated_by_pytorch_mib", "reserved_total_mib",
    "reserved_unallocated_mib", "this_process_mib", "private_pools_mib", "limit_mib",
    "mps_other_allocations_mib", "inactive_mib",
]  # fmt: skip


def close(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return abs(got - want) <= max(0.005 * abs(want), 0.01)  # MiB within 0.5 %


@pytest.mark.parametrize("rec", RECORDS, ids=[r["id"] for r in RECORDS])
def test_record(rec):
    msgs = parse_all(rec["text"])
    assert len(msgs) == 1, f"expected one message, found {[m.family for m in msgs]}"
    m = msgs[0]
    want = rec["fields"]
    assert m.format == rec["format"]
    wrong = {
        k: (getattr(m, k), want.get(k)) for k in NUMERIC if not close(getattr(m, k), want.get(k))
    }
    assert not wrong, wrong
    assert m.gpu == want.get("gpu") and m.rank == want.get("rank")
    assert m.other_process_pids == (want.get("other_process_pids") or [])
    assert len(m.other_process_mib) == len(want.get("other_process_mib") or [])
    assert all(
        close(a, b)
        for a, b in zip(m.other_process_mib, want.get("other_process_mib") or [], strict=True)
    )
    # The message as found: its first line is in the original text.
    assert m.text.splitlines()[0] in rec["text"]


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
