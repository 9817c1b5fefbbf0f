"""Memory sizes as PyTorch, NCCL and the drivers print them, converted to MiB (2^20 bytes)."""

from __future__ import annotations

from runbook.lazyre import lazy

# Binary multiples. MPS prints "GB"/"MB" for what are binary multiples too (corpus README).
_FACTOR_MIB = {
    "b": 1 / 2**20,
    "bytes": 1 / 2**20,
    "byte": 1 / 2**20,
    "kib": 1 / 1024,
    "kb": 1 / 1024,
    "k": 1 / 1024,
    "mib": 1.0,
    "mb": 1.0,
    "m": 1.0,
    "gib": 1024.0,
    "gb": 1024.0,
    "g": 1024.0,
    "tib": 1024.0**2,
    "tb": 1024.0**2,
    "pib": 1024.0**3,
    "pb": 1024.0**3,
    "eib": 1024.0**4,
    "eb": 1024.0**4,
}

# A number and its unit. The unit must end at a word boundary, so a value truncated mid-unit
# ("38.47 Gi") is not read as something it is not.
SIZE = r"(\d{1,18}(?:\.\d{1,12})?(?!\d))\s*(bytes|byte|[KMGTPE]iB|[KMGTPE]B|B)(?![A-Za-z])"
SIZE_RE = lazy(SIZE)  # compiled on first use: 0.3 ms of every start-up otherwise


def to_mib(number: str, unit: str) -> float:
    return float(number) * _FACTOR_MIB[unit.lower()]


def points(n: int) -> str:
    """ "1 point", "5 points": a series' length in words."""
    return f"{n} point" + ("" if n == 1 else "s")


def human_mib(mib: float | None) -> str:
    if mib is None:
        return "?"
    if abs(mib) >= 1024:
        return f"{mib / 1024:.2f} GiB"
    if abs(mib) >= 1 or mib == 0:
        return f"{mib:.2f} MiB"
    return f"{mib * 1024:.2f} KiB"


# Longer than any rank, pid, exit code, Xid, task or node count a machine has: a longer run of
# digits in a log is noise (or an attack), never one of those. Parsers' regexes capture at most
# this many digits, which also keeps them linear on long runs of digits.
MAX_DIGITS = 18


def small_int(text: str | None) -> int | None:
    """An integer of at most MAX_DIGITS digits (optional minus sign), else None. Never calls
    int() on unbounded text: Python refuses strings over 4300 digits with a ValueError."""
    if not text:
        return None
    t = text.strip()
    body = t[1:] if t[:1] == "-" else t
    if not body or len(body) > MAX_DIGITS or not body.isascii() or not body.isdigit():
        return None
    return int(t)
