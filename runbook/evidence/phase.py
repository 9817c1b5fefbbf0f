"""When and where a job ran out of memory (docs/design.md §3.1): a pure function of the log's lines.

**where** the failing allocation was asked for comes from the failing rank's traceback, frame by
frame, through the table WHERE (data: each entry names the phase, what it matches in a frame,
and why); a phase named by several frames is chosen by PRIORITY, because a traceback names the
loop it ran in as well as the module that allocated: an evaluation's forward pass is `eval`, an
activation recomputed inside backward is `backward`, `optimizer.load_state_dict` under a resume
is `checkpoint_load`. Without a traceback, the log's stage markers ("Running Evaluation",
"Loading checkpoint", an eval progress bar) name it.

**when**: `first_step` (no training step completed in this run), `mid_run` (steps completed),
`eval_start` (the first evaluation after training steps), `after_resume` (while or right after
loading the resume checkpoint, before new steps complete), else `unknown`: a log that shows no
progress at all does not prove that none was made.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import field

from runbook.evidence import progress
from runbook.evidence.oom_message import strip_line
from runbook.evidence.units import small_int
from runbook.lazyre import lazy
from runbook.record import record

WHERE_KINDS = (
    "forward",
    "backward",
    "optimizer_step",
    "eval",
    "data",
    "checkpoint_load",
    "checkpoint_save",
    "model_init",
    "unknown",
)
WHEN_KINDS = ("first_step", "mid_run", "eval_start", "after_resume", "unknown")
# How far back from the OOM message a traceback and the log's markers are looked for: a deep
# traceback (Lightning, HF Trainer, DeepSpeed) has ~40 frames of two lines each.
REACH = 400
MAX_EVIDENCE = 6
HEADLESS_REACH = 60


@record
class Frame:
    """One frame of a Python traceback, as printed (any of its formats)."""

    file: str
    line: int | None
    func: str
    code: str = ""

    def text(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where} in {self.func}" + (f": {self.code}" if self.code else "")


@record
class Phase:
    """Where in the training step and when in the run the memory ran out, and the lines that
    say so."""

    where: str = "unknown"
    when: str = "unknown"
    step: int | None = None  # the last training step completed before the OOM
    evidence: list[str] = field(default_factory=list)
    frames: list[Frame] = field(
        default_factory=list
    )  # the failing rank's traceback, outermost first
    # The traceback shows tensors restored onto the device they were saved from (torch.load
    # without a map_location to the CPU or this rank's GPU).
    restored_to_saved_device: bool = False
    # The frames that show an evaluation keeping every batch's outputs on the GPU (HF Trainer's
    # nested_concat of preds_host, a loop's all_preds.append(logits)): what grows is the whole
    # evaluation set's predictions, not one batch.
    kept_predictions: list[str] = field(default_factory=list)

    def contract(self) -> dict:
        return {
            "where": self.where,
            "when": self.when,
            "step": self.step,
            "evidence": self.evidence,
        }


# -- traceback frames, in the formats people paste --------------------------------------------
# CPython:     File "path", line N, in func          (then the code line, maybe carets)
# IPython 8:   File ~/path.py:1633, in Trainer.train(self, ...)   and  Cell In[9], line 22
# IPython 7:   /path/module.py in __call__(self, *input)          and  <ipython-input-5-x> in f()
# rich:        /path/grad_scaler.py:290 in _maybe_opt_step        (the code line after a ❱)
_PY_FRAME = lazy(r'^File\s+"([^"]+)",\s+line\s+(\d{1,9}),\s+in\s+(\S+)', needs="File")
_IPY8_FRAME = lazy(r"^File\s+(\S.*?\.py):(\d{1,9}),\s+in\s+([\w.<>]+)", needs="File")
_IPY_CELL = lazy(
    r"^(Cell\s+In\s*\[\d+\]|<ipython-input-[\w-]+>),?\s+(?:line\s+(\d+)\s+)?in\s+([\w.<>]+)"
)
_IPY7_FRAME = lazy(r"^(\S+\.py)\s+in\s+([\w.<>]+)\(", needs=".py")
_RICH_FRAME = lazy(r"^(\S.*?\.py):(\d{1,9})\s+in\s+([\w.<>]+)\s*$", needs=".py")
_RICH_CUT = lazy(r"^(\S.*?\.py):\s*$", needs=".py")
_RICH_CUT_TAIL = lazy(r"^(\d{1,9})\s+in\s+([\w.<>]+)\s*$", needs=" in ")
_CODE_MARK = lazy(r"^(?:❱|-+>|->)\s*\d+\s*[│|]?\s*(.*)$")
_TRACEBACK_HEAD = lazy(r"Traceback \(most recent call last\)", needs="Traceback")
_CARETS = lazy(r"^[\s^~]+$")


def _frame_at(lines: list[str], i: int) -> tuple[Frame, int] | None:
    """The frame whose header is at lines[i], with its code line, and how many lines it took."""
    s = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if m := _PY_FRAME.match(s):
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + 1)
    if got := _wrapped_frame(lines, i):  # a narrow console wrapped the header
        m, used = got
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + used)
    if m := _IPY8_FRAME.match(s):
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + 1)
    if m := _IPY_CELL.match(s):
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + 1)
    if m := _RICH_FRAME.match(s):
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + 1)
    if (m := _RICH_CUT.match(s)) and (t := _RICH_CUT_TAIL.match(nxt)):
        return _with_code(Frame(m.group(1), small_int(t.group(1)), t.group(2)), lines, i + 2)
    if got := _wrapped_rich(lines, i):
        m, used = got
        return _with_code(Frame(m.group(1), small_int(m.group(2)), m.group(3)), lines, i + used)
    if m := _IPY7_FRAME.match(s):
        return _with_code(Frame(m.group(1), None, m.group(2)), lines, i + 1)
    return None


WRAP_REACH = 3  # a header wrapped by a narrow console (a rich log handler's column) spans <= 4


def _wrapped_frame(lines: list[str], i: int) -> tuple[re.Match, int] | None:
    """CPython's frame header cut by a console's width, and the lines it took: after "File"
    ("File" / '"path", line N, in f') or inside the path ('"/site-packages/fairseq2/optim/_dynamic_'
    / 'loss_scaler.py", line 170, in run_optimizer_step'); the pieces are joined as printed."""
    s = lines[i]
    if s == "File":
        return _joined(lines, i, "File ", _PY_FRAME)
    if s.startswith('File "') and '", line' not in s:
        return _joined(lines, i, s, _PY_FRAME)
    return None


def _joined(lines: list[str], i: int, head: str, whole) -> tuple[re.Match, int] | None:
    """`head` (line i, or what stands for it) with the next lines joined as printed, until
    `whole` matches: the match and the lines it took (at most WRAP_REACH more), else None."""
    joined = head
    for k in range(1, WRAP_REACH + 1):
        if i + k >= len(lines) or not lines[i + k]:
            return None
        joined += lines[i + k]
        if m := whole.match(joined):
            return m, k + 1
    return None


_PATH_PIECE = lazy(r"^\S*[/\\]\S*$")


def _wrapped_rich(lines: list[str], i: int) -> tuple[re.Match, int] | None:
    """rich's frame header cut inside its path by the box's width ("/site-packages/torch/nn/
    modules/module." / "py:1818 in state_dict"): a path piece alone on its line, joined with the
    next as printed."""
    s = lines[i]
    if not _PATH_PIECE.match(s) or _RICH_FRAME.match(s):
        return None
    return _joined(lines, i, s, _RICH_FRAME)


def _is_frame(lines: list[str], i: int) -> bool:
    s = lines[i]
    return bool(
        _PY_FRAME.match(s)
        or _IPY8_FRAME.match(s)
        or _IPY_CELL.match(s)
        or _RICH_FRAME.match(s)
        or _IPY7_FRAME.match(s)
        or _wrapped_frame(lines, i) is not None
        or _wrapped_rich(lines, i) is not None
        or (_RICH_CUT.match(s) and i + 1 < len(lines) and _RICH_CUT_TAIL.match(lines[i + 1]))
    )


CODE_REACH = 12  # IPython and rich print a few lines of source around the failing one


def _with_code(frame: Frame, lines: list[str], j: int) -> tuple[Frame, int]:
    """The frame's code line: CPython's next line; IPython's and rich's marked line (`---> 22`,
    `❱ 290`) among the source lines they print."""
    end = min(len(lines), j + CODE_REACH)
    for k in range(j, end):
        if _is_frame(lines, k) or _TRACEBACK_HEAD.search(lines[k]):
            break
        if m := _CODE_MARK.match(lines[k]):
            frame.code = m.group(1).strip()[:200]
            return frame, k + 1 - (j - 1)
    # CPython's code line: not a frame, not carets, not an IPython source-listing line.
    if (
        j < len(lines)
        and lines[j]
        and not _is_frame(lines, j)
        and not _CARETS.match(lines[j])
        and not re.match(r"^\s*\d+\s", lines[j])
    ):
        frame.code = lines[j].strip()[:200]
    return frame, 1


# srun -l's "3: " before an indented traceback line ("3:   File ..."), which the general prefix
# reader leaves alone (it wants text right after the label, so a number in prose is not a rank).
_SRUN_LABEL = lazy(r"^[ \t]*(\d{1,6}):[ \t]")


def _stripped(raw: str) -> tuple[str, int | None]:
    text, r = strip_line(raw)
    if r is None and (m := _SRUN_LABEL.match(text)):
        text, r = text[m.end() :], int(m.group(1))
    return text, r


def _own(lines: list[str], rank: int | None) -> list[str]:
    """The lines of `rank` (a `[rankN]:` or srun label of another rank is not its own),
    stripped."""
    out = []
    for raw in lines:
        text, r = _stripped(raw)
        if rank is None or r is None or r == rank:
            out.append(text.strip())
    return out


def _parse_frames(own: list[str], i: int, stop: int | None = None) -> list[Frame]:
    out: list[Frame] = []
    while i < len(own):
        if stop is not None and i > 0 and _EXCEPTION.match(own[i]) and out:
            break
        got = _frame_at(own, i)
        if got is None:
            i += 1
            continue
        frame, used = got
        out.append(frame)
        i += max(used, 1)
    return out


_EXCEPTION = lazy(r"^[A-Za-z_][\w.]*(?:Error|Exception)\b")
AFTER_REACH = 4  # old PyTorch prints THC's "out of memory" line, then the Python traceback


def traceback_frames(lines: list[str], at: int, rank: int | None = None) -> list[Frame]:
    """The failing rank's frames for the OOM at lines[at], outermost first: the traceback that
    ends at it, else (the message printed first: THC, a logger) one that starts just after it."""
    frames = frames_before(lines, at, rank)
    if frames:
        return frames
    after = _own(lines[at + 1 : at + 1 + REACH], rank)
    for k in range(min(AFTER_REACH, len(after))):
        if _TRACEBACK_HEAD.search(after[k]):
            return _parse_frames(after, k + 1, stop=True)
    return []


def frames_before(lines: list[str], end: int, rank: int | None = None) -> list[Frame]:
    """The traceback that ends at lines[end] (the OOM message): its frames, outermost first.
    Lines of other ranks (a `[rankN]:` prefix that is not `rank`'s) are not part of it."""
    own = _own(lines[max(0, end - REACH) : end], rank)
    head = None
    for i in range(len(own) - 1, -1, -1):
        if _TRACEBACK_HEAD.search(own[i]):
            head = i
            break
    if head is None:
        # A paste or an elastic report without the head line: only the frames just before the
        # message, so an earlier, unrelated traceback is not read as this one.
        head = max(0, len(own) - HEADLESS_REACH)
    return _parse_frames(own, head)


# -- where: the frame table ------------------------------------------------------------------
# (phase, what is matched: "module" = the frame's file path, "func" = its function name, "code" =
# its code line; the pattern; why). Every entry is tested on real tracebacks
# (tests/data/phase/records.py).
WHERE = [
    (
        "checkpoint_save",
        "code",
        r"\btorch\.save\(|\bsave_checkpoint\(|\bsave_pretrained\(",
        "a save call",
    ),
    (
        "checkpoint_save",
        "func",
        r"(?i)save_?(?:ckpt|checkpoint|model|pretrained|state)|(?:ckpt|checkpoint)_?save|"
        r"consolidate_state_dict|dump_checkpoint|^_?save$|"
        r"^(?:state_dict|_save_to_state_dict|get_state_dict|full_state_dict)$",
        "a checkpoint writer (a state_dict gathered to be saved)",
    ),
    (
        "checkpoint_save",
        "module_func",
        r"(?i)checkpoint\w*\.py::_?save\w*$",
        "a checkpoint module's writer (ignite's Checkpoint._save_func)",
    ),
    ("checkpoint_load", "module", r"torch[/\\]serialization\.py$", "torch.load"),
    (
        "checkpoint_load",
        "code",
        r"\btorch\.load\(|\bload_checkpoint\(|\bfrom_pretrained\(",
        "a load call",
    ),
    (
        "checkpoint_load",
        "func",
        r"(?i)load_?(?:ckpt|checkpoint|from_checkpoint)|(?:ckpt|checkpoint)_?load|"
        r"^_load_optimizer_and_scheduler$|^_?load_state_dict\w*$|^resume\w*$|^_?restore\w*$|"
        r"^from_pretrained$|^load_model$",
        "a checkpoint loader",
    ),
    (
        "eval",
        "func",
        r"(?i)^_?(?:evaluat\w*|eval|eval_\w+|\w+_eval|\w+_evaluate|validat\w*|\w+_validation\w*|"
        r"valid_step|val_step|\w+_val_step|predict|prediction_\w+|predict_step|test_step|"
        r"run_evaluation|test|inference_step|\w+_inference)$",
        "an evaluation loop",
    ),
    (
        "eval",
        "code",
        r"\b(?:evaluate|validate|run_validation|eval_loop|evaluation_loop)\w*\(|"
        r"\btrainer\.(?:evaluate|predict|validate|test)\(",
        "an evaluation called",
    ),
    (
        "eval",
        "module",
        r"(?:^|[/\\])(?:evaluation_loop|eval|evaluate|evaluation|validate)\.py$",
        "an evaluation module",
    ),
    (
        "optimizer_step",
        "module",
        r"torch[/\\]optim[/\\]|apex[/\\]optimizers[/\\]|bitsandbytes[/\\]optim|"
        r"[/\\]amp[/\\]grad_scaler\.py$|accelerate[/\\]optimizer\.py$",
        "an optimizer",
    ),
    (
        "optimizer_step",
        "func",
        r"^(?:_?\w*optimizer_step|_maybe_opt_step|_?step_optimizer|_multi_tensor_\w+|"
        r"_single_tensor_\w+|_fused_\w+|_init_group|adamw?|sgd|_take_model_step)$",
        "an optimizer step",
    ),
    (
        "optimizer_step",
        "code",
        r"\b(?:optimizer|optim|opt)\w*(?:\[[^\]]{1,40}\])*\.step\(|\w*scaler\.step\(",
        "optimizer.step()",
    ),
    ("data", "module", r"torch[/\\]utils[/\\]data[/\\]", "the data loader"),
    (
        "data",
        "func",
        r"^(?:\w*collate\w*|pin_memory|_pin_memory_loop|__getitem__|__next__|_next_data)$",
        "data loading",
    ),
    ("backward", "module", r"torch[/\\]autograd[/\\]", "autograd"),
    ("backward", "func", r"^(?:backward|_backward\w*|run_backward)$", "a backward pass"),
    ("backward", "code", r"\.backward\(", "a .backward() call"),
    (
        "model_init",
        "code",
        r"\bmodel\w*\s*(?:=\s*\S.*)?\.(?:to|cuda)\(|\bmodule\.(?:to|cuda)\(\s*(?:self\.)?_?device\b",
        "the model moved to the GPU",
    ),
    (
        "model_init",
        "func",
        r"^(?:_apply|build_model|create_model|init_model|setup_model|(?:model|module)_to_device)$",
        "model set-up",
    ),
    (
        "forward",
        "module",
        # torch.nn.functional: a forward's ops and its loss (cross_entropy on a real H100)
        r"torch[/\\]nn[/\\](?:modules[/\\]|functional\.py$)",
        "a module's forward or a functional op",
    ),
    (
        "forward",
        "func",
        r"^(?:forward|_forward\w*|__call__|_call_impl|_wrapped_call_impl)$",
        "a forward pass",
    ),
]
# Which phase wins when frames name several: the outer loop (checkpointing, evaluation,
# optimizer) over the inner work (forward), backward over forward (recomputed activations).
PRIORITY = [
    "checkpoint_save",  # before load: torch.save's own frames are in torch/serialization.py too
    "checkpoint_load",
    "eval",
    "optimizer_step",
    "data",
    "backward",
    "model_init",
    "forward",
]
_WHERE = [(phase, what, lazy(pattern), why) for phase, what, pattern, why in WHERE]
# Loading an optimizer's or a scheduler's state, or anything named resume, is resuming a run.
_RESUME_FRAME = lazy(
    r"(?i)resum|^_?restore_checkpoint\b|optim\w*\.load_state_dict|sched\w*\.load_state_dict|_load_optimizer"
)
_RESTORE_FRAMES = lazy(r"^(?:default_restore_location|_cuda_deserialize|restore_location)$")
# An evaluation that keeps its outputs on the GPU across batches: HF Trainer's accumulators
# (nested_concat / torch_pad_and_concatenate of preds_host, EvalLoopContainer.add; a real H200,
# tests/data/gpu/hf_eval_accumulation.log), or a loop appending each batch's outputs to a list.
_KEPT_FRAME = lazy(r"^(?:nested_concat|torch_pad_and_concatenate)$")
_KEPT_CODE = lazy(
    r"\b(?:preds_host|labels_host|all_preds|all_logits|all_outputs|all_predictions|predictions)"
    r"\s*(?:=.*\b(?:nested_concat|torch\.cat)\(|\.(?:add|append|extend)\()"
)
_OFF_THE_GPU = lazy(r"\.(?:cpu|item|tolist|numpy)\(|\.to\(\s*['\"]cpu")  # kept, but not there


# A model's forward (or its loss) calling its own predict(): ultralytics' DetectionModel.forward ->
# loss -> forward -> predict -> _predict_once in every training step (tests/data/zoo).
_MODEL_CALL = lazy(r"^(?:forward|_forward\w*|loss|compute_loss)$")


def _frame_value(frame: Frame, what: str) -> str:
    func = frame.func.split(".")[-1]
    if what == "module_func":
        return f"{frame.file}::{func}"
    return frame.file if what == "module" else func if what == "func" else frame.code


# An evaluation by the words of a function's name, whatever the framework joins them with:
# fastai's _do_epoch_validate, tabnet's _predict_epoch, runValidationEpoch, eval_one_epoch. A
# name that checks its arguments or a shape (validate_args, _validate_config) is no evaluation.
_EVAL_WORDS = {"validate", "validation", "valid", "val", "evaluate", "evaluation", "eval"}
_EVAL_WORDS |= {"predict", "prediction", "inference", "test", "testing"}
_CHECK_WORDS = {"args", "arguments", "config", "cfg", "input", "inputs", "shape", "shapes"}
_CHECK_WORDS |= {"params", "dtype", "device", "options", "kwargs", "path", "schema", "sanity"}
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _parts(func: str) -> set[str]:
    return {w.lower() for w in _NAME_PARTS.findall(func.split(".")[-1])}


def _evaluation_named(func: str) -> bool:
    return bool(_parts(func) & _EVAL_WORDS) and not _checks(func)


def _checks(func: str) -> bool:
    return bool(_parts(func) & _CHECK_WORDS)


# A framework that cut its own frames out of the traceback before printing it (Keras 3's
# traceback_utils re-raises `e.with_traceback(filtered_tb)`; "frames hidden" notes): what is left
# does not say which loop the failing op ran in.
_FILTERED = lazy(r"filtered_tb|with_traceback\(\s*\w*filter|\bframes? (?:hidden|filtered)\b")


def filtered(frames: list[Frame]) -> str | None:
    """The frame that says the traceback was cut by its framework, as text."""
    for f in frames:
        if _FILTERED.search(f.code) or _FILTERED.search(f.func):
            return f.text()
    return None


# Keras says, under its message, the mode the layer that raised was called in: "Arguments received
# by Dense.call():" (Keras 3) or "Call arguments received by layer 'dense' (type Dense):"
# (tf.keras), then a "• name=value" line per argument (tests/data/zoo's keras logs). A layer's
# call is its forward; `training=False` is a call in inference mode, which fit runs only for its
# validation and evaluate/predict always: the model's own word that no training step ran it.
_CALL_ARGS = lazy(r"^\s*(?:Call\s+)?arguments\s+received\s+by\b", re.IGNORECASE, needs="received")
_TRAINING_ARG = lazy(r"^\s*[•*-]\s*training\s*=\s*(True|False)\s*$", needs="training")
CALL_ARGS_REACH = 12  # the message's own lines, then one line per argument


def call_mode(lines: list[str], at: int, rank: int | None = None) -> tuple[bool, str] | None:
    """Whether the layer call that raised the OOM at lines[at] ran in training mode, and the
    lines that say so (None: the log does not say)."""
    own = _own(lines[at : at + CALL_ARGS_REACH], rank)
    for i, text in enumerate(own):
        if _CALL_ARGS.match(text):
            for arg in own[i + 1 :]:
                if m := _TRAINING_ARG.match(arg):
                    return m.group(1) == "True", f"{text} {arg.lstrip('•*- ')}"
            return None
    return None


_FORWARD_CALL = lazy(r"^(?:forward|_call_impl|_wrapped_call_impl|__call__)$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _eval_caller(frames: list[Frame]) -> Frame | None:
    """The frame that calls the model, where its code names what it evaluates: an evaluation
    written inline in a loop ("val_outputs = model(val_images)", "logits = model(**eval_batch)")
    has no function of its own to name it."""
    for i, f in enumerate(frames):
        if i and _FORWARD_CALL.match(f.func.split(".")[-1]):
            code = frames[i - 1].code
            words = {w.lower() for n in _IDENTIFIER.findall(code) for w in _NAME_PARTS.findall(n)}
            return frames[i - 1] if words & _EVAL_WORDS else None
    return None


def where_from_frames(frames: list[Frame]) -> tuple[str, list[str]]:
    """The phase the traceback names, and the frames that name it."""
    named: dict[str, list[Frame]] = {}
    deepest: dict[str, int] = {}
    for i, frame in enumerate(frames):
        for phase, what, pattern, _why in _WHERE:
            value = _frame_value(frame, what)
            hit = bool(value and pattern.search(value))
            if phase == "eval" and what == "func":
                hit = (hit or _evaluation_named(frame.func)) and not _checks(frame.func)
                if any(_MODEL_CALL.match(f.func.split(".")[-1]) for f in frames[:i]):
                    continue  # a model's own predict(), under its forward: not an evaluation
            if hit:
                named.setdefault(phase, []).append(frame)
                deepest[phase] = i
                break
    if "eval" not in named and (caller := _eval_caller(frames)) is not None:
        named["eval"] = [caller]
    # optimizer.step(closure) runs the step's forward and backward inside itself (Lightning's
    # automatic optimization, LBFGS): a forward or backward frame deeper than the optimizer's
    # last one is where the memory was asked for (a real H100, tests/data/gpu/lightning_stats.log).
    if "optimizer_step" in named and any(
        deepest.get(inner, -1) > deepest["optimizer_step"] for inner in ("backward", "forward")
    ):
        del named["optimizer_step"]
    for phase in PRIORITY:
        if phase in named:
            return phase, [f.text() for f in named[phase][-2:]]
    return "unknown", []


# -- stage markers and progress, from the log's own lines --------------------------------------
_EVAL_MARKER = lazy(
    r"\*{3,}\s*Running (?:Evaluation|Prediction)|\bRunning (?:validation|evaluation)\b|"
    r"^\s*(?:Evaluating|Validating|Validation|Testing)\b|Validation DataLoader|"
    r"[.:!]\s+(?:Evaluating|Validating)\b|"
    r"\((?:valid|val|eval)\)|"
    # "val: ..." unless it is the validation set being read at start-up (ultralytics' "val:
    # Scanning .../labels/val... 8 images", "val: Fast image access", "val: New cache created").
    r"^\s*(?:eval|valid|val)\s*[:|(](?!\s*(?:Scanning|Fast image access|New cache|Cach|"
    r"\S+\.\.\. found\b))|"
    # YOLO's validation table (ultralytics, YOLOv5/v7): "Class  Images  Instances  Box(P ..."
    r"^\s*Class\s+Images\s+(?:Instances|Labels|Targets)\b|^\s*classes\s+top1_acc\b|"
    # mmcv's ProgressBar, which mmdetection's and mmsegmentation's tests draw over the evaluation
    # set: "[>>>>>>>      ] 63/399, 0.2 task/s, elapsed: 277s, ETA:  1479s"
    r"^\s*\[[>\s]*\]\s*\d+/\d+,\s*[\d.]+\s*task/s",
    re.IGNORECASE,
)
_MARKERS = [
    ("eval", _EVAL_MARKER),
    (
        "checkpoint_load",
        lazy(
            r"\b(?:Loading|Restoring)\b.{0,40}\bcheckpoint\b(?!\s*shards)|\bResuming\b|"
            r"Continuing training from checkpoint",
            re.IGNORECASE,
        ),
    ),
    ("checkpoint_save", lazy(r"\bSaving\b.{0,40}\b(?:checkpoint|model)\b", re.IGNORECASE)),
]
# A line that reports a stage done: "Saved ...", an evaluation's results ("Validation Results -
# Epoch: 1  Avg accuracy: 0.29", ignite's examples) name no stage in progress.
_MARKER_DONE = lazy(
    r"\b(?:Done saving|Saved|Loaded|finished saving)\b|"
    r"\b(?:Validation|Evaluation|Test|Eval)\s+Results?\b",
    re.IGNORECASE,
)
# An evaluation's results: it ended (HF Trainer's {'eval_loss': ...}, "val_loss: 0.41").
_EVAL_RESULT = lazy(
    r"(?i)\b(?:eval|val|valid|validation|test)[_/ ]loss\b['\"]?\s*[:=]|"
    r"\b(?:Validation|Evaluation|Test|Eval)\s+Results?\b|"
    r"^\s*all(?:\s+[\d.]+){2,8}\s*$"  # YOLO's validation result: its "all" row
)
# A training loop's own function in the traceback: a forward under it is the training's.
_TRAIN_FRAME = lazy(r"(?i)train|^_?fit\w*$|\w+_fit$")
# The set-up before a training loop's first step: a framework building its engine, its
# optimizer's state or the model (deepspeed.initialize, HF's deepspeed_init, accelerate's
# prepare, Megatron's setup_model_and_optimizer). An OOM under one came before any step.
_SETUP_FRAME = lazy(
    r"^(?:initialize|deepspeed_init|_prepare_deepspeed|_prepare_fsdp|_configure_(?:zero_)?optimizer|"
    r"initialize_optimizer_states|setup_model_and_optimizer|_setup_model_and_optimizers?|"
    r"build_model|create_model|setup_model|init_model|_?setup_train(?:ing|er)?)$"
)
# An optimizer making its state (Adam's exp_avg, SGD's momentum_buffer): torch's optimizers do it
# once, at their first step in the process (a resumed run loads it instead). Seen on timm,
# mmengine and ignite runs in the zoo (tests/data/zoo), and on apex's FusedAdam (phase-017).
_STATE_MADE = lazy(
    r"\bstate\[\s*['\"]\w+['\"]\s*\]\s*=\s*torch\.(?:zeros|zeros_like|full_like|clone|empty_like)\(",
    needs="state",
)
# A resumed run says so before its first new step. Loading a model's weight shards at start-up
# ("Loading checkpoint shards") is not a resume.
_RESUME = lazy(
    r"\bResum(?:ing|ed)\b(?!\s+download)|Continuing training from checkpoint|"
    r"Restoring states from the checkpoint|\b(?:Loading|Loaded)\b.{0,40}\bcheckpoint\b(?!\s*shards)",
    re.IGNORECASE,
)
# A training loop that started: HF Trainer's banner, Lightning's and tqdm's first epoch.
_TRAIN_START = lazy(
    r"\*{3,}\s*Running training\s*\*{3,}|\bStart(?:ing|ed)? training\b|\bTraining started\b|"
    r"^\s*Epoch\s*0\s*[:/|]",
    re.IGNORECASE,
)
# The training's own announcement that its loop begins: whatever counted before it (workers,
# loaders, an index, compiled layers) was the set-up, never a step (issue 55).
_TRAIN_BEGINS = lazy(
    r"\*{3,}\s*Running training\s*\*{3,}|\bStart(?:ing|ed)? training\b|\bTraining started\b",
    re.IGNORECASE,
)


@record
class _Walk:
    """What the lines before the OOM showed, read once in order."""

    steps: bool = False
    step: int | None = None
    started: bool = False
    resume: str | None = None
    marker: tuple[str, str] | None = None
    eval_pending: bool = False
    earlier_eval: bool = False  # an evaluation ran between training steps before this one
    counted_only: bool = False  # the steps so far are a plain count's, no known shape's


def _walk(lines: list[str], end: int, pattern: re.Pattern) -> _Walk:
    w = _Walk()
    # Every rank's lines count: progress is the job's (often only rank 0 prints it), and so
    # are its stage markers.
    start = max(0, end - REACH * 4)
    stripped = [_stripped(lines[i]) for i in range(start, end)]
    texts = [t for t, _ in stripped]
    plain = progress.rising_counts(texts, [r for _, r in stripped])
    rows = progress.table_rows(texts, [r for _, r in stripped])
    for k, text in enumerate(texts):
        if k and _PY_FRAME.match(texts[k - 1].strip()):
            continue  # a frame's code line ("loss = 0.5 * loss") reports nothing
        done, n = progress.known_progress(text, pattern)
        if done and n is None and k in plain:
            n = plain[k]  # a loss's line of a loop's own shape: its count is the step
        if done is None and k in rows and k not in plain:
            # A row under a training loss's column: steps ran. Its count is often the epoch's,
            # not a step's (skorch's, fastprogress's tables): no step number from it.
            done, n = True, None
        if done is None and k in plain:
            done, n = True, plain[k]
            w.counted_only = w.counted_only or not w.steps
        elif done is not None:
            if done is False and w.counted_only:
                # A loop that starts (0/N) after lines that only counted: they counted its
                # set-up, not its steps (told apart by what follows them, issue 64).
                w.steps, w.step = False, None
            w.counted_only = False
        if done is not None:
            w.started = True
            if done:
                w.steps, w.marker = True, None
                w.step = n if n is not None else w.step
                w.earlier_eval = w.earlier_eval or w.eval_pending
                w.eval_pending = False
            continue
        if _RESUME.search(text):
            # Lines before a resume are the run before it (an appended log).
            w = _Walk(resume=text.strip()[:200])
        if w.marker is not None and w.marker[0] == "eval" and _EVAL_RESULT.search(text):
            w.marker = None
        if _TRAIN_START.search(text):
            w.started = True
            if _TRAIN_BEGINS.search(text):
                w.steps, w.step = False, None
        for kind, rx in _MARKERS:
            if rx.search(text) and not _MARKER_DONE.search(text):
                w.marker = (kind, text.strip()[:200])
                w.eval_pending = w.eval_pending or kind == "eval"
                break
    return w


def phase_of(
    lines: list[str],
    oom_line: int,
    rank: int | None = None,
    step_pattern: str = progress.DEFAULT_STEP_PATTERN,
) -> Phase:
    """Where and when the OOM at lines[oom_line] happened (the lines of one log, in order)."""
    frames = traceback_frames(lines, oom_line, rank)
    where, evidence = where_from_frames(frames)
    if cut := filtered(frames):
        # What is left of a filtered traceback is an op (a linear, a matmul) that a training
        # step and an evaluation both run: no reading of where.
        where, evidence = (
            "unknown",
            [f"{UNREAD_WHERE}: the framework filtered the traceback ({cut})"],
        )
    if where in ("unknown", "forward") and (mode := call_mode(lines, oom_line, rank)):
        # The layer's call is the forward; its mode says whose: a filtered traceback's op is
        # read, and a forward in inference mode is the evaluation's.
        training, said = mode
        where, evidence = ("forward" if training else "eval"), [said]
        cut = None
    p = Phase(where=where, frames=frames, evidence=evidence)
    p.restored_to_saved_device = any(_RESTORE_FRAMES.match(f.func) for f in frames)
    p.kept_predictions = [
        f.text()
        for f in frames
        if _KEPT_FRAME.match(f.func)
        or (_KEPT_CODE.search(f.code) and not _OFF_THE_GPU.search(f.code))
    ][:2]
    w = _walk(lines, oom_line, re.compile(step_pattern))
    p.step = w.step
    if w.marker is not None and (p.where == "unknown" or _eval_forward(p.where, w, frames)):
        p.where = w.marker[0]
        p.evidence.append(w.marker[1])
    p.when = _when(p.where, w, frames)
    if w.resume:
        p.evidence.append(w.resume)
    if p.where == "unknown" and not cut:
        p.evidence.insert(0, f"{UNREAD_WHERE}: {_no_where(frames)}")
    if p.when == "unknown":
        p.evidence.insert(
            0, f"{UNREAD_WHEN}: no line before the OOM shows a training step, its start or a resume"
        )
    p.evidence = p.evidence[:MAX_EVIDENCE]
    return p


UNREAD_WHERE = "where unknown"
UNREAD_WHEN = "when unknown"


def with_steps_from_program(p: Phase, said: str) -> Phase:
    """`p`, whose log showed no step, where the job's program says a training step completed
    before the failing line (jobfiles.program_order): an evaluation then is the one training
    called (`eval_start`, as a training loop's frame above it says), anything else `mid_run`."""
    if p.when != "unknown":
        return p
    evidence = [e for e in p.evidence if not e.startswith(f"{UNREAD_WHEN}: ")]
    when = "eval_start" if p.where == "eval" else "mid_run"
    return dataclasses.replace(p, when=when, evidence=[*evidence, said][:MAX_EVIDENCE])


def _no_where(frames: list[Frame]) -> str:
    if not frames:
        return "no traceback of the failing rank before the OOM"
    return f"no frame of its traceback ({len(frames)}) names a phase of training"


def _eval_forward(where: str, w: _Walk, frames: list[Frame]) -> bool:
    """A forward pass after the log announced an evaluation (no training step and no eval
    result since), under no training loop's frame: the evaluation's forward. The frame table
    names the evaluation only where the loop's function has an evaluation's name; a loop named
    otherwise (a real H100: HF's "***** Running Evaluation *****" banner, then the OOM in
    cross_entropy under a function of the script's own) is named by the banner."""
    return (
        where == "forward"
        and w.marker is not None
        and w.marker[0] == "eval"
        and not any(_TRAIN_FRAME.search(f.func) for f in frames)
    )


# A frame that runs an evaluation before training's first step (Lightning's sanity check).
_SANITY_FRAME = lazy(r"(?i)sanity")


def _when(where: str, w: _Walk, frames: list[Frame]) -> str:
    if w.resume and not w.steps:
        return "after_resume"
    if where == "checkpoint_load" and (
        (not w.steps and frames and frames[0].func == "<module>")
        or any(_RESUME_FRAME.search(f.func + " " + f.code) for f in frames)
    ):
        # A checkpoint loaded before this run's first step, in a traceback whole from the
        # program's entry, is the run resuming (or warm starting) from it, whatever its log
        # said about it. A paste's tail (no entry) does not say what the program was doing.
        return "after_resume"
    if any(_SETUP_FRAME.match(f.func) for f in frames):
        return "first_step"  # inside the set-up: whatever the log printed before was not this run's
    if any(_STATE_MADE.search(f.code) for f in frames):
        return "first_step"  # the optimizer makes its state once, at its first step
    if w.steps:
        return "eval_start" if where == "eval" and not w.earlier_eval else "mid_run"
    if where == "eval" and _under_training(frames):
        return "eval_start"  # an evaluation the training loop called: its steps ran first
    if w.started or where == "model_init":
        return "first_step"
    return "unknown"


def _under_training(frames: list[Frame]) -> bool:
    """The evaluation's frames run under a training loop's (fit, train, _inner_training_loop),
    and no sanity check's: the loop evaluates after its steps (an epoch's, an interval's)."""
    first_eval = next((i for i, f in enumerate(frames) if _evaluation_named(f.func)), len(frames))
    outer = frames[:first_eval]
    return any(_TRAIN_FRAME.search(f.func.split(".")[-1]) for f in outer) and not any(
        _SANITY_FRAME.search(f.func) for f in frames
    )
