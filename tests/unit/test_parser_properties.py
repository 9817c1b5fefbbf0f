"""Properties every parser must keep on any input: never raise, and a message survives being
hard-wrapped at any column."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from runbook.errors import InputError
from runbook.evidence import launcher_log, oom_message
from runbook.slurm import hostlist
from runbook.slurm import text as slurm_text
from tests import corpus_checks
from tests.conftest import corpus_records

OOMS = corpus_records("oom_messages.jsonl")
SINGLE_LINE = [r for r in OOMS if "\n" not in r["text"].strip() and r["fields"].get("tried_mib")]
NUMERIC = corpus_checks.NUMERIC[:7]  # the sizes every caching-allocator message can print

fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fast
@given(st.text())
def test_text_parsers_never_raise_on_arbitrary_text(text):
    oom_message.parse_all(text)
    launcher_log.scan(text)


@fast
@given(st.binary())
@example(b"|")  # once crashed the sacct header detection
def test_text_parsers_never_raise_on_binary_junk(data):
    text = data.decode("utf-8", errors="replace")
    oom_message.parse_all(text)
    launcher_log.scan(text)
    with contextlib.suppress(InputError):  # a clear refusal is the right answer for junk
        slurm_text.parse(text)


@fast
@given(st.text(alphabet="abc[]-,0123456789%_.", max_size=40))
def test_hostlist_raises_only_input_errors(expr):
    with contextlib.suppress(InputError):
        hostlist.expand(expr)


def test_a_100_mb_line():
    line = "loss=2.31 " * (10 << 20)  # 100 MiB, one line
    assert oom_message.parse_all(line) == []
    assert launcher_log.scan(line).first_failure is None
    tail = (
        "x" * (100 << 20) + "\n[rank1]: torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is "
        "free."
    )
    found = oom_message.parse_all(tail)
    assert len(found) == 1 and found[0].rank == 1 and found[0].tried_mib == 2048.0


def _fold(text: str, width: int) -> str:
    """What `fold -w WIDTH` (a terminal, a pager) does: a newline every WIDTH characters."""
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


@pytest.mark.parametrize("rec", SINGLE_LINE, ids=[r["id"] for r in SINGLE_LINE])
@settings(max_examples=25, deadline=None)
@given(width=st.integers(min_value=8, max_value=200))
def test_message_survives_hard_wrap_at_any_column(rec, width):
    text = rec["text"].strip()
    whole = oom_message.parse(text)
    wrapped = oom_message.parse(_fold(text, width))
    assert wrapped is not None
    for k in NUMERIC:
        assert getattr(wrapped, k) == getattr(whole, k), (k, width)


@pytest.mark.parametrize("rec", SINGLE_LINE[:20], ids=[r["id"] for r in SINGLE_LINE[:20]])
@settings(max_examples=15, deadline=None)
@given(width=st.integers(min_value=20, max_value=120))
def test_message_survives_word_wrap_with_quote_markers(rec, width):
    """What a chat or an issue tracker does: wrap at spaces and quote each line with '> '."""
    import textwrap

    text = rec["text"].strip()
    quoted = "\n".join("> " + line for line in textwrap.wrap(text, width, break_long_words=False))
    whole, wrapped = oom_message.parse(text), oom_message.parse(quoted)
    assert wrapped is not None
    for k in NUMERIC:
        assert getattr(wrapped, k) == getattr(whole, k), (k, width)
