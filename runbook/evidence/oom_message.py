"""Accelerator out-of-memory messages: find them in any text and read their numbers.

Pure functions of text. Every generation PyTorch has printed is read (DESIGN §4.1 names them):
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

import re
from dataclasses import asdict, field

from runbook.evidence.units import SIZE, to_mib
from runbook.lazyre import LazyPattern, lazy
from runbook.record import record

ANSI_RE = lazy(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]", needs="\x1b")
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
    # "rank3: " / "[rank 3]:" (loggers), "[1,3]<stderr>:" (Open MPI --tag-output).
    lazy(r"[ \t]*\[?rank[ _]?(?P<rank>\d{1,9}(?!\d))\]?:[ \t]?", re.IGNORECASE, needs="rank"),
    lazy(r"[ \t]*\[\d{1,9},(?P<rank>\d{1,9})\]<(?:stdout|stderr)>:[ \t]?", needs="]<"),
    # Time stamps a logger or a collector put first: "2024-11-20 14:37:16,123 ", "[2024-...]",
    # with the separator after them ("| ", "- ").
    lazy(
        r"[ \t]*\[?\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
        r"(?:Z|[+-]\d\d:?\d\d)?\]?(?:[ \t]*[|\-:])?[ \t]+"
    ),
    # A parallel shell's host tag (pdsh, clush: "gpu-01: "). A name with a digit in it, so an
    # exception name ("RuntimeError: ") is never taken for a host.
    lazy(
        r"[ \t]*(?=[A-Za-z][\w.\-]{0,62}:[ \t])(?=[A-Za-z][A-Za-z_.\-]*\d)"
        r"[A-Za-z][\w.\-]{0,62}:[ \t]"
    ),
]
_RANK_ANYWHERE = lazy(r"\[(?:rank|default)(\d{1,18}(?!\d))\]:", needs="]:")


def strip_line(line: str) -> tuple[str, int | None]:
    """A log line without its quote markers and rank/stream prefixes, and the rank they named."""
    rank = None
    changed = True
    while changed:
        changed = False
        for pattern in _PREFIXES:
            m = pattern.match(line)
            if m and m.end() > 0:
                if "rank" in pattern.groupindex and m.group("rank") is not None:
                    rank = int(m.group("rank"))
                line = line[m.end() :]
                changed = True
    return line, rank


@record
class OomMessage:
    """One out-of-memory message, its format and family, and the numbers it states."""

    format: str  # old | new | cuda_runtime | other (DESIGN §4.1)
    family: str  # caching | malloc_async | mps | nccl | cuda_error | thc | cublas | over_1eb | hint
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
    # True where the message names a setting in its hint, or is the 2.x sentence format; None
    # where the message does not tell (the "reserved in total" wording without its hint).
    allocator_conf: bool | None = None

    # Derived values: DESIGN §4.1 output keys.
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
        """The `oom` object of `runbook diagnose --json` (DESIGN §4.1)."""
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


# -- anchors: where a message starts -----------------------------------------------------------
_ANCHORS: list[tuple[str, LazyPattern]] = [
    (
        "malloc_async",
        lazy(
            r"Allocation\s*on\s*device\s*(?P<gpu>\d{1,18}(?!\d))\s*would\s*exceed\s*allowed",
            needs=("Allocation", "exceed"),
        ),
    ),
    ("mps", lazy(r"MPS\s*backend\s*out\s*of\s*memory", needs=("MPS", "backend"))),
    ("caching", lazy(r"\b(?P<dev>CUDA|HIP|XPU)\s*out\s*of\s*memory\b(?!')", needs="memory")),
    (
        "caching",
        lazy(r"(?<![A-Za-z])Tried\s*to\s*allocate\s*" + SIZE + r"\s*\(\s*GPU", needs="allocate"),
    ),
    (
        "thc",
        lazy(
            r"THCudaCheck\s*FAIL\b[^\n]{0,400}?error\s*=\s*2\s*:\s*out\s*of\s*memory",
            needs="THCudaCheck",
        ),
    ),
    # "err(2)": how people retype it (the message itself says "error (2)").
    (
        "thc",
        lazy(
            r"cuda\s*runtime\s*err(?:or)?\s*\(\s*2\s*\)\s*:\s*out\s*of\s*memory",
            needs=("runtime", "memory"),
        ),
    ),
    ("cuda_error", lazy(r"CUDA\s*error\s*:\s*out\s*of\s*memory", needs=("CUDA", "error"))),
    ("cublas", lazy(r"CUBLAS_STATUS_ALLOC_FAILED", needs="CUBLAS_STATUS_ALLOC_FAILED")),
    (
        "nccl",
        lazy(
            r"NCCL\s*WARN\s*(?:Cuda\s*failure\s*(?:\d{1,4}\s*)?'out\s*of\s*memory'|"
            r"Failed\s*to\s*CUDA\s*calloc)",
            needs=("NCCL", "WARN"),
        ),
    ),
    # PyTorch's allocator hint, printed only as the tail of a caching-allocator OOM message
    # (c10/cuda/CUDACachingAllocator.cpp). Alone, it is a fragment whose first lines were cut
    # (a log collector's line limit, a paste): an OOM happened, its numbers are lost.
    (
        "hint",
        lazy(
            r"If\s*reserved\s*(?:but\s*unallocated\s*)?memory\s*is\s*(?:large|>>\s*allocated\s*"
            r"memory)\s*try\s*setting\s*(?:PYTORCH_(?:CUDA_)?ALLOC_CONF=expandable_segments|"
            r"max_split_size_mb)",
            needs=("reserved", "setting"),
        ),
    ),
]
# Anchors of one family this close together are one incident told twice (NCCL prints the CUDA
# failure then the calloc; old PyTorch printed THCudaCheck then the RuntimeError).
_MERGE_WITHIN = {"nccl": 600, "thc": 1200, "cuda_error": 0, "cublas": 0}
_WINDOW = 2500

_EXCEPTION_RE = lazy(
    r"((?:torch\.(?:cuda\.)?)?OutOfMemoryError|RuntimeError|torch\.distributed\.DistBackendError|"
    r"Error)\s*:\s*$"
)


def _re(pattern: str, *needs: str) -> LazyPattern:
    # Compiled on first use, and only for a message with the field's words: a message has the
    # fields of its own format only.
    return lazy(pattern.replace("SIZE", SIZE), re.IGNORECASE, needs=needs)


_F = {
    "tried": _re(r"Tried\s*to\s*allocate\s*SIZE", "allocate"),
    "old_gpu": _re(r"\(\s*GPU\s*(\d{1,18}(?!\d))\s*;", "(", ";"),
    "old_total": _re(r"SIZE\s*total\s*capacity", "capacity"),
    "old_allocated": _re(r"SIZE\s*already\s*allocated", "already"),
    "old_free": _re(r";\s*SIZE\s*free\b", ";", "free"),
    "old_reserved": _re(r"SIZE\s*reserved\s*in\s*total\s*by\s*PyTorch", "reserved", "total"),
    "old_cached": _re(r"SIZE\s*cached\b", "cached"),
    "old_inactive": _re(r"SIZE\s*inactive\b", "inactive"),
    "allowed": _re(r"SIZE\s*allowed\b", "allowed"),
    # The index can be missing ("GPU  has a total capacity of ..."): the size still counts.
    "new_gpu_total": _re(
        r"GPU\s*(\d{1,18}(?!\d))?\s*has\s*a\s*total\s*capac(?:i)?ty\s*of\s*SIZE", "capac"
    ),
    "new_free": _re(r"of\s*which\s*SIZE\s*is\s*free", "which", "free"),
    # The sentence's own words, whatever precedes them: authors elide ("... 73.15 GiB is
    # allocated by PyTorch ...") and wrap.
    "new_allocated": _re(r"SIZE\s*is\s*allocated\s*by\s*PyTorch", "allocated", "pytorch"),
    "new_unallocated": _re(
        r"SIZE\s*is\s*reserved\s*by\s*PyTorch\s*but\s*unallocated", "unallocated"
    ),
    # A paste can stop right after the size ("this process has 39.23 GiB").
    "this_process": _re(r"this\s*process\s*has\s*SIZE(?:\s*memory\s*in\s*use)?", "process"),
    "private_pools": _re(r"with\s*SIZE\s*allocated\s*in\s*private\s*pools", "private"),
    "ma_allocated": _re(r"Currently\s*allocated\s*:\s*SIZE", "currently"),
    "ma_requested": _re(r"Requested\s*:\s*SIZE", "requested"),
    "ma_total": _re(r"Device\s*limit\s*:\s*SIZE", "limit"),
    "ma_free": _re(r"Free\s*\(\s*according\s*to\s*CUDA\s*\)\s*:\s*SIZE", "according"),
    "ma_limit": _re(
        r"PyTorch\s*limit\s*\(\s*set\s*by\s*user-supplied\s*memory\s*fraction\s*\)\s*:\s*SIZE",
        "user-supplied",
    ),
    "mps_allocated": _re(r"MPS\s*allocated\s*:\s*SIZE", "mps"),
    "mps_other": _re(r"other\s*allocations\s*:\s*SIZE", "other"),
    "mps_max": _re(r"max\s*allowed\s*:\s*SIZE", "max"),
    "nccl_calloc": _re(r"Failed\s*to\s*CUDA\s*calloc\s*SIZE", "calloc"),
    "nccl_gpu": lazy(r"\S+:\d{1,18}(?!\d):\d{1,18}(?!\d)\s*\[(\d{1,18}(?!\d))\]"),
    "nccl_rank": lazy(r"from\s*rank\s*(\d{1,18}(?!\d))", needs="rank"),
    "over_1eb": _re(r"more\s*than\s*1\s*EB", "than", "eb"),
}
# The hint of PyTorch >= 1.10 names an allocator setting (max_split_size_mb, later
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments): proof that the job's PyTorch has them.
_ALLOC_HINT = lazy(
    r"try\s*setting\s*(?:max_split_size_mb|PYTORCH_(?:CUDA_)?ALLOC_CONF)",
    re.IGNORECASE,
    needs="setting",
)
# "Process N has X" is case-sensitive: "this process has X" must not match it.
_PROCESS_RE = lazy(
    r"Process\s*(\d{1,18}(?!\d))\s*has\s*" + SIZE + r"\s*memory\s*in\s*use", needs="Process"
)


def _mib(pattern: str, window: str) -> float | None:
    m = _F[pattern].search(window)
    if m is None or m.lastindex is None:
        return None
    return to_mib(m.group(m.lastindex - 1), m.group(m.lastindex))


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


def _wrap_sep(before: str, after: str) -> str:
    """What a line break stood for when a terminal or an editor hard-wrapped the text: nothing
    where one side already holds the space, nothing inside a number ("4." | "63 GiB"), else a
    space (a word wrap drops the space it breaks at)."""
    if not before or not after or before[-1].isspace() or after[0].isspace():
        return ""
    if (before[-1].isdigit() or before[-1] == ".") and (after[0].isdigit() or after[0] == "."):
        return ""
    return " "


def _join(stripped: list[tuple[str, int | None]], glue: bool) -> _Joined:
    parts, starts, ranks, pos = [], [], [], 0
    for i, (text, rank) in enumerate(stripped):
        if i:
            sep = "" if glue else _wrap_sep(stripped[i - 1][0], text)
            parts.append(sep)
            pos += len(sep)
        starts.append(pos)
        ranks.append(rank)
        parts.append(text)
        pos += len(text)
    return _Joined("".join(parts), starts, ranks)


def _find_anchors(j: _Joined) -> list[list]:
    """[start, family, match, end of the last anchor merged into it], in text order."""
    found = []
    for family, pattern in _ANCHORS:
        for m in pattern.finditer(j.text):
            found.append((m.start(), family, m))
    found.sort(key=lambda a: a[0])
    kept: list[list] = []
    for pos, family, m in found:
        if kept:
            ppos, pfamily, pm, _ = kept[-1]
            # The same message matched by two caching anchors ("CUDA out of memory. Tried to
            # allocate X (GPU" is both), or one incident told twice by the same family.
            if family == pfamily == "caching" and pos - pm.end() < 40:
                continue
            if family == pfamily and pos - ppos <= _MERGE_WITHIN.get(family, -1):
                kept[-1][3] = m.end()
                continue
            if pfamily == "caching" and family == "cuda_error" and pos - ppos < 40:
                continue
            if family == "hint" and pos - ppos <= _WINDOW:
                continue  # the tail of the message before it
        kept.append([pos, family, m, m.end()])
    return kept


def _parse_window(family: str, m: re.Match, window: str) -> dict:
    f: dict = {}
    if family == "caching":
        dev = (m.groupdict().get("dev") or "CUDA").upper()
        f["device"] = dev
        f["tried_mib"] = _mib("tried", window)
        old = _F["old_gpu"].search(window) is not None or _F["old_total"].search(window) is not None
        if old:
            g = _F["old_gpu"].search(window)
            f["gpu"] = int(g.group(1)) if g else None
            f["total_mib"] = _mib("old_total", window)
            f["allocated_by_pytorch_mib"] = _mib("old_allocated", window)
            f["free_mib"] = _mib("old_free", window)
            f["reserved_total_mib"] = _mib("old_reserved", window)
            f["reserved_unallocated_mib"] = _mib("old_cached", window)
            f["inactive_mib"] = _mib("old_inactive", window)
            if f["reserved_unallocated_mib"] is not None and f["reserved_total_mib"] is None:
                f["allocator_conf"] = False
            elif _ALLOC_HINT.search(window):
                f["allocator_conf"] = True
        else:
            f["allocator_conf"] = True
            g = _F["new_gpu_total"].search(window)
            if g:
                f["gpu"] = int(g.group(1)) if g.group(1) is not None else None
                f["total_mib"] = to_mib(g.group(2), g.group(3))
            f["free_mib"] = _mib("new_free", window)
            f["allocated_by_pytorch_mib"] = _mib("new_allocated", window)
            f["reserved_unallocated_mib"] = _mib("new_unallocated", window)
            f["this_process_mib"] = _mib("this_process", window)
            f["private_pools_mib"] = _mib("private_pools", window)
            for pm in _PROCESS_RE.finditer(window):
                f.setdefault("other_process_pids", []).append(int(pm.group(1)))
                f.setdefault("other_process_mib", []).append(to_mib(pm.group(2), pm.group(3)))
        f["limit_mib"] = _mib("allowed", window)
        if _F["over_1eb"].search(window[:200]):
            f["family"] = "over_1eb"
        f["format"] = (
            "other" if dev != "CUDA" or f.get("family") == "over_1eb" else ("old" if old else "new")
        )
    elif family == "hint":
        # The expandable_segments hint is PyTorch >= 2.1's message ("new"), max_split_size_mb
        # the older one's.
        f.update(device="CUDA", format="old" if "max_split" in m.group(0) else "new")
    elif family == "malloc_async":
        f.update(
            device="CUDA",
            format="other",
            gpu=int(m.group("gpu")),
            allocated_by_pytorch_mib=_mib("ma_allocated", window),
            tried_mib=_mib("ma_requested", window),
            total_mib=_mib("ma_total", window),
            free_mib=_mib("ma_free", window),
            limit_mib=_mib("ma_limit", window),
            allocator_conf=True,  # this backend is itself chosen with PYTORCH_CUDA_ALLOC_CONF
        )
    elif family == "mps":
        f.update(
            device="MPS",
            format="other",
            tried_mib=_mib("tried", window),
            allocated_by_pytorch_mib=_mib("mps_allocated", window),
            mps_other_allocations_mib=_mib("mps_other", window),
            limit_mib=_mib("mps_max", window),
        )
    elif family == "nccl":
        g = _F["nccl_gpu"].search(window)
        r = _F["nccl_rank"].search(window)
        f.update(
            device="CUDA",
            format="other",
            tried_mib=_mib("nccl_calloc", window),
            gpu=int(g.group(1)) if g else None,
            rank=int(r.group(1)) if r else None,
        )
    else:  # runtime errors that carry no numbers
        f.update(device="CUDA", format="cuda_runtime")
    return {k: v for k, v in f.items() if v is not None}


def _read(lines: list[str], stripped, glue: bool) -> list[OomMessage]:
    j = _join(stripped, glue)
    anchors = _find_anchors(j)
    out = []
    for i, (pos, family, m, merged_end) in enumerate(anchors):
        first = j.line_of(pos)
        start = j.starts[first] if family == "nccl" else pos
        end = anchors[i + 1][0] if i + 1 < len(anchors) else len(j.text)
        end = min(end, pos + _WINDOW)
        window = j.text[start:end]
        fields = _parse_window(family, m, window)
        fields.setdefault("family", family)
        last = j.line_of(max(start, end - 1))
        rank = fields.pop("rank", None)
        if rank is None:
            rank = j.ranks[first]
        if rank is None:
            rr = _RANK_ANYWHERE.search(lines[first])
            rank = int(rr.group(1)) if rr else None
        before = j.text[j.starts[first] : pos]
        exc = _EXCEPTION_RE.search(before)
        if exc is None and first > 0 and not before.strip():
            exc = _EXCEPTION_RE.search(stripped[first - 1][0])  # "Exception has occurred: X"
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
    # Same messages read two ways: keep, message by message, the reading with more numbers.
    if len(glued) == len(spaced):
        return [
            g if g.numbers_found() > s.numbers_found() else s
            for s, g in zip(spaced, glued, strict=True)
        ]
    return spaced


def parse(text: str) -> OomMessage | None:
    """The first OOM message in `text`, or None."""
    found = parse_all(text)
    return found[0] if found else None
