"""Regular expressions compiled on first use, and not at all where they cannot match.

A parser module holds dozens of patterns for formats a given input rarely has (XPU, MPS, old
PyTorch, NCCL, DeepSpeed, srun); compiling them costs a `runbook diagnose` more than reading its
log (bench/startup.py: 39 of the 52 patterns a torchrun OOM log needs compiled never matched).

`lazy()` stands where `re.compile()` stood: the pattern is compiled the first time it is used,
once per process, and its methods are then the compiled pattern's own (no indirection after).
`needs=` names literal text every match contains: any method called on a string without it
answers as for no match (sub returns the string, split [string]) without compiling. tests/unit/test_lazyre.py proves
each `needs` from the parsed pattern itself (the literal must be one the pattern cannot match
without), so a gate can never hide a match. Case-insensitive patterns compare lower case.
"""

from __future__ import annotations

import re
from typing import Any

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
# re.IGNORECASE also matches an ASCII letter with these (their simple lower case, or sre's own
# equivalences), where str.lower() gives something else: mapped before lowering.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


class LazyPattern:
    def __init__(self, pattern: str, flags: int = 0, needs: str | tuple[str, ...] = ()):
        self.pattern = pattern
        self.flags = flags
        self.needs: tuple[str, ...] = (needs,) if isinstance(needs, str) else tuple(needs)
        # Decided once: `flags & re.IGNORECASE` per call is an enum operation, and _absent runs
        # for every line a parser reads (a third of a 512-rank excerpt's scan, bench/diagnose_local).
        self._fold = bool(flags & re.IGNORECASE)
        if self._fold:
            self.needs = tuple(n.lower() for n in self.needs)
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
            for name in _METHODS:  # later calls find the bound method on the instance
                setattr(self, name, getattr(self._compiled, name))
        return self._compiled

    def _absent(self, string: str) -> bool:
        """True when `string` lacks a needed literal: no match is possible."""
        needs = self.needs
        if not needs or not isinstance(string, str):
            return False
        if self._fold:
            string = string.translate(_FOLD).lower()
        if len(needs) == 1:
            return needs[0] not in string
        return any(n not in string for n in needs)

    # Until the first compile, the matching methods look for the needed literals first.
    def search(self, string: str, *args: Any) -> re.Match | None:
        return None if self._absent(string) else self.compiled().search(string, *args)

    def match(self, string: str, *args: Any) -> re.Match | None:
        return None if self._absent(string) else self.compiled().match(string, *args)

    def fullmatch(self, string: str, *args: Any) -> re.Match | None:
        return None if self._absent(string) else self.compiled().fullmatch(string, *args)

    def finditer(self, string: str, *args: Any) -> Any:
        return iter(()) if self._absent(string) else self.compiled().finditer(string, *args)

    def findall(self, string: str, *args: Any) -> list:
        return [] if self._absent(string) else self.compiled().findall(string, *args)

    def sub(self, repl: Any, string: str, *args: Any) -> str:
        return string if self._absent(string) else self.compiled().sub(repl, string, *args)

    def subn(self, repl: Any, string: str, *args: Any) -> tuple[str, int]:
        return (string, 0) if self._absent(string) else self.compiled().subn(repl, string, *args)

    def split(self, string: str, *args: Any) -> list:
        return [string] if self._absent(string) else self.compiled().split(string, *args)

    def __getattr__(self, name: str) -> Any:
        # Only reached before the first compile, or for attributes not copied (groups, ...).
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self.flags}, needs={self.needs!r})"


def lazy(pattern: str, flags: int = 0, needs: str | tuple[str, ...] = ()) -> LazyPattern:
    return LazyPattern(pattern, flags, needs)
