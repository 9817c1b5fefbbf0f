"""Regular expressions compiled on first use.

A parser module holds dozens of patterns for formats a given input rarely has (XPU, MPS, old
PyTorch, NCCL); compiling them all at import costs a `runbook diagnose` more than reading its log.
`lazy()` stands where `re.compile()` stood: the pattern is compiled the first time it is used,
once per process, and its methods are then the compiled pattern's own (no indirection after).
"""

from __future__ import annotations

import re
from typing import Any

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0):
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:  # later calls find the bound method on the instance
                setattr(self, name, getattr(self._compiled, name))
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        # Only reached before the first compile, or for attributes not copied (groups, ...).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
