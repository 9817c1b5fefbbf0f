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


# A terminal (a screen capture, a log viewer) cuts every line at its width: the cut lines are all
# exactly that long, and no line is longer. Below this width, a run of equal lines is not a cut.
MIN_TERMINAL_WIDTH = 60


def terminal_width(lines: Sequence[str], min_cuts: int = 3) -> int | None:
    """The width a terminal cut `lines` at, or None: the longest length, when `min_cuts` different
    lines have it and are not table rows (whose borders make every row the same length), and when
    most lines near that length have it exactly. An editor's wrap at word ends leaves its lines spread
    over the last few columns; a terminal's cut leaves them all at the last one."""
    # Lines of a CRLF file keep their "\r" (it is not a column); the first line tells.
    crlf = bool(lines) and lines[0].endswith("\r")
    lens = [len(ln.rstrip("\r")) for ln in lines] if crlf else list(map(len, lines))
    width = max(lens, default=0)
    if width < MIN_TERMINAL_WIDTH:
        return None
    cut = [ln for ln, n in zip(lines, lens, strict=True) if n == width]
    cut = [ln for ln in cut if ln.rstrip("\r")[-1:] not in ("|", "+")]
    near = sum(1 for n in lens if width - 8 <= n <= width)
    # `min_cuts` different lines at least: the same line printed twice (one message from two
    # ranks) is not two cuts, and two lines of one length in a short re-flowed paste can be
    # chance (a reader that tries both readings can take two).
    return width if len(set(cut)) >= min_cuts and 2 * len(cut) > near else None


def wrap_sep(before: str, after: str, *, digits: bool = True) -> str:
    """What a line break stood for when a terminal or an editor hard-wrapped the text: nothing
    where one side already holds the space, nothing inside a number ("4." | "63 GiB") or after a
    hyphen an editor broke at ("GPU-" | "efbdfde9-..."), else a space (a word wrap drops the space
    it breaks at). With `digits` off, two digits meeting at the break are two numbers (an editor
    breaks only at spaces: "x86_64" | "595.71.05"); a dot at the break still joins them."""
    if not before or not after or before[-1].isspace() or after[0].isspace():
        return ""
    if before[-1] == "." and after[0].isdigit() or before[-1].isdigit() and after[0] == ".":
        return ""
    if digits and before[-1].isdigit() and after[0].isdigit():
        return ""
    return "" if before[-1] == "-" else " "


def unwrap(
    lines: list[str],
    starts,
    reach: int = 4,
    surely_starts=None,
    cuts: bool = True,
    min_cuts: int = 3,
    opens=None,
    whole=None,
) -> list[str]:
    """`lines` with the records a terminal or an editor wrapped joined again: a non-blank line
    that `starts` does not take for a record's first line continues the record above it. After a
    terminal's cut (a line exactly its width) it is joined as it is, however many there are; after
    an editor's wrap, at most `reach` lines on, with the space the wrap dropped (wrap_sep). After
    a cut, only `surely_starts` (default `starts`) stops the join: a cut can leave a tail that
    looks like a weak start ("id119: ***"). `cuts` off reads every break as an editor's: an
    editor's wrap of lines that share a prefix leaves them all one length, as a cut would.
    `opens` (default `starts`) says which records may take an editor's wrapped lines: a cheap
    test there spares `starts` on every line of a long log. `whole` says which lines are never
    cut (a program's own lines written in one write): nothing is joined to them."""
    width = terminal_width(lines, min_cuts) if cuts else None
    if width is not None:
        lines = _join_cuts(lines, width, surely_starts or starts, whole)
    return _unwrap_editor(lines, starts, reach, opens or starts) if reach else lines


def _join_cuts(lines: list[str], width: int, starts, whole=None) -> list[str]:
    """Every line a terminal cut at `width` joined to its tail as printed. A log of equal lines
    (one message from every rank) looks cut at its width: a line that starts a record is never
    taken for a tail, and a line `whole` says is never cut takes none."""
    out: list[str] = []
    for ln in lines:
        prev = out[-1].rstrip("\r") if out else ""
        if whole is not None and prev and whole(prev):
            out.append(ln)
        elif prev and len(prev) % width == 0 and ln.strip() and not starts(ln):
            out[-1] = prev + ln
        else:
            out.append(ln)
    return out


def _unwrap_editor(lines: list[str], starts, reach: int, opens) -> list[str]:
    """Each record `opens` accepts joined to the at most `reach` lines after it that do not
    start a record, with the space an editor's wrap dropped."""
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        ln = lines[i]
        out.append(ln)
        i += 1
        if not (opens(ln) and ln.strip() and starts(ln)):
            continue
        for _ in range(reach):
            if i >= n or not lines[i].strip() or starts(lines[i]):
                break
            prev, tail = out[-1].rstrip("\r"), lines[i].lstrip()
            out[-1] = prev + wrap_sep(prev, tail, digits=False) + tail
            i += 1
    return out
