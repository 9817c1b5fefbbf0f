"""Accelerator out-of-memory messages: find them in any text and read their numbers.

Pure functions of text. Every generation PyTorch has printed is read (docs/design.md §4.1 names them):
- old: `Tried to allocate X (GPU N; T total capacity; A already allocated; F free; R reserved in
  total by PyTorch)`, the oldest `...; X cached)` form, `X allowed;`, the max_split_size_mb hint;
- new (2.1+): `GPU N has a total capacity of T of which F is free. [Process P has X memory in use.]
  [Including non-PyTorch memory, this process has X memory in use.] Of the allocated memory A is
  allocated by PyTorch, [with X allocated in private pools (e.g., CUDA Graphs),] and U is reserved
  by PyTorch but unallocated.` (2.1 spelt `capacty`);
- HIP and XPU in either shape, MPS (`GB`/`MB` meaning binary multiples), the cudaMallocAsync
  backend's `Allocation on device N would exceed allowed memory` block, NCCL's `Failed to CUDA
  calloc N bytes`, and the CUDA runtime errors that carry no numbers.

What real logs do to a message is undone first: terminal escapes, `> `/`# ` quote markers,
`[rank3]:`/`[default3]:`/`3: `/`stderr: ` prefixes, and hard wraps. A wrap at a space and a wrap in
the middle of a word need opposite repairs (join with a space, join with nothing), so the text is
read both ways and the reading that recovers more numbers wins. Truncated messages yield what is
there and null for the rest; impossible numbers are kept as printed (the diagnosis judges them).
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, field

from runbook.evidence import oom_families, oom_numbers
from runbook.evidence.framing import ANSI_RE, wrap_sep
from runbook.evidence.units import SIZE
from runbook.lazyre import LazyPattern, lazy
from runbook.record import record

# No message line is longer than a few KiB; a longer "line" is junk or a progress bar redrawn with
# \r, and reading all of it would make one bad line cost seconds.
MAX_LINE = 64 * 1024


def log_lines(text: str) -> list[str]:
    """Lines as a terminal shows them: escapes removed, \r (progress-bar redraws) a line break,
    each line at most MAX_LINE characters."""
    text = ANSI_RE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return [line[:MAX_LINE] for line in text.split("\n")]


_PREFIXES = [
    lazy(r"[ \t]*>(?=[ \t]|$)[ \t]?", needs=">"),
    lazy(r"[ \t]*#(?=[ \t]|$)[ \t]?", needs="#"),
    lazy(r"[ \t]*`", needs="`"),
    lazy(r"[ \t]*(?:stderr|stdout):[ \t]", needs="std"),
    lazy(r"[ \t]*\[(?:rank|default)(?P<rank>\d{1,18}(?!\d))\]:[ \t]?", needs="]:"),
    lazy(r"[ \t]*(?P<rank>\d{1,6}):[ \t](?=\S)"),
    # "rank3: " / "[rank 3]:" (loggers), "[1,3]<stderr>:" (Open MPI --tag-output), "[3]<stderr>:"
    # (horovodrun's tag on each rank's output).
    lazy(r"[ \t]*\[?rank[ _]?(?P<rank>\d{1,9}(?!\d))\]?:[ \t]?", re.IGNORECASE, needs="rank"),
    lazy(r"[ \t]*\[(?:\d{1,9},)?(?P<rank>\d{1,9})\]<(?:stdout|stderr)>:[ \t]?", needs="]<"),
    # Composer's console log lines: "rank0[208865][MainThread]: INFO: composer.trainer: ...".
    lazy(r"[ \t]*rank(?P<rank>\d{1,9})\[\d{1,10}\]\[[^\]\n]{1,64}\]:[ \t]", needs="rank"),
    # Time stamps a logger or a collector put first: "2024-11-20 14:37:16,123 ", "[2024-...]",
    # with the separator after them ("| ", "- ").
    lazy(
        r"[ \t]*\[?\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
        r"(?:Z|[+-]\d\d:?\d\d)?\]?(?:[ \t]*[|\-:])?[ \t]+"
    ),
    # Container runtime logs (Kubernetes, CRI): "<ISO stamp> stderr F " once the stamp is off.
    lazy(r"[ \t]*(?:stdout|stderr)[ \t][FP][ \t]", needs="std"),
    # The journal and syslog: "Nov 23 10:00:01 " then "gpu07 python3[12345]: " (the process
    # name with its pid, so a sentence is never taken for one).
    lazy(r"[ \t]*[A-Z][a-z]{2}[ \t]+\d{1,2}[ \t]\d\d:\d\d:\d\d[ \t]+(?=\S+[ \t]+\S+\[\d)"),
    lazy(r"[ \t]*[A-Za-z][\w.\-]{0,62}[ \t]+[\w.\-/]{1,64}\[\d{1,10}\]:[ \t]", needs="]:"),
    # A parallel shell's host tag (pdsh, clush: "gpu-01: "). A name with a digit in it, so an
    # exception name ("RuntimeError: ") is never taken for a host.
    lazy(
        r"[ \t]*(?=[A-Za-z][\w.\-]{0,62}:[ \t])(?=[A-Za-z][A-Za-z_.\-]*\d)"
        r"[A-Za-z][\w.\-]{0,62}:[ \t]"
    ),
]


def _any_of(patterns: list) -> LazyPattern:
    """One pattern that matches at a line's start where any of `patterns` does, the first of
    them that does named by its group (their own groups unnamed, a case-blind one case-blind
    on its own). Each of them takes at least one character, so "none matches here" is this
    one's no: a line without a prefix (most lines, and each line once its prefixes are off)
    costs one match, not one per prefix."""
    alts = []
    for n, p in enumerate(patterns):  # each alternative named pN: lastgroup says which matched
        body = re.sub(r"\(\?P<\w+>", "(?:", p.pattern)
        alts.append(f"(?P<p{n}>(?i:{body}))" if p.flags & re.IGNORECASE else f"(?P<p{n}>{body})")
    return lazy("|".join(alts))


_ANY_PREFIX = _any_of(_PREFIXES)
# A rank named further into the line: "[rank3]:" after a time stamp, and a worker's process tag,
# "(VllmWorker rank=1 pid=2978) ERROR ..." (vLLM's multiprocessing executor).
_RANK_ANYWHERE = lazy(
    r"\[(?:rank|default)(\d{1,18}(?!\d))\]:|"
    r"\((?:[A-Za-z_][\w.]*[ \t]+)?rank=(\d{1,9})(?!\d)[^()\n]{0,60}\)",
)  # no `needs`: the two forms share no literal, and it runs on one line per message


# A log line's header and nothing else: "(VllmWorker rank=1 pid=2978) ERROR 03-19 07:27:53
# [multiproc_executor.py:375] " (a worker tag, a level, a date and time, a source location).
_HEADER_ONLY = lazy(
    r"[ \t]*(?:\([^()\n]{1,80}\)[ \t]*)?(?:[A-Z]{4,8}[ \t]+)?(?:\d\d-\d\d[ \t]+)?"
    r"(?:\d\d:\d\d:\d\d(?:[.,]\d{1,9})?[ \t]*)?(?:\[[\w./\-]{1,120}:\d{1,6}\][ \t]*)?$"
)


# A box a terminal tool draws around its output (rich tracebacks, TUI panes): a vertical rule
# closes each line, after the text a terminal cut at the box's width ("248.50 MiB f│" then
# "ree; 9.20 GiB ..."), sometimes with the pane's "$" after it; one may open each line too.
_BOX_RULES = ("\u2502", "\u2503", "\u2551")
_BOX_END = lazy(r"[ \t]*[\u2502\u2503\u2551]\$?[ \t]*$")
_BOX_START = lazy(r"[ \t]*[\u2502\u2503\u2551][ \t]?")


def strip_line(line: str) -> tuple[str, int | None]:
    """A log line without its quote markers, box rules and rank/stream prefixes, and the rank
    they named. A pure function of the line, and the scan's parsers each strip the same lines
    (three times a line in a 512-rank excerpt): a short line's answer is kept."""
    return _strip_short(line) if len(line) <= _KEPT_LINE else _strip(line)


_KEPT_LINE = 512  # at most 4,096 of them: about 2 MiB


@functools.lru_cache(maxsize=4096)
def _strip_short(line: str) -> tuple[str, int | None]:
    return _strip(line)


def _strip(line: str) -> tuple[str, int | None]:
    if any(rule in line for rule in _BOX_RULES):
        if m := _BOX_END.search(line):
            line = line[: m.start()]
        if m := _BOX_START.match(line):
            line = line[m.end() :]
    rank = None
    # The prefixes in their order, pass after pass until none is left. _ANY_PREFIX says which
    # comes first on the line (those before it need no try) and when none is left (the rest of
    # the passes need none): most lines cost one or two matches, not fourteen a pass.
    m = _ANY_PREFIX.match(line)
    if m is None:
        return line, None
    first = int((m.lastgroup or "p0")[1:])
    changed = True
    while changed:
        changed = False
        for pattern in _PREFIXES[first:]:
            m = pattern.match(line)
            if m and m.end() > 0:
                if "rank" in pattern.groupindex and m.group("rank") is not None:
                    rank = int(m.group("rank"))
                line = line[m.end() :]
                changed = True
                if _ANY_PREFIX.match(line) is None:
                    return line, rank
        first = 0
    return line, rank


@record
class OomMessage:
    """One out-of-memory message, its format and family, and the numbers it states."""

    format: str  # old | new | cuda_runtime | other (docs/design.md §4.1)
    # caching | malloc_async | expandable | mps | nccl | cuda_error | thc | cublas | over_1eb | hint
    family: str
    device: str  # CUDA | HIP | XPU | MPS
    text: str  # the message as found (original lines)
    line: int  # 0-based index of the line the message starts on
    rank: int | None = None
    gpu: int | None = None
    exception: str | None = None
    tried_mib: float | None = None
    total_mib: float | None = None
    free_mib: float | None = None
    allocated_by_pytorch_mib: float | None = None
    reserved_total_mib: float | None = None
    reserved_unallocated_mib: float | None = None
    this_process_mib: float | None = None
    other_process_pids: list[int] = field(default_factory=list)
    other_process_mib: list[float] = field(default_factory=list)
    private_pools_mib: float | None = None
    limit_mib: float | None = None
    mps_other_allocations_mib: float | None = None
    inactive_mib: float | None = None
    # Whether the PyTorch that printed the message reads PYTORCH_CUDA_ALLOC_CONF, the allocator
    # setting the fragmentation rung needs: False for the "N cached" wording (PyTorch before 1.4,
    # when memory_cached became memory_reserved; the variable came later, with pytorch#44742);
    # also False for the "reserved in total" wording whose line ends without the hint that came
    # with the variable; True where the message names a setting in its hint, or is the 2.x
    # sentence format; None where the message does not tell (a line cut inside the message).
    allocator_conf: bool | None = None

    # Derived values: docs/design.md §4.1 output keys.
    @property
    def reserved_mib(self) -> float | None:
        if self.reserved_total_mib is not None:
            return self.reserved_total_mib
        if self.allocated_by_pytorch_mib is not None and self.reserved_unallocated_mib is not None:
            return self.allocated_by_pytorch_mib + self.reserved_unallocated_mib
        return None

    @property
    def unallocated_mib(self) -> float | None:
        if self.reserved_unallocated_mib is not None:
            return self.reserved_unallocated_mib
        if self.reserved_total_mib is not None and self.allocated_by_pytorch_mib is not None:
            return self.reserved_total_mib - self.allocated_by_pytorch_mib
        return None

    def numbers_found(self) -> int:
        d = asdict(self)
        n = sum(1 for k, v in d.items() if k.endswith("_mib") and v is not None)
        return n + len(self.other_process_mib) + (self.gpu is not None) + (self.rank is not None)

    def contract(self) -> dict:
        """The `oom` object of `runbook diagnose --json` (docs/design.md §4.1)."""
        return {
            "format": self.format,
            "text": self.text,
            "rank": self.rank,
            "gpu": self.gpu,
            "tried_mib": self.tried_mib,
            "total_mib": self.total_mib,
            "free_mib": self.free_mib,
            "allocated_mib": self.allocated_by_pytorch_mib,
            "reserved_mib": self.reserved_mib,
            "reserved_unallocated_mib": self.unallocated_mib,
            "process_mib": self.this_process_mib,
            "limit_mib": self.limit_mib,
            "private_pools_mib": self.private_pools_mib,
            "other_processes": [
                {"pid": p, "used_mib": m}
                for p, m in zip(self.other_process_pids, self.other_process_mib, strict=False)
            ],
        }


# Anchors of one family closer together than its merge_within are one incident told twice (NCCL
# prints the CUDA failure then the calloc; old PyTorch printed THCudaCheck then the RuntimeError).
_WINDOW = 2500

# The exception name right before a message, wherever the joined text put its line breaks.
_EXCEPTION_HEAD = lazy(r"(?:torch\.(?:cuda\.)?)?OutOfMemoryError\s*:\s*$", needs="OutOfMemoryError")
_EXCEPTION_RE = lazy(
    r"((?:torch\.(?:cuda\.)?)?OutOfMemoryError|RuntimeError|torch\.distributed\.DistBackendError|"
    r"Error)\s*:\s*$"
)


@record
class _Joined:
    """The scanned lines joined into one text, with each line's offset and rank tag."""

    text: str
    starts: list[int]  # offset of each line in `text`
    ranks: list[int | None]

    def line_of(self, pos: int) -> int:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo


# Markdown emphasis and inline code a person puts around a figure ("this process has
# **17179869184.00 GiB** memory in use") are no part of any OOM message: blanked, not removed,
# so every offset into the joined text still points at the same character of its line.
_MARKUP_BLANK = str.maketrans({"*": " ", "`": " "})


def _join(stripped: list[tuple[str, int | None]], glue: bool) -> _Joined:
    parts, starts, ranks, pos = [], [], [], 0
    for i, (text, rank) in enumerate(stripped):
        if i:
            prev = stripped[i - 1][0]
            # A blank line (or one that was only a quote or fence marker) is a paragraph break,
            # never a wrap: the lines around it must not run together ("...x" + "HIP out of").
            if not prev.strip() or not text.strip():
                sep = " "
            else:
                sep = "" if glue else wrap_sep(prev, text)
            parts.append(sep)
            pos += len(sep)
        starts.append(pos)
        ranks.append(rank)
        parts.append(text.translate(_MARKUP_BLANK))
        pos += len(text)
    return _Joined("".join(parts), starts, ranks)


_THEN_TRIED = lazy(r"[\s.,:;`'\"*]*Tried\s*to\s*allocate", re.IGNORECASE, needs="allocate")
_PROSE_BEFORE = lazy(r"[a-z]{2,}\s+$")


def _named_in_prose(j: _Joined, start: int, end: int) -> bool:
    """ "If you encounter CUDA out of memory, try to set --tile" (Real-ESRGAN's advice after every
    message): the words in a sentence, not a message. A message goes on to "Tried to allocate";
    one cut there is a title or a log line, never the object of a lower-case word."""
    if _THEN_TRIED.match(j.text, end, end + 60):
        return False
    line_start = j.starts[j.line_of(start)]
    return _PROSE_BEFORE.search(j.text, line_start, start) is not None


def _find_anchors(j: _Joined) -> list[list]:
    """[start, family, match, end of the last anchor merged into it], in text order."""
    found = []
    fams = oom_families.families()
    merge_within = {f.name: f.merge_within for f in fams if f.merge_within is not None}
    for fam in fams:
        for pattern in fam.anchors:
            for m in pattern.finditer(j.text):
                found.append((m.start(), fam.name, m))
    found.sort(key=lambda a: a[0])
    kept: list[list] = []
    for pos, family, m in found:
        if family == "caching" and _named_in_prose(j, pos, m.end()):
            continue
        if kept:
            ppos, pfamily, pm, _ = kept[-1]
            # The same message matched by two caching anchors ("CUDA out of memory. Tried to
            # allocate X (GPU" is both), or one incident told twice by the same family.
            if family == pfamily == "caching" and pos - pm.end() < 40:
                continue
            if family == pfamily and pos - ppos <= merge_within.get(family, -1):
                kept[-1][3] = m.end()
                continue
            if pfamily == "caching" and family == "cuda_error" and pos - ppos < 40:
                continue
            if family == "hint" and pos - ppos <= _WINDOW:
                continue  # the tail of the message before it
        kept.append([pos, family, m, m.end()])
    return kept


def _family(name: str) -> oom_families.Family:
    return next(f for f in oom_families.families() if f.name == name)


def _head_line(j: _Joined, lines: list[str], first: int, pos: int) -> int:
    """The line a message's head is on when a wrap put its anchor on the next line: the one its
    exception name starts on (a terminal cut inside "torch.OutOfMemoryError"), or the line above
    when that holds only a log header (an editor wrapped after the header)."""
    exc = _EXCEPTION_HEAD.search(j.text, max(0, pos - 160), pos)
    if exc is not None and exc.start() < j.starts[first]:
        return j.line_of(exc.start())
    if first > 0 and _HEADER_ONLY.match(lines[first - 1]):
        return first - 1
    return first


def _read(lines: list[str], stripped, glue: bool) -> list[OomMessage]:
    j = _join(stripped, glue)
    anchors = _find_anchors(j)
    out = []
    for i, (pos, family, m, merged_end) in enumerate(anchors):
        first = j.line_of(pos)
        fam = _family(family)
        start = j.starts[first] if fam.from_line_start else pos
        end = anchors[i + 1][0] if i + 1 < len(anchors) else len(j.text)
        end = min(end, pos + _WINDOW)
        window = j.text[start:end]
        line_ends = frozenset(
            j.starts[k] + len(stripped[k][0]) - start
            for k in range(first, j.line_of(max(start, end - 1)) + 1)
        )
        fields = fam.fields(m, window, oom_numbers.sizes(window) if fam.sized else [], line_ends)
        fields = {k: v for k, v in fields.items() if v is not None}
        fields.setdefault("family", family)
        last = j.line_of(max(start, end - 1))
        rank = fields.pop("rank", None)
        if rank is None:
            rank = j.ranks[first]
        if rank is None:
            rr = _RANK_ANYWHERE.search(lines[first])
            if rr is None and (head := _head_line(j, lines, first, pos)) != first:
                # A wrap moved the message below its head: that line's prefix or tag names it.
                rank = j.ranks[head]
                if rank is None:
                    rr = _RANK_ANYWHERE.search(lines[head])
            if rank is None and rr is not None:
                rank = int(rr.group(1) or rr.group(2))
        before = j.text[j.starts[first] : pos]
        exc = _EXCEPTION_RE.search(before)
        if exc is None and first > 0 and not before.strip():
            exc = _EXCEPTION_RE.search(stripped[first - 1][0])  # "Exception has occurred: X"
        if fields.pop("format_guess", False) and fields["format"] == "new":
            # The exception name dates the PyTorch: RuntimeError until 1.13, then
            # torch.cuda.OutOfMemoryError (old format until 2.0, the sentence format from 2.1:
            # 34 and 31 of the corpora's whole messages), and torch.OutOfMemoryError only with
            # the sentence format. With no name the text does not tell; the old format's years
            # left far more pastes.
            named = exc.group(1) if exc else ""
            fields["format"] = "new" if named == "torch.OutOfMemoryError" else "old"
        last = max(_last_message_line(stripped, first, last), j.line_of(merged_end - 1))
        text_lines = lines[first : min(last + 1, first + 40)]
        out.append(
            OomMessage(
                text="\n".join(t.rstrip() for t in text_lines).strip("\n"),
                line=first,
                rank=rank,
                exception=exc.group(1) if exc else None,
                **fields,
            )
        )
    return out


_MESSAGE_LINE = lazy(
    r"out\s*of\s*memory|Tried\s*to\s*allocate|total\s*capac|is\s*free|already\s*allocated|"
    r"reserved|allocated|memory\s*in\s*use|private\s*pools|See\s*documentation|max_split_size|"
    r"ALLOC_CONF|Requested|Device\s*limit|Free\s*\(|PyTorch\s*limit|^\s*:|calloc|"
    r"NCCL\s*WARN|CUBLAS|THCudaCheck|CUDA\s*kernel\s*errors|CUDA_LAUNCH_BLOCKING|"
    r"TORCH_USE_CUDA_DSA|upper\s*limit|" + SIZE,
    re.IGNORECASE,
)


def _last_message_line(stripped, first: int, last: int) -> int:
    """The message ends at its last line that still reads like part of it, so a log line that
    happens to follow (a DEBUG line, a prompt) is not quoted as part of the message."""
    end = first
    for i in range(first + 1, last + 1):
        if stripped[i][1] != stripped[first][1]:
            break  # another rank's line: interleaved output, not this message
        if stripped[i][0].lstrip().startswith("RUNBOOK_INSTRUMENT "):
            break  # runbook.instrument's own line (its peak at exit says "reserved")
        if _MESSAGE_LINE.search(stripped[i][0]):
            end = i
        elif stripped[i][0].strip():
            break
    return end


def parse_all(text: str) -> list[OomMessage]:
    """Every OOM message in `text`, in the order they appear."""
    if not text:
        return []
    lines = log_lines(text)
    stripped = [strip_line(line) for line in lines]
    spaced = _read(lines, stripped, glue=False)
    if not spaced:
        return _read(lines, stripped, glue=True)
    glued = _read(lines, stripped, glue=True)
    # Same messages read two ways: keep, message by message, the reading with more numbers; on a
    # tie, the one that also read what the wording says of the allocator settings (a terminal
    # wrap inside "PyT|orch)" hides that from the spaced reading only).
    if len(glued) == len(spaced):
        return [
            g
            if (g.numbers_found(), g.allocator_conf is not None)
            > (s.numbers_found(), s.allocator_conf is not None)
            else s
            for s, g in zip(spaced, glued, strict=True)
        ]
    return spaced


def parse(text: str) -> OomMessage | None:
    """The first OOM message in `text`, or None."""
    found = parse_all(text)
    return found[0] if found else None
