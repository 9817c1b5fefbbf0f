"""What people and tools put around an output they pass on: terminal colour codes, a quote marker
on every line ("> " from a forum or mail reply), Markdown code fences. Pure functions of text; the
parsers of structured outputs (nvidia-smi, Slurm) read what is left, the text as the tool printed
it."""

from __future__ import annotations

from collections.abc import Sequence

from runbook.lazyre import lazy

ANSI_RE = lazy(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]", needs="\x1b")
# A quote marker at the start of a line: "> ", ">", ">> ".
QUOTE_RE = lazy(r"^[ \t]*(?:>[ \t]?)+", needs=">")
# A Markdown code fence line: ``` or ~~~, perhaps with the language ("```text", "```console").
FENCE_RE = lazy(r"^[ \t]*(?:`{3,}|~{3,})[\w+.-]*[ \t]*$")


def first_quote_marker(lines: Sequence[str | None]) -> str | None:
    """The quote marker of the first quoted line (None entries skipped), or None."""
    return next((m.group() for ln in lines if ln and (m := QUOTE_RE.match(ln))), None)


def quote_marker(lines: list[str]) -> str | None:
    """The quote marker the output's lines carry, when most non-blank lines carry the same one
    (a person's words around the quote do not): else None. A table's own first character is
    never taken for one, since a marker must be on most lines."""
    text = [ln for ln in lines if ln.strip()]
    first = first_quote_marker(text)
    if first is None or sum(ln.startswith(first) for ln in text) * 2 < len(text):
        return None
    return first


def plain(text: str) -> str:
    """`text` without colour codes, without the quote marker most of its lines carry (the lines
    without it are kept as they are), and without code fence lines."""
    lines = ANSI_RE.sub("", text or "").split("\n")
    q = quote_marker(lines)
    if q is not None:
        lines = [ln[len(q) :] if ln.startswith(q) else ln for ln in lines]
    return "\n".join(ln for ln in lines if not FENCE_RE.match(ln))
