"""Classify by what each fix can buy, in MiB (docs/design.md §3): numbers in, verdict out.

The numbers are the shapes of the held-out misses issue 15 names (a full 24 GiB card that is not
"near capacity"; a thin pool just above the request; a pool of many GiB below the request that
the driver's free memory tops up), built as OomMessage values: the decision is tested as data,
without a log. The labelled real records of the corpus are scored in test_corpus_verdicts.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from runbook.diagnosis import Evidence, classify
from runbook.evidence.launcher_log import LaunchReport
from runbook.evidence.oom_message import OomMessage
from runbook.playbook import load

T = load().thresholds
GIB = 1024.0


def oom(**numbers) -> OomMessage:
    return OomMessage(
        format="new", family="caching", device="CUDA", text="CUDA out of memory.", line=0, **numbers
    )


def verdict(m: OomMessage):
    launch = LaunchReport(ooms=[m])
    return classify(Evidence(launch=launch), T)


def by_numbers(tried, total, free, allocated, unallocated):
    """The verdict on a message's five numbers, in MiB."""
    return verdict(
        oom(
            tried_mib=tried,
            total_mib=total,
            free_mib=free,
            allocated_by_pytorch_mib=allocated,
            reserved_unallocated_mib=unallocated,
        )
    )


def test_full_card_not_near_capacity_is_true_oom():
    # 24 GiB card, tens of MiB free, a request of the same order, no pool: reserved/total is
    # only 0.80 (CUDA context, NCCL and cuDNN hold the rest), yet the card is full.
    d = by_numbers(40.0, 23.65 * GIB, 28.5, 18.9 * GIB, 0.0)
    assert d.verdict == "true_oom", d.reasons
    assert not d.with_allocator
    assert "the card is full" in d.reasons[0]


def test_one_request_of_most_of_the_card_is_true_oom_but_never_called_a_full_card():
    # mmdetection#3585's shape: 6.96 GiB asked on a 7.80 GiB card with 6.05 GiB free. The job
    # needs more than the card; the report must not say the card was full.
    d = by_numbers(6.96 * GIB, 7.80 * GIB, 6.05 * GIB, 721.23, 70.77)
    assert d.verdict == "true_oom", d.reasons
    assert "the card is full" not in d.reasons[0]
    assert "the request does not fit (one request of 89% of the card)" in d.reasons[0]
    assert "halving the micro-batch alone may not be enough" in d.reasons[0]


def test_thin_pool_just_above_the_request_is_true_oom_with_the_allocator():
    # 260 MiB unallocated covers a 200 MiB request, but it is 1.1 % of the card.
    d = by_numbers(200.0, 23.65 * GIB, 30.0, 22.0 * GIB, 260.0)
    assert d.verdict == "true_oom", d.reasons
    assert d.with_allocator
    assert d.alternatives == ["fragmentation"] and d.confidence == "medium"


def test_pool_below_the_request_topped_up_by_free_memory_is_fragmentation():
    # 5 GiB unallocated, 6 GiB asked, 1.5 GiB free: the allocator setting can win back 6.5 GiB.
    d = by_numbers(6 * GIB, 79.1 * GIB, 1.5 * GIB, 70.0 * GIB, 5 * GIB)
    # 5 GiB is 6.3 % of an 80 GiB card: below the 10 % share, so still a thin pool there...
    assert d.verdict == "true_oom" and d.with_allocator
    # ...and a real share of a 40 GiB card.
    d = by_numbers(6 * GIB, 39.4 * GIB, 1.5 * GIB, 31.0 * GIB, 5 * GIB)
    assert d.verdict == "fragmentation", d.reasons
    assert "can win back" in d.reasons[0]


def test_pool_and_free_short_of_the_request_is_true_oom():
    d = by_numbers(8 * GIB, 39.4 * GIB, 1.0 * GIB, 31.0 * GIB, 5 * GIB)
    assert d.verdict == "true_oom" and not d.with_allocator
    assert "fragmentation" not in d.alternatives


def test_halving_that_cannot_cover_the_shortfall_lowers_confidence():
    # 3 GiB allocated: halving frees ~1.5 GiB; 10 GiB short.
    d = by_numbers(12 * GIB, 15.7 * GIB, 2 * GIB, 3 * GIB, 0.1)
    assert d.confidence == "low"
    assert any("may not be enough" in r for r in d.reasons)


def test_card_not_full_with_a_pool_is_fragmentation_as_before():
    # The driver still had memory; a pool bigger than the request: the allocator held it.
    d = by_numbers(20.0, 4096.0, 2406.4, 825.15, 24.85)
    assert d.verdict == "fragmentation"


def test_allocator_hint_alone_is_an_oom_without_numbers():
    from runbook.evidence.launcher_log import scan

    text = (
        "[rank2]: If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
    )
    d = classify(Evidence(launch=scan(text)), T)
    assert d.verdict == "unknown" and d.oom is not None and d.oom.family == "hint"
    assert d.evidence.launch.first_failure.ranks == [2]
    assert "numbers were cut" in d.reasons[0]


@pytest.mark.parametrize("share", [0.02, 0.08, 0.12, 0.5])
def test_pool_share_threshold_is_the_playbooks(share):
    total = 24 * GIB
    pool = share * total
    # Everything else on the card is this process's (the context allowance included), so no
    # memory is unexplained and no co-tenant is inferred.
    alloc = total - 10.0 - pool - T.cuda_context_allowance_mib
    d = by_numbers(pool * 0.9, total, 10.0, alloc, pool)
    want = "fragmentation" if share >= T.fragmentation_min_pool_share else "true_oom"
    assert d.verdict == want


# gtad#30 (own-oom-065), replayed as the reporter pasted it: the pre-1.4 "cached" wording. The
# reporter fixed it with batch_size / 2.
CACHED = (
    "CUDA out of memory. Tried to allocate 4.00 GiB (GPU 0; 10.73 GiB total capacity; 4.41 GiB "
    "already allocated; 1.75 GiB free; 3.78 GiB cached)"
)


@pytest.mark.parametrize(
    "text,knows",
    [
        (CACHED, False),
        # The hint is printed on the message's own line, and came with the setting: a line that
        # ends at the parenthesis is a PyTorch without it; a text cut inside the line tells
        # nothing; a hint wrapped onto the next line still counts.
        (CACHED.replace("3.78 GiB cached", "8.19 GiB reserved in total by PyTorch"), False),
        (
            CACHED.replace("3.78 GiB cached)", "8.19 GiB reserved in total by PyTorch) If res"),
            None,
        ),
        (
            CACHED.replace(
                "3.78 GiB cached)", "8.19 GiB reserved in total by PyTorch)\nIf reserved"
            )
            + " memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
            True,
        ),
        (
            CACHED.replace("3.78 GiB cached)", "8.19 GiB reserved in total by PyTorch) If reserved")
            + " memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
            True,
        ),
        (
            "CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 10.73 "
            "GiB of which 1.75 GiB is free.",
            True,
        ),
        # The line still ends at the parenthesis when a log line follows it (detectron2's
        # hooks, own-oom-130/131): hard-wrap repair joins lines, the line end must survive it.
        (
            CACHED.replace("3.78 GiB cached", "8.19 GiB reserved in total by PyTorch")
            + "\n[06/09 11:05:25 d2.engine.hooks]: Total training time: 0:01:02",
            False,
        ),
        (
            "**"
            + CACHED.replace("3.78 GiB cached", "8.19 GiB reserved in total by PyTorch")
            + "\n**",
            False,
        ),
        # PyTorch 1.5 and older appended the c10 source location on the same line (own-oom-158).
        (
            CACHED.replace("3.78 GiB cached", "8.19 GiB reserved in total by PyTorch")
            + " (malloc at ..\\c10\\cuda\\CUDACachingAllocator.cpp:289)\n(no backtrace available)",
            False,
        ),
        # A log line that follows a message cut inside its line does not make it end there.
        (
            CACHED.replace("3.78 GiB cached)", "8.19 GiB reserved in total by PyTorch) If res")
            + "\n[06/09 11:05:25 d2.engine.hooks]: Total training time: 0:01:02",
            None,
        ),
    ],
    ids=[
        "cached-wording",
        "reserved-line-ends-without-hint",
        "reserved-cut-inside-the-line",
        "reserved-hint-wrapped",
        "reserved-with-hint",
        "sentence-format",
        "reserved-line-ends-before-a-log-line",
        "reserved-line-ends-before-closing-markup",
        "reserved-line-ends-with-c10-location",
        "cut-line-before-a-log-line",
    ],
)
def test_the_message_wording_says_whether_allocator_settings_exist(text, knows):
    from runbook.evidence.oom_message import parse

    assert parse(text).allocator_conf is knows


def test_a_pytorch_without_allocator_settings_cannot_take_the_fragmentation_rung():
    from runbook.evidence.oom_message import parse

    m = parse(CACHED)
    d = verdict(m)
    # The 3.78 GiB pool + 1.75 GiB free would cover the 4 GiB request on a newer PyTorch...
    newer = verdict(dataclasses.replace(m, allocator_conf=True))
    assert newer.verdict == "fragmentation", newer.reasons
    # ...but this one has no PYTORCH_CUDA_ALLOC_CONF: the rung would rerun into the same OOM.
    assert d.verdict == "true_oom" and "fragmentation" not in d.alternatives, d.reasons
    assert not d.with_allocator
    assert "before 1.4" in d.reasons[0] and "can win back nothing" in d.reasons[0]
