"""How far a training got, from its own output: the one reader of progress lines, for the phase
(did a step complete before the OOM, and which: docs/design.md §3.1) and for verify (the last
step a rerun printed).

A line reports progress in a shape a framework is known to print (tqdm's and rich's bars, HF
Trainer's loss dict and notebook bar, "[Train] Epoch: [1][371/4899]", a step pattern), or in a
shape of the job's own: a plain loop's lines ("Train loss 4397 0.52 Grad Norm 1.42",
"3710 (1.24%)  30.652 ms ...") are lines of one shape whose count keeps rising, whatever their
words. Pure functions of text.
"""

from __future__ import annotations

import re

from runbook.evidence.units import small_int
from runbook.lazyre import lazy
from runbook.site import STEP_PATTERN

# Lines Slurm itself writes into a job's output: "*** STEP 20.0 ON gpu-01 CANCELLED AT ... ***",
# "slurmstepd: error: ...", "srun: error: ...". Their numbers are Slurm's step ids, never the
# training's steps, whatever [logs] step_pattern matches. They arrive under whatever prefix
# srun -l ("0: "), a launcher ("[rank0]:"), a collector ("gpu-01: ", a timestamp) puts first,
# so they are looked for anywhere in the line, not only at its start.
_SLURM_NOTICE = re.compile(
    r"\*{3}\s*(?:STEP|JOB)\s+\d"
    r"|(?:^|[\s\]:>|])(?:slurmstepd|srun|sbatch|salloc)(?:-[\w.-]+)?:\s"
)
DEFAULT_STEP_PATTERN = STEP_PATTERN  # [logs] step_pattern's default (runbook.site)

# tqdm's bar: its label, then "  59/118 [" (the count done). Only a training loop's bar (no label,
# or an epoch/train/step label) counts; loading, tokenizing and download bars do not.
_TQDM = lazy(r"^(.*?)(?:\d{1,3}%\s*\|[^|]*\||\d{1,3}%)\s*(\d{1,9})/(\d{1,9})\s*\[", needs="/")
# "[Train] Epoch: [1][371/4899]", "Epoch [3/10] [120/500]": the batch within the epoch.
_BRACKETS = lazy(
    r"(?i)(?:epoch|train|iter)\w*\W.*\[\s*(\d{1,9})\s*/\s*\d{1,9}\s*\]\s*(?!.*\[\s*\d+\s*/)"
)
_TRAIN_LABEL = lazy(r"(?i)^\W*$|\bepoch\b|^\W*train(?:ing)?\b|\bsteps?\b|\biter")
_OTHER_LABEL = lazy(
    r"(?i)split|\bmap\b|download|load|token|generat|filter|shard|eval|valid|test|predict"
)
# rich's bar (Lightning's RichProgressBar): "Epoch 0/-2 ━━╸━━ 582/5000 0:00:11 • 53.71it/s".
_RICH_BAR = lazy(
    r"^\s*Epoch\s+\d{1,6}(?:/-?\d{1,6})?\s+[━╸╺─\s]*?\s(\d{1,9})/(?:\d{1,9}|\?)\s", needs="/"
)
# Ultralytics' (and YOLOv5/v7's) training bar: the epoch "1/2", the GPU memory "0G", the losses,
# then its bar (tqdm's "|███|" or its own "━━━───") and the batch within the epoch:
# "        1/2      3.2G      1.295  ...  64: 25% ━━━───────── 3/12 6.2it/s" (ultralytics 8.4,
# tests/data/zoo). Its validation bar starts "Class  Images  Instances" and is no step.
_YOLO_BAR = lazy(
    r"^\s*\d{1,5}/\d{1,5}\s+[\d.]+[GM]?\s+(?:[\d.]+\s+){1,8}.*?:\s*\d{1,3}%\s*"
    r"(?:\|[^|]*\||[━─╸╺\s]*)\s*(\d{1,9})/\d{1,9}\b",
    needs="%",
)
_HF_LOG = lazy(r"\{'loss':\s*'?[\d.]+", needs="'loss'")
# HF Trainer's notebook bar: "[ 501/1500 06:35 < 13:11, 1.26 it/s, Epoch 1/3]" (training only:
# its evaluation bar names no epoch).
_HF_NOTEBOOK = lazy(r"^\s*\[\s*(\d{1,9})/\d{1,9}\s[^\]]*\bEpoch\s+[\d.]+/\d", needs="Epoch")


# A training loss's figure: whatever the framework, a line that reports one says a step ran
# ("epoch 0  | loss: 2.14752 | val_0_accuracy", "Epoch: 001, Loss: 1.9463, Train: 0.20, Val:",
# "12/50 ... - loss: 1.3763", "epoch 1 average loss: 1.3860", "[iter 40] train_loss=0.51"). A
# figure whose label names an evaluation (val_loss, "Validation loss", eval_loss, test loss) is
# the evaluation's, never a step; nor is "loss scale" (a scaler's setting).
_LOSS_FIGURE = lazy(
    r"(?i)(?<![a-z])loss(?:es)?\b['\"]?\s*(?:[:=]|\bis\b)?\s*[\[(]?-?\d*\.\d+", needs="oss"
)
_EVAL_LABEL = lazy(r"(?i)(?:val|valid|validation|eval|evaluation|test|dev|held[_ -]?out)[_ /-]?$")


def training_loss(line: str) -> bool:
    """Whether the line reports a training loss's value (a step ran)."""
    for m in _LOSS_FIGURE.finditer(line):
        if not _EVAL_LABEL.search(line[max(0, m.start() - 12) : m.start()]):
            return True
    return False


def _trains_loss_column(header: str) -> bool:
    """A table's header names a training loss's column (train_loss, loss; not valid_loss)."""
    for word in header.split():
        at = word.lower().find("loss")
        if at >= 0 and not _EVAL_LABEL.search(word[:at]):
            return True
    return False


def table_rows(lines: list[str], ranks: list[int | None] | None = None) -> set[int]:
    """Rows of figures under a table header that names a training loss's column: each reports a
    training loss, so each says steps ran (one row is enough, a rising count is not needed)."""
    header: dict[int | None, bool] = {}
    out: set[int] = set()
    for i, line in enumerate(lines):
        rank = ranks[i] if ranks is not None else None
        if _TABLE_HEAD.search(line) and not _NUMBER.search(line):
            header[rank] = _trains_loss_column(line)
            continue
        if not header.get(rank) or is_slurm_notice(line):
            continue
        shape, counts = _shape(line)
        if _TABLE_ROW.match(shape) and len(counts) > 1:
            out.add(i)
    return out


def is_slurm_notice(line: str) -> bool:
    return _SLURM_NOTICE.search(line) is not None


def _count(n: int | None) -> tuple[bool | None, int | None]:
    """A bar's count: a step done, or a loop started with none done (0/N)."""
    return (True, n) if n else (False, None)


def known_progress(line: str, step_rx: re.Pattern) -> tuple[bool | None, int | None]:
    """Whether a line reports training progress in a shape a framework prints: True with the
    step's number when a step completed, False when the loop shows it started with none done
    (a 0/N bar), None otherwise."""
    if is_slurm_notice(line):
        return None, None
    if m := _YOLO_BAR.match(line):
        return _count(small_int(m.group(1)))
    if m := _TQDM.search(line):
        label = m.group(1)
        if _TRAIN_LABEL.search(label) and not _OTHER_LABEL.search(label):
            return _count(small_int(m.group(2)))
        return None, None
    if m := _RICH_BAR.match(line):
        return _count(small_int(m.group(1)))
    if m := step_rx.search(line):
        return True, small_int(m.group(1))
    if (m := _BRACKETS.search(line)) and not _OTHER_LABEL.search(line[: m.start(1)]):
        return _count(small_int(m.group(1)))
    if _HF_LOG.search(line):
        return True, None
    if m := _HF_NOTEBOOK.match(line):
        return _count(small_int(m.group(1)))
    if training_loss(line):
        return True, None
    return None, None


# A plain loop's own lines. Clock and date stamps rise too, and are not counts; nor is a number
# with a unit after it (memory, time, a rate, a percentage); a traceback's frame lines and
# loading/evaluation lines are not the training's steps.
_STAMP = re.compile(
    r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?"
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
)
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?![\d,]*\d)(\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)?"
    r"(\s*(?:%|[KMGT]i?B\b|[kMG]?B\b|ms\b|s\b|sec|it/s|s/it|[KMG]\b|x\b|h\b|m\b|min\b))?"
)
# Start-up work counts too, before any step: an index being built ("Building index: sorted 4000
# entries"), layers compiled ("Compiling layer 4 of 24"), a loss scaler's scale (512 .. 4096).
_NOT_A_LOOP = lazy(
    r'(?i)^\s*File "|\bline \d|download|loading|load(?:ed)? |token|shard|eval|valid|test|'
    r"predict|generat|\bsaving\b|\bsaved\b|warn|\bbuild(?:ing)?\b|\bindexing\b|compil|"
    r"initiali[sz]|loss.?scal|grad.?scal|\bscal(?:e|er|ing)\b|"
    # an evaluation's own bars: mmcv's "[>>>  ] 63/399, 0.2 task/s", YOLO's "Class  Images ..."
    r"task/s|^\s*Class\s+Images\b"
)
_WORD = re.compile(r"[A-Za-z]{2}")
# A progress table: a header of words naming a loss, an epoch or a step, no figure in it, then
# rows of figures only ("   1   0.6932   0.6928  0.0120", "0  1.2345  1.1111  0.5000  00:05").
_TABLE_HEAD = lazy(r"(?i)^\W*(?:\w+\W+){1,15}?\w*(?:loss|epoch|step|iter)\w*(?:\W+\w+){1,15}\W*$")
_TABLE_ROW = re.compile(r"^[#@\s|+*✓✔\-:.,]+$")
MIN_RISING = 3  # counts a shape must show rising before the failure: two could be anything


# A number that names who printed the line (a rank, a process, a device, a data loader's worker,
# a layer being built) is no count: each rank's start-up line says its own rank, and four of
# them in a shared log rise 0, 1, 3 by chance ("Worker-3 started", "[dataloader #5] ready").
_WHO = re.compile(
    r"(?i)(?:\b(?:local_|global_|world_)?rank|\bpid|\bgpu|\bdevice|cuda:|\bnode|\bworker|"
    r"\bprocess|\bproc|\bthread|\btask|loader|\blayer)\s*[=:#_-]?\s*\[?$"
)


def _shape(line: str) -> tuple[str, list[int | None]]:
    """The line with every number made `#`, and the whole counts among them (None for a number
    that is not one: a float, a number with a unit, one naming a rank or a process)."""
    text = _STAMP.sub("@", line)
    counts: list[int | None] = []

    def one(m: re.Match) -> str:
        who = _WHO.search(text, max(0, m.start() - 16), m.start())
        whole = not (m.group(2) or m.group(3) or who)
        counts.append(small_int(m.group(1).replace(",", "")) if whole else None)
        return "#" + (m.group(3) or "")

    return " ".join(_NUMBER.sub(one, text).split()), counts


def rising_counts(lines: list[str], ranks: list[int | None] | None = None) -> dict[int, int]:
    """Lines (by index) of a shape whose count kept rising up to its last line, with the count:
    a plain loop's steps, whatever its words. Of several rising counts in one shape (an epoch and
    its step), the one rising by a steady stride to the largest value is the step. `ranks`: the
    rank each line came from where a prefix says it (each rank's lines are read apart)."""
    by_shape: dict[tuple[int | None, str], list[tuple[int, list[int | None]]]] = {}
    header: dict[int | None, str] = {}
    for i, line in enumerate(lines):
        rank = ranks[i] if ranks is not None else None
        if _TABLE_HEAD.search(line) and not _NUMBER.search(line):
            header[rank] = " ".join(line.split())
            continue
        if is_slurm_notice(line) or _NOT_A_LOOP.search(line):
            continue
        shape, counts = _shape(line)
        if rank in header and _TABLE_ROW.match(shape) and len(counts) > 1:
            # A table's row under its header (skorch's, fastprogress's, a loop's own): the
            # header's words are the row's shape.
            shape = header[rank]
        # A bare number is a code listing's line number (IPython's, rich's), not a step line.
        if any(c is not None for c in counts) and _WORD.search(shape):
            by_shape.setdefault((rank, shape), []).append((i, counts))
    out: dict[int, int] = {}
    for rows in by_shape.values():
        best = _steps_of(rows)
        if best is not None:
            pos, start = best
            for i, c in rows[start:]:
                if (n := c[pos]) is not None:
                    out[i] = n
    return out


def _steps_of(rows: list[tuple[int, list[int | None]]]) -> tuple[int, int] | None:
    """(position of the step count, first row of its rising run) for one shape's rows."""
    if len(rows) < MIN_RISING:
        return None
    found = []
    for pos in range(len(rows[-1][1])):
        values = [c[pos] for _, c in rows]
        start = len(values)  # the run: the last rows, each count at least the one before
        while start > 0 and (v := values[start - 1]) is not None:
            if start < len(values) and v > (values[start] or 0):
                break
            start -= 1
        run = [v for v in values[start:] if v is not None]
        if len(set(run)) < MIN_RISING:
            continue
        strides = {b - a for a, b in zip(run, run[1:], strict=False) if b != a}
        found.append((len(strides) == 1, run[-1], -pos, start))
    if not found:
        return None
    _, _, neg_pos, start = max(found)
    return -neg_pos, start


def all_steps(lines: list[str], step_pattern: str) -> list[int]:
    """Every training step printed in `lines`, in order, from the training's own output only."""
    out = []
    for line in lines:
        if is_slurm_notice(line):
            continue
        for m in re.finditer(step_pattern, line):
            n = small_int(m.group(1))
            if n is not None:
                out.append(n)
    return out


def training_steps(lines: list[str], step_pattern: str, at_most: int | None = None) -> int | None:
    """The last training step printed in `lines`, from the training's own output only; with
    `at_most`, numbers past it (more than the run could have done) are not steps."""
    steps = [n for n in all_steps(lines, step_pattern) if at_most is None or n <= at_most]
    return steps[-1] if steps else None
