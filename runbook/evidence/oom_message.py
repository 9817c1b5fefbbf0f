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

from runbook.evidence.framing import ANSI_RE, wrap_sep
from runbook.evidence.units import SIZE, to_mib
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
    they named."""
    if any(rule in line for rule in _BOX_RULES):
        if m := _BOX_END.search(line):
            line = line[: m.start()]
        if m := _BOX_START.match(line):
            line = line[m.end() :]
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
def _anchor(family: str, pattern: str, *needs: str, flags: int = 0) -> tuple[str, LazyPattern]:
    return family, lazy(pattern, flags, needs=needs)


_ANCHORS: list[tuple[str, LazyPattern]] = [
    _anchor(
        "malloc_async",
        r"Allocation\s*on\s*device\s*(?P<gpu>\d{1,18}(?!\d))\s*would\s*exceed\s*allowed",
        "Allocation",
        "exceed",
    ),
    _anchor("mps", r"MPS\s*backend\s*out\s*of\s*memory", "MPS", "backend"),
    # With expandable_segments on (PyTorch >= 2.1), a mapping the driver refuses is logged as a
    # c10 warning with exact byte counts; the error raised after it may not say out of memory
    # (an AOTInductor call, a custom op).
    _anchor(
        "expandable",
        r"expandable_segments\s*:\s*memory\s*mapping\s*failed\s*with\s*OOM\s*on\s*device\s*"
        r"(?P<gpu>\d{1,4}(?!\d))\s*while\s*trying\s*to\s*map\s*(?P<tried>\d{1,20}(?!\d))\s*bytes"
        r"\s*\(\s*free\s*:\s*(?P<free>\d{1,20}(?!\d))\s*,\s*total\s*:\s*(?P<total>\d{1,20}(?!\d))",
        "expandable_segments",
        "mapping",
    ),
    # "out of the memory": how people retype it.
    _anchor("caching", r"\b(?P<dev>CUDA|HIP|XPU)\s*out\s*of\s*(?:the\s*)?memory\b(?!')", "memory"),
    # Any case: people retype the message ("cuda out of memory, tried to allocate 50MiB(GPU 0;");
    # a size and "(GPU" after it keep prose out.
    _anchor(
        "caching",
        r"(?<![A-Za-z])Tried\s*to\s*allocate\s*" + SIZE + r"\s*\(\s*GPU",
        "allocate",
        flags=re.IGNORECASE,
    ),
    _anchor(
        "thc",
        r"THCudaCheck\s*FAIL\b[^\n]{0,400}?error\s*=\s*2\s*:\s*out\s*of\s*memory",
        "THCudaCheck",
    ),
    # "err(2)": how people retype it (the message itself says "error (2)").
    _anchor(
        "thc",
        r"cuda\s*runtime\s*err(?:or)?\s*\(\s*2\s*\)\s*:\s*out\s*of\s*memory",
        "runtime",
        "memory",
    ),
    _anchor("cuda_error", r"CUDA\s*error\s*:\s*out\s*of\s*memory", "CUDA", "error"),
    # C++ libraries that report the CUDA runtime's error string: CTranslate2 (faster-whisper,
    # WhisperX) "CUDA failed with error out of memory", spconv's tensorview "cuda failed with
    # error 2 out of memory", Marian's "CUDA error 2 'out of memory' - ...: cudaMalloc(...)".
    _anchor(
        "cuda_error",
        r"CUDA\s*(?:failed\s*with\s*error\s*(?:\d{1,4}\s*)?|error\s*\d{1,4}\s*'?)out\s*of\s*memory",
        "error",
        "memory",
        flags=re.IGNORECASE,
    ),
    # C++ code that prints the failed runtime call, then where, then the error string: kmcuda's
    # "cudaMalloc(&__ptr, __size)" / "src/kmcuda.cc:456 -> out of memory".
    _anchor(
        "cuda_error",
        r"\bcudaMalloc\w{0,20}\s*\([^()\n]{0,200}\)\s*\S{1,300}?\s*->\s*out\s*of\s*memory",
        "cudaMalloc",
        "memory",
    ),
    # The driver API's allocation failing with the runtime's error string (PyCUDA's
    # "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory"), and CuPy's memory pool
    # ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 80384 bytes (total N bytes)").
    _anchor("cuda_error", r"\bcuMem\w{0,20}\s*failed\s*:\s*out\s*of\s*memory", "cuMem", "memory"),
    _anchor(
        "cuda_error",
        r"OutOfMemoryError\s*:\s*out\s*of\s*memory\s*to\s*allocate\s*\d",
        "OutOfMemoryError",
        "allocate",
    ),
    _anchor("cublas", r"CUBLAS_STATUS_ALLOC_FAILED", "CUBLAS_STATUS_ALLOC_FAILED"),
    _anchor(
        "nccl",
        r"NCCL\s*WARN\s*(?:Cuda\s*failure\s*(?:\d{1,4}\s*)?'out\s*of\s*memory'|"
        r"Failed\s*to\s*CUDA\s*calloc)",
        "NCCL",
        "WARN",
    ),
    # PyTorch's allocator hint, printed only as the tail of a caching-allocator OOM message
    # (c10/cuda/CUDACachingAllocator.cpp). Alone, it is a fragment whose first lines were cut
    # (a log collector's line limit, a paste): an OOM happened, its numbers are lost.
    _anchor(
        "hint",
        r"If\s*reserved\s*(?:but\s*unallocated\s*)?memory\s*is\s*(?:large|>>\s*allocated\s*"
        r"memory)\s*try\s*setting\s*(?:PYTORCH_(?:CUDA_)?ALLOC_CONF=expandable_segments|"
        r"max_split_size_mb)",
        "reserved",
        "setting",
    ),
]
# Anchors of one family this close together are one incident told twice (NCCL prints the CUDA
# failure then the calloc; old PyTorch printed THCudaCheck then the RuntimeError).
_MERGE_WITHIN = {"nccl": 600, "thc": 1200, "cuda_error": 0, "cublas": 0}
_WINDOW = 2500

# The exception name right before a message, wherever the joined text put its line breaks.
_EXCEPTION_HEAD = lazy(r"(?:torch\.(?:cuda\.)?)?OutOfMemoryError\s*:\s*$", needs="OutOfMemoryError")
_EXCEPTION_RE = lazy(
    r"((?:torch\.(?:cuda\.)?)?OutOfMemoryError|RuntimeError|torch\.distributed\.DistBackendError|"
    r"Error)\s*:\s*$"
)


# The sizes a message states are read by grammar, not one pattern per field: every size in the
# message ("<number> <unit>") is found once, then named by the words around it, compared letter
# by letter in lower case with any whitespace between them (as `\s*` would: pastes glue and wrap
# words). One pattern for all sizes instead of one per field: compiling ~20 patterns that each
# carry the size grammar cost a `runbook diagnose` more than reading its log (bench/startup.py).
_SIZE_ANY = lazy(SIZE, re.IGNORECASE)

# field -> (words before the size, words after it, whether a word must end there)
_SIZED: dict[str, tuple[str, str, bool]] = {
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
_SIZED_WORDS = {k: ("".join(b.split()), "".join(a.split()), w) for k, (b, a, w) in _SIZED.items()}

_F = {
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
_OLD_LINE_TAIL = lazy(
    r"reserved\s*in\s*total\s*by\s*PyTorch\s*(\))[ \t`'\"*_.]*(?:\(malloc\s+at\s[^()\n]*\)[ \t`'\"*_.]*)?",
    re.IGNORECASE,
    needs="total",
)
_ALLOC_HINT = lazy(
    r"try\s*setting\s*(?:max_split_size_mb|PYTORCH_(?:CUDA_)?ALLOC_CONF)",
    re.IGNORECASE,
    needs="setting",
)


def _follows(text: str, pos: int, words: str) -> int | None:
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


def _precedes(text: str, pos: int, words: str) -> int | None:
    """Where `words` start if they end right before `pos` (whitespace allowed); None if not."""
    i = pos
    for ch in reversed(words):
        while i > 0 and text[i - 1].isspace():
            i -= 1
        if i <= 0 or text[i - 1].lower() != ch:
            return None
        i -= 1
    return i


def _sizes(window: str) -> list[tuple[int, int, float]]:
    """(start, end, MiB) of every size in the window, in order."""
    return [
        (m.start(), m.end(), to_mib(m.group(1), m.group(2))) for m in _SIZE_ANY.finditer(window)
    ]


def _mib(name: str, window: str, sizes: list) -> float | None:
    """The first of the window's sizes (`_sizes`) that the field's words surround."""
    before, after, word_end = _SIZED_WORDS[name]
    for start, end, mib in sizes:
        if before and _precedes(window, start, before) is None:
            continue
        if after:
            stop = _follows(window, end, after)
            if stop is None:
                continue
            if word_end and stop < len(window) and (window[stop].isalnum() or window[stop] == "_"):
                continue
        return mib
    return None


def _number_before(text: str, pos: int) -> tuple[int, str]:
    """The digits that end right before `pos` (whitespace allowed), and where they start; ""
    where there are none."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    end = i
    while i > 0 and text[i - 1].isdigit():
        i -= 1
    return i, text[i:end]


def _gpu_total(window: str, sizes: list) -> tuple[int | None, float] | None:
    """ "GPU 3 has a total capacity of X" (also "capacty"; the index can be missing, "GPU  has"):
    the GPU index and the size."""
    for start, _end, mib in sizes:
        for words in ("hasatotalcapacityof", "hasatotalcapactyof"):
            at = _precedes(window, start, words)
            if at is None:
                continue
            i, index = _number_before(window, at)
            if _precedes(window, i, "gpu") is not None and len(index) <= 18:
                return (int(index) if index else None), mib
    return None


def _other_processes(window: str, sizes: list) -> list[tuple[int, float]]:
    """ "Process N has X memory in use": another process on the card. Case matters: "this
    process has X" is the failing process itself."""
    found = []
    for start, end, mib in sizes:
        if _follows(window, end, "memoryinuse") is None:
            continue
        at = _precedes(window, start, "has")
        if at is None:
            continue
        i, pid = _number_before(window, at)
        head = window[:i].rstrip()
        if pid and len(pid) <= 18 and head.endswith("Process"):
            found.append((int(pid), mib))
    return found


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
    for family, pattern in _ANCHORS:
        for m in pattern.finditer(j.text):
            found.append((m.start(), family, m))
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
            if family == pfamily and pos - ppos <= _MERGE_WITHIN.get(family, -1):
                kept[-1][3] = m.end()
                continue
            if pfamily == "caching" and family == "cuda_error" and pos - ppos < 40:
                continue
            if family == "hint" and pos - ppos <= _WINDOW:
                continue  # the tail of the message before it
        kept.append([pos, family, m, m.end()])
    return kept


def _parse_window(family: str, m: re.Match, window: str, line_ends: frozenset[int]) -> dict:
    """The fields of one message. `line_ends`: where, in `window`, a line of the original text
    ended (the joined text repairs hard wraps, so it has no line breaks of its own)."""
    sizes = _sizes(window) if family in ("caching", "malloc_async", "mps", "nccl") else []
    read = _FAMILY_FIELDS.get(family, _runtime_fields)
    f = read(m, window, sizes, line_ends)
    return {k: v for k, v in f.items() if v is not None}


def _caching_fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    """PyTorch's caching allocator (CUDA, HIP, XPU): the old parenthesised numbers (before 2.1)
    or the new sentences."""
    dev = (m.groupdict().get("dev") or "CUDA").upper()
    f: dict = {"device": dev, "tried_mib": _mib("tried", window, sizes)}
    g = _F["old_gpu"].search(window)
    old = g is not None or _mib("old_total", window, sizes) is not None
    if old:
        f["gpu"] = int(g.group(1)) if g else None
        _old_fields(f, window, sizes, line_ends)
    else:
        _new_fields(f, window, sizes)
    f["limit_mib"] = _mib("allowed", window, sizes)
    if _F["over_1eb"].search(window[:200]):
        f["family"] = "over_1eb"
    f["format"] = (
        "other" if dev != "CUDA" or f.get("family") == "over_1eb" else ("old" if old else "new")
    )
    return f


def _old_fields(f: dict, window: str, sizes: list, line_ends: frozenset[int]) -> None:
    f["total_mib"] = _mib("old_total", window, sizes)
    f["allocated_by_pytorch_mib"] = _mib("old_allocated", window, sizes)
    f["free_mib"] = _mib("old_free", window, sizes)
    f["reserved_total_mib"] = _mib("old_reserved", window, sizes)
    f["reserved_unallocated_mib"] = _mib("old_cached", window, sizes)
    f["inactive_mib"] = _mib("old_inactive", window, sizes)
    if f["reserved_unallocated_mib"] is not None and f["reserved_total_mib"] is None:
        f["allocator_conf"] = False
    elif _ALLOC_HINT.search(window):
        f["allocator_conf"] = True
    elif (t := _OLD_LINE_TAIL.search(window)) and any(
        t.start(1) < e <= t.end() for e in (*line_ends, len(window))
    ):
        # PyTorch prints the hint on the message's own line, and the hint came with the
        # setting it names (pytorch#44742): a line that ends at the closing parenthesis
        # is a PyTorch without PYTORCH_CUDA_ALLOC_CONF (a text cut inside the line, as
        # titles are, still tells nothing).
        f["allocator_conf"] = False


def _new_fields(f: dict, window: str, sizes: list) -> None:
    if gt := _gpu_total(window, sizes):
        f["gpu"], f["total_mib"] = gt
    f["free_mib"] = _mib("new_free", window, sizes)
    f["allocated_by_pytorch_mib"] = _mib("new_allocated", window, sizes)
    if f["allocated_by_pytorch_mib"] is None:
        f["allocated_by_pytorch_mib"] = _mib("new_allocated_head", window, sizes)
    f["reserved_unallocated_mib"] = _mib("new_unallocated", window, sizes)
    f["this_process_mib"] = _mib("this_process", window, sizes)
    f["private_pools_mib"] = _mib("private_pools", window, sizes)
    for pid, mib in _other_processes(window, sizes):
        f.setdefault("other_process_pids", []).append(pid)
        f.setdefault("other_process_mib", []).append(mib)
    if _F["sentences"].search(window):
        f["allocator_conf"] = True  # the sentence format is PyTorch >= 2.1's
    else:
        # Only the first sentence ("CUDA out of memory. Tried to allocate 20.00 MiB"):
        # both formats start so. Which one, _read guesses from the exception name.
        f["format_guess"] = True


def _hint_fields(m: re.Match, window: str, sizes: list, line_ends: frozenset[int]) -> dict:
    # The expandable_segments hint is PyTorch >= 2.1's message ("new"), max_split_size_mb
    # the older one's.
    return {"device": "CUDA", "format": "old" if "max_split" in m.group(0) else "new"}


def _malloc_async_fields(m: re.Match, window: str, sizes: list, line_ends) -> dict:
    return {
        "device": "CUDA",
        "format": "other",
        "gpu": int(m.group("gpu")),
        "allocated_by_pytorch_mib": _mib("ma_allocated", window, sizes),
        "tried_mib": _mib("ma_requested", window, sizes),
        "total_mib": _mib("ma_total", window, sizes),
        "free_mib": _mib("ma_free", window, sizes),
        "limit_mib": _mib("ma_limit", window, sizes),
        "allocator_conf": True,  # this backend is itself chosen with PYTORCH_CUDA_ALLOC_CONF
    }


def _expandable_fields(m: re.Match, window: str, sizes: list, line_ends) -> dict:
    return {
        "device": "CUDA",
        "format": "other",
        "gpu": int(m.group("gpu")),
        "tried_mib": int(m.group("tried")) / 2**20,
        "free_mib": int(m.group("free")) / 2**20,
        "total_mib": int(m.group("total")) / 2**20,
        "allocator_conf": True,  # expandable_segments is itself an allocator setting
    }


def _mps_fields(m: re.Match, window: str, sizes: list, line_ends) -> dict:
    return {
        "device": "MPS",
        "format": "other",
        "tried_mib": _mib("tried", window, sizes),
        "allocated_by_pytorch_mib": _mib("mps_allocated", window, sizes),
        "mps_other_allocations_mib": _mib("mps_other", window, sizes),
        "limit_mib": _mib("mps_max", window, sizes),
    }


def _nccl_fields(m: re.Match, window: str, sizes: list, line_ends) -> dict:
    g = _F["nccl_gpu"].search(window)
    r = _F["nccl_rank"].search(window)
    return {
        "device": "CUDA",
        "format": "other",
        "tried_mib": _mib("nccl_calloc", window, sizes),
        "gpu": int(g.group(1)) if g else None,
        "rank": int(r.group(1)) if r else None,
    }


def _runtime_fields(m: re.Match, window: str, sizes: list, line_ends) -> dict:
    """Runtime errors that carry no numbers (cuda_error, thc, cublas)."""
    return {"device": "CUDA", "format": "cuda_runtime"}


# Each family's reader of its numbers; a family not named here carries none.
_FAMILY_FIELDS = {
    "caching": _caching_fields,
    "hint": _hint_fields,
    "malloc_async": _malloc_async_fields,
    "expandable": _expandable_fields,
    "mps": _mps_fields,
    "nccl": _nccl_fields,
}


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
        start = j.starts[first] if family == "nccl" else pos
        end = anchors[i + 1][0] if i + 1 < len(anchors) else len(j.text)
        end = min(end, pos + _WINDOW)
        window = j.text[start:end]
        line_ends = frozenset(
            j.starts[k] + len(stripped[k][0]) - start
            for k in range(first, j.line_of(max(start, end - 1)) + 1)
        )
        fields = _parse_window(family, m, window, line_ends)
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
