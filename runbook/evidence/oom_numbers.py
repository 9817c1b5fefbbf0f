"""The numbers of an OOM message: every size it states, named by the words around it.

Shared by the message families (evidence/oom_families/): each family's reader asks for the
fields its message states (`mib("tried", window, sizes)`), the GPU and its total, the other
processes a message lists. Pure functions of text."""

from __future__ import annotations

import re

from runbook.evidence.units import SIZE, to_mib
from runbook.lazyre import lazy

# The sizes a message states are read by grammar, not one pattern per field: every size in the
# message ("<number> <unit>") is found once, then named by the words around it, compared letter
# by letter in lower case with any whitespace between them (as `\s*` would: pastes glue and wrap
# words). One pattern for all sizes instead of one per field: compiling ~20 patterns that each
# carry the size grammar cost a `runbook diagnose` more than reading its log (bench/startup.py).
SIZE_ANY = lazy(SIZE, re.IGNORECASE)

# field -> (words before the size, words after it, whether a word must end there)
SIZED: dict[str, tuple[str, str, bool]] = {
    "tried": ("tried to allocate", "", False),
    "old_total": ("", "total capacity", False),
    "old_allocated": ("", "already allocated", False),
    "old_free": (";", "free", True),
    "old_reserved": ("", "reserved in total by pytorch", False),
    "old_cached": ("", "cached", True),
    "old_inactive": ("", "inactive", True),
    "allowed": ("", "allowed", True),
    "new_free": ("of which", "is free", False),
    # The sentence's own words, whatever precedes them: authors elide ("... 73.15 GiB is
    # allocated by PyTorch ...") and wrap.
    "new_allocated": ("", "is allocated by pytorch", False),
    # The same figure by the words that open its sentence, for a paste cut before its end.
    "new_allocated_head": ("of the allocated memory", "", False),
    "new_unallocated": ("", "is reserved by pytorch but unallocated", False),
    # A paste can stop right after the size ("this process has 39.23 GiB").
    "this_process": ("this process has", "", False),
    "private_pools": ("with", "allocated in private pools", False),
    "ma_allocated": ("currently allocated :", "", False),
    "ma_requested": ("requested :", "", False),
    "ma_total": ("device limit :", "", False),
    "ma_free": ("free ( according to cuda ) :", "", False),
    "ma_limit": ("pytorch limit ( set by user-supplied memory fraction ) :", "", False),
    "mps_allocated": ("mps allocated :", "", False),
    "mps_other": ("other allocations :", "", False),
    "mps_max": ("max allowed :", "", False),
    "nccl_calloc": ("failed to cuda calloc", "", False),
}
SIZED_WORDS = {k: ("".join(b.split()), "".join(a.split()), w) for k, (b, a, w) in SIZED.items()}

F = {
    # Retyped on a CJK keyboard the punctuation comes full width: "(GPU 0；".
    # "GPU N;" is the old format's whatever opens it: retyped, the parenthesis can go missing.
    "old_gpu": lazy(
        r"(?<![A-Za-z])[(（]?\s*GPU\s*(\d{1,18}(?!\d))\s*[;；]", re.IGNORECASE, needs="gpu"
    ),
    "nccl_gpu": lazy(r"\S+:\d{1,18}(?!\d):\d{1,18}(?!\d)\s*\[(\d{1,18}(?!\d))\]"),
    "nccl_rank": lazy(r"from\s*rank\s*(\d{1,18}(?!\d))", needs="rank"),
    "over_1eb": lazy(r"more\s*than\s*1\s*EB", re.IGNORECASE, needs=("than", "eb")),
    # What only the sentence format (PyTorch >= 2.1) says: its first sentence ends at the size
    # ("Tried to allocate 20.00 MiB. GPU 0 has"), where the old one goes on " (GPU 0; ...".
    # The request's closing period is the sentence format's; an ellipsis ("20.00 MiB...") is a
    # person cutting the message, in either format.
    "sentences": lazy(
        r"allocate\s*" + SIZE + r"\.(?!\.)|has\s*a\s*total\s*capac|Of\s*the\s*allocated\s*memory|"
        r"memory\s*in\s*use|but\s*unallocated|expandable_segments",
        re.IGNORECASE,
    ),
}
# The hint of PyTorch >= 1.10 names an allocator setting (max_split_size_mb, later
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments): proof that the job's PyTorch has them.
# The old message's last field, with what may follow it on the same line: closing markup, and
# the c10 source location that PyTorch 1.5 and older appended ("(malloc at ...:289)").
OLD_LINE_TAIL = lazy(
    r"reserved\s*in\s*total\s*by\s*PyTorch\s*(\))[ \t`'\"*_.]*(?:\(malloc\s+at\s[^()\n]*\)[ \t`'\"*_.]*)?",
    re.IGNORECASE,
    needs="total",
)
ALLOC_HINT = lazy(
    r"try\s*setting\s*(?:max_split_size_mb|PYTORCH_(?:CUDA_)?ALLOC_CONF)",
    re.IGNORECASE,
    needs="setting",
)


def follows(text: str, pos: int, words: str) -> int | None:
    """Where `words` (lower case, no spaces) end if they follow `pos`, whitespace allowed
    anywhere; None if they do not."""
    i, n = pos, len(text)
    for ch in words:
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i].lower() != ch:
            return None
        i += 1
    return i


def precedes(text: str, pos: int, words: str) -> int | None:
    """Where `words` start if they end right before `pos` (whitespace allowed); None if not."""
    i = pos
    for ch in reversed(words):
        while i > 0 and text[i - 1].isspace():
            i -= 1
        if i <= 0 or text[i - 1].lower() != ch:
            return None
        i -= 1
    return i


def sizes(window: str) -> list[tuple[int, int, float]]:
    """(start, end, MiB) of every size in the window, in order."""
    return [(m.start(), m.end(), to_mib(m.group(1), m.group(2))) for m in SIZE_ANY.finditer(window)]


def mib(name: str, window: str, sizes: list) -> float | None:
    """The first of the window's sizes (`_sizes`) that the field's words surround."""
    before, after, word_end = SIZED_WORDS[name]
    for start, end, mib in sizes:
        if before and precedes(window, start, before) is None:
            continue
        if after:
            stop = follows(window, end, after)
            if stop is None:
                continue
            if word_end and stop < len(window) and (window[stop].isalnum() or window[stop] == "_"):
                continue
        return mib
    return None


def number_before(text: str, pos: int) -> tuple[int, str]:
    """The digits that end right before `pos` (whitespace allowed), and where they start; ""
    where there are none."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    end = i
    while i > 0 and text[i - 1].isdigit():
        i -= 1
    return i, text[i:end]


def gpu_total(window: str, sizes: list) -> tuple[int | None, float] | None:
    """ "GPU 3 has a total capacity of X" (also "capacty"; the index can be missing, "GPU  has"):
    the GPU index and the size."""
    for start, _end, mib in sizes:
        for words in ("hasatotalcapacityof", "hasatotalcapactyof"):
            at = precedes(window, start, words)
            if at is None:
                continue
            i, index = number_before(window, at)
            if precedes(window, i, "gpu") is not None and len(index) <= 18:
                return (int(index) if index else None), mib
    return None


def other_processes(window: str, sizes: list) -> list[tuple[int, float]]:
    """ "Process N has X memory in use": another process on the card. Case matters: "this
    process has X" is the failing process itself."""
    found = []
    for start, end, mib in sizes:
        if follows(window, end, "memoryinuse") is None:
            continue
        at = precedes(window, start, "has")
        if at is None:
            continue
        i, pid = number_before(window, at)
        head = window[:i].rstrip()
        if pid and len(pid) <= 18 and head.endswith("Process"):
            found.append((int(pid), mib))
    return found
