"""Slurm hostlist expressions (`gpu-[01-04,07]`), expanded as Slurm does.

Where dialects disagree, Slurm wins (corpus README): no ClusterShell step syntax (`/2`), no folding
of trailing digits into the range (`nova[1-4]56` is nova156..nova456 by concatenation: 4 names),
zero padding taken from the lower bound as written.
"""

from __future__ import annotations

import itertools
import re

from runbook.errors import InputError, shorten

MAX_HOSTS = 1_000_000  # a typo like node[1-999999999] must not eat the login node's memory

_RANGE = re.compile(r"^(\d{1,18}(?!\d))(?:\s*-\s*(\d{1,18}(?!\d)))?$")


def _split_top(expr: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for i, ch in enumerate(expr):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise _err(expr, f"nested '[' at position {i}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise _err(expr, f"unmatched ']' at position {i}")
        if ch in ", \t\n" and depth == 0:  # Slurm's separators: tab, comma, space
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise _err(expr, "unterminated '['")
    parts.append("".join(cur))
    return parts


def _err(expr: str, why: str) -> InputError:
    return InputError(
        f"invalid Slurm hostlist {shorten(expr, 120)!r}: {shorten(why, 200)}",
        hint="expected names and bracketed ranges such as gpu-[01-04,07]",
    )


def _expand_range(expr: str, body: str) -> list[str]:
    if not body:
        raise _err(expr, "empty brackets")
    out: list[str] = []
    for item in body.split(","):
        m = _RANGE.match(item.strip())
        if not m:
            raise _err(expr, f"range {item!r} is not N or N-M (Slurm has no step or ':' syntax)")
        lo_s, hi_s = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(lo_s), int(hi_s)
        if hi < lo:
            raise _err(expr, f"range {item!r} runs backwards")
        if hi - lo + 1 + len(out) > MAX_HOSTS:
            raise _err(expr, f"more than {MAX_HOSTS} hosts")
        width = len(lo_s) if lo_s.startswith("0") and len(lo_s) > 1 else 0
        out.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return out


def expand(expr: str) -> list[str]:
    """`gpu-[01-02],cpu1` -> ['gpu-01', 'gpu-02', 'cpu1']. Raises InputError on a malformed list."""
    expr = expr.strip()
    if not expr or expr in {"(null)", "None"}:
        return []
    hosts: list[str] = []
    for part in _split_top(expr):
        if not part:  # "gpu-01, gpu-02": separators in a row, skipped as Slurm does
            continue
        pieces = [p.strip() for p in re.split(r"(\[[^\]]*\])", part)]
        choices = [_expand_range(expr, p[1:-1]) if p.startswith("[") else [p] for p in pieces]
        total = 1
        for c in choices:
            total *= len(c)
        if total + len(hosts) > MAX_HOSTS:
            raise _err(expr, f"more than {MAX_HOSTS} hosts")
        hosts.extend("".join(combo) for combo in itertools.product(*choices))
    return hosts
