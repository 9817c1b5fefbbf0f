"""PyTorch's caching allocator (CUDA, HIP, XPU): `CUDA out of memory. Tried to allocate X` then
the old parenthesised numbers (before 2.1: `(GPU N; T total capacity; A already allocated; F
free; R reserved in total by PyTorch)`, the oldest `X cached`, `X allowed;`) or the new
sentences (2.1+: `GPU N has a total capacity of T of which F is free. ... Of the allocated memory
A is allocated by PyTorch, and U is reserved by PyTorch but unallocated.`)."""

from __future__ import annotations

import re

from runbook.evidence import oom_numbers as n
from runbook.evidence.oom_families import Family, anchor
from runbook.evidence.units import SIZE


def fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    dev = (m.groupdict().get("dev") or "CUDA").upper()
    f: dict = {"device": dev, "tried_mib": n.mib("tried", window, sizes)}
    g = n.F["old_gpu"].search(window)
    old = g is not None or n.mib("old_total", window, sizes) is not None
    if old:
        f["gpu"] = int(g.group(1)) if g else None
        _old_fields(f, window, sizes, line_ends)
    else:
        _new_fields(f, window, sizes)
    f["limit_mib"] = n.mib("allowed", window, sizes)
    if n.F["over_1eb"].search(window[:200]):
        f["family"] = "over_1eb"
    f["format"] = (
        "other" if dev != "CUDA" or f.get("family") == "over_1eb" else ("old" if old else "new")
    )
    return f


def _old_fields(f: dict, window: str, sizes: list, line_ends: frozenset[int]) -> None:
    f["total_mib"] = n.mib("old_total", window, sizes)
    f["allocated_by_pytorch_mib"] = n.mib("old_allocated", window, sizes)
    f["free_mib"] = n.mib("old_free", window, sizes)
    f["reserved_total_mib"] = n.mib("old_reserved", window, sizes)
    f["reserved_unallocated_mib"] = n.mib("old_cached", window, sizes)
    f["inactive_mib"] = n.mib("old_inactive", window, sizes)
    if f["reserved_unallocated_mib"] is not None and f["reserved_total_mib"] is None:
        f["allocator_conf"] = False
    elif n.ALLOC_HINT.search(window):
        f["allocator_conf"] = True
    elif (t := n.OLD_LINE_TAIL.search(window)) and any(
        t.start(1) < e <= t.end() for e in (*line_ends, len(window))
    ):
        # PyTorch prints the hint on the message's own line, and the hint came with the
        # setting it names (pytorch#44742): a line that ends at the closing parenthesis
        # is a PyTorch without PYTORCH_CUDA_ALLOC_CONF (a text cut inside the line, as
        # titles are, still tells nothing).
        f["allocator_conf"] = False


def _new_fields(f: dict, window: str, sizes: list) -> None:
    if gt := n.gpu_total(window, sizes):
        f["gpu"], f["total_mib"] = gt
    f["free_mib"] = n.mib("new_free", window, sizes)
    f["allocated_by_pytorch_mib"] = n.mib("new_allocated", window, sizes)
    if f["allocated_by_pytorch_mib"] is None:
        f["allocated_by_pytorch_mib"] = n.mib("new_allocated_head", window, sizes)
    f["reserved_unallocated_mib"] = n.mib("new_unallocated", window, sizes)
    f["this_process_mib"] = n.mib("this_process", window, sizes)
    f["private_pools_mib"] = n.mib("private_pools", window, sizes)
    for pid, mib in n.other_processes(window, sizes):
        f.setdefault("other_process_pids", []).append(pid)
        f.setdefault("other_process_mib", []).append(mib)
    if n.F["sentences"].search(window):
        f["allocator_conf"] = True  # the sentence format is PyTorch >= 2.1's
    else:
        # Only the first sentence ("CUDA out of memory. Tried to allocate 20.00 MiB"):
        # both formats start so. Which one, oom_message guesses from the exception name.
        f["format_guess"] = True


FAMILY = Family(
    name="caching",
    anchors=(
        # "out of the memory": how people retype it.
        anchor(r"\b(?P<dev>CUDA|HIP|XPU)\s*out\s*of\s*(?:the\s*)?memory\b(?!')", "memory"),
        # Any case: people retype the message ("cuda out of memory, tried to allocate 50MiB(GPU
        # 0;"); a size and "(GPU" after it keep prose out.
        anchor(
            r"(?<![A-Za-z])Tried\s*to\s*allocate\s*" + SIZE + r"\s*\(\s*GPU",
            "allocate",
            flags=re.IGNORECASE,
        ),
    ),
    fields=fields,
    order=40,
    sized=True,
)
