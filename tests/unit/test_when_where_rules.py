"""When and where by rules that hold whatever the framework (issue 64): each rule on a log written
here in the shape of a program or framework runbook has no reader for (the shapes are made up
for the rule, not copied from any framework's output). The zoo's unseen set (tests/data/zoo,
recorded before these rules) is their measure; these are the rules one by one."""

from __future__ import annotations

import pytest

from runbook.evidence import phase, progress
from runbook.evidence.oom_message import log_lines, parse_all

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.10 GiB is free."
)


def _tb(*frames: tuple[str, str, str], filtered: bool = False) -> list[str]:
    out = ["Traceback (most recent call last):"]
    for path, func, code in frames:
        out += [f'  File "{path}", line 10, in {func}', f"    {code}"]
    return [*out, OOM]


ENTRY = ("/home/u/train.py", "<module>", "main()")
FORWARD = (
    "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py",
    "forward",
    "return F.linear(input, self.weight, self.bias)",
)
CALL = (
    "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py",
    "_call_impl",
    "return forward_call(*args, **kwargs)",
)


def _phase(lines: list[str]) -> phase.Phase:
    text = "\n".join(lines)
    msg = parse_all(text)[0]
    return phase.phase_of(log_lines(text), msg.line, msg.rank)


@pytest.mark.parametrize(
    "line",
    [
        "ep 3 | trn loss: 0.51223 | lr 1.0e-04",
        "[epoch 2] step 40 train_loss=0.4871 grad_norm=1.02",
        "Round 4, Loss: 1.0370, Acc: 0.51",
        " 7/90 [====>.....] - ETA: 2s - loss: 1.3420 - acc: 0.4000",
        "epoch 1 mean loss 0.6931",
    ],
)
def test_a_line_with_a_training_loss_figure_is_a_step_whatever_its_shape(line):
    assert progress.training_loss(line)
    p = _phase(
        ["starting", line, *_tb(ENTRY, ("/home/u/train.py", "main", "out = net(x)"), CALL, FORWARD)]
    )
    assert (p.where, p.when) == ("forward", "mid_run")


@pytest.mark.parametrize(
    "line",
    [
        "Validation loss: 0.4100",
        "dev_loss=0.52",
        "{'eval_loss': 0.61, 'eval_runtime': 3.2}",
        "held-out loss 0.77",
        "loss scale: 65536.0",
        "loss_fn: CrossEntropyLoss",
    ],
)
def test_an_evaluations_or_a_scalers_loss_is_no_training_step(line):
    assert not progress.training_loss(line)


def test_a_frames_code_line_is_no_progress_even_with_a_loss_figure():
    tb = _tb(ENTRY, ("/home/u/train.py", "main", "loss = 0.5 * aux_loss + main"), CALL, FORWARD)
    p = _phase(["job starts", *tb])
    assert p.when == "unknown" and p.evidence[0].startswith("when unknown: ")


def test_a_tables_rows_under_its_header_are_steps():
    rows = ["  ep   trn_loss   dev_loss   secs", "----  ---------  ---------  -----"]
    rows += [f"  {i}     0.{70 - i}12     0.{71 - i}05   1.2" for i in range(1, 5)]
    assert sorted(progress.rising_counts(rows).values()) == [1, 2, 3, 4]
    p = _phase([*rows, *_tb(ENTRY, ("/home/u/train.py", "main", "out = net(x)"), CALL, FORWARD)])
    assert (p.where, p.when, p.step) == ("forward", "mid_run", 4)


def test_figures_without_a_header_are_no_table():
    rows = [f"  {i}     0.{70 - i}12     0.{71 - i}05" for i in range(1, 5)]
    assert progress.rising_counts(rows) == {}


@pytest.mark.parametrize(
    "func", ["runValidationEpoch", "_do_epoch_validate", "eval_one_epoch", "_predict_epoch"]
)
def test_an_evaluation_is_named_by_the_words_of_its_function(func):
    frames = [
        ENTRY,
        ("/home/u/loop.py", "fit", "self.one_epoch()"),
        ("/home/u/loop.py", func, "y = self.net(x)"),
        CALL,
        FORWARD,
    ]
    p = _phase(["Train loss: 0.91", *_tb(*frames)])
    assert (p.where, p.when) == ("eval", "eval_start")


@pytest.mark.parametrize("func", ["validate_args", "_validate_config", "check_input_shapes"])
def test_a_function_that_checks_its_arguments_is_no_evaluation(func):
    frames = [ENTRY, ("/home/u/loop.py", func, "y = self.net(x)"), CALL, FORWARD]
    assert _phase(["Train loss: 0.91", *_tb(*frames)]).where == "forward"


def test_an_evaluation_written_inline_is_named_by_what_the_model_is_called_on():
    frames = [ENTRY, ("/home/u/train.py", "main", "logits = model(**eval_batch)"), CALL, FORWARD]
    p = _phase(["Train loss: 0.91", *_tb(*frames)])
    assert (p.where, p.when) == ("eval", "eval_start")
    train = [ENTRY, ("/home/u/train.py", "main", "logits = model(**batch)"), CALL, FORWARD]
    assert _phase(["Train loss: 0.91", *_tb(*train)]).where == "forward"


def test_a_models_own_predict_under_its_forward_is_no_evaluation():
    frames = [
        ENTRY,
        ("/home/u/train.py", "main", "loss = model(x)"),
        CALL,
        ("/home/u/net.py", "forward", "return self._predict_once(x)"),
        ("/home/u/net.py", "_predict_once", "x = self.head(x)"),
        CALL,
        FORWARD,
    ]
    assert _phase(["Train loss: 0.91", *_tb(*frames)]).where == "forward"


def test_an_evaluation_the_training_loop_called_ran_after_its_steps():
    """No line says a step ran, but the evaluation runs under fit: the loop evaluates after its
    steps. Under a sanity check (before any step) it says nothing of when."""
    fit = ("/opt/venv/lib/python3.11/site-packages/lib/trainer.py", "fit", "self.evaluate(val)")
    ev = (
        "/opt/venv/lib/python3.11/site-packages/lib/trainer.py",
        "evaluate",
        "out = self.model(x)",
    )
    assert _phase(["Train on 80 samples", *_tb(ENTRY, fit, ev, CALL, FORWARD)]).when == "eval_start"
    sanity = (
        "/opt/venv/lib/python3.11/site-packages/lib/trainer.py",
        "_run_sanity_check",
        "self.evaluate(val)",
    )
    p = _phase(["Train on 80 samples", *_tb(ENTRY, fit, sanity, ev, CALL, FORWARD)])
    assert (p.where, p.when) == ("eval", "unknown")


def test_a_traceback_the_framework_filtered_says_where_is_unknown_and_why():
    """What is left of a filtered traceback (an op that training and evaluation both run) is no
    reading of where; the progress before it still says when."""
    cut = (
        "/opt/venv/lib/python3.11/site-packages/kit/utils/traceback_utils.py",
        "error_handler",
        "raise e.with_traceback(filtered_tb) from None",
    )
    fn = (
        "/opt/venv/lib/python3.11/site-packages/torch/nn/functional.py",
        "linear",
        "return torch._C._nn.linear(input, weight, bias)",
    )
    lines = [
        "Epoch 1/5",
        " 9/50 [===>...] - loss: 1.3763",
        *_tb(("/home/u/train.py", "<module>", "model.fit(x, y)"), cut, fn),
    ]
    p = _phase(lines)
    assert (p.where, p.when) == ("unknown", "mid_run")
    assert p.evidence[0].startswith("where unknown: the framework filtered the traceback")


@pytest.mark.parametrize(
    "header",
    [
        "Arguments received by Dense.call():",
        "Call arguments received by layer 'head' (type Dense):",
    ],
    ids=["keras3", "tf.keras"],
)
@pytest.mark.parametrize("prefix", ["", "[rank1]:", "1: "], ids=["plain", "torchrun", "srun-l"])
def test_a_layer_call_in_inference_mode_is_an_evaluation_even_in_a_filtered_traceback(
    header, prefix
):
    """A framework that filters its traceback may still say, under its message, the mode the
    layer that raised was called in: training=False is inference (an evaluation or a
    prediction), training=True a training step's forward. The shapes are written here."""
    cut = (
        "/opt/venv/lib/python3.11/site-packages/kit/utils/traceback_utils.py",
        "error_handler",
        "raise e.with_traceback(filtered_tb) from None",
    )
    tb = _tb(("/home/u/train.py", "<module>", "model.fit(x, y, validation_data=v)"), cut, FORWARD)
    for mode, want in (("False", ("eval", "eval_start")), ("True", ("forward", "mid_run"))):
        lines = [
            "Epoch 1/5",
            " 9/50 [===>...] - loss: 1.3763",
            *tb,
            "",
            header,
            "  • inputs=torch.Tensor(shape=torch.Size([4, 16]), dtype=float32)",
            "  • mask=None",
            f"  • training={mode}",
        ]
        p = _phase([prefix + ln for ln in lines])
        assert (p.where, p.when) == want, mode
        assert p.evidence == [f"{header} training={mode}"]
    # An argument list that does not say the mode (training=None, or none at all): unread.
    for last in ("  • training=None", "  • inputs=x"):
        p = _phase(["Epoch 1/5", " 9/50 [===>...] - loss: 1.3", *tb, header, last])
        assert p.where == "unknown", last


def test_a_checkpoint_loaded_before_any_step_is_a_resume_only_in_a_whole_traceback():
    load = (
        "/opt/venv/lib/python3.11/site-packages/torch/serialization.py",
        "load",
        "return _load(f)",
    )
    whole = [ENTRY[0], "<module>", 'state = torch.load("last.pth")']
    p = _phase(["setting up", *_tb(tuple(whole), load)])
    assert (p.where, p.when) == ("checkpoint_load", "after_resume")
    tail = ["    return _load(f)", *_tb(load)[1:]]  # a paste's tail: no entry, no head
    p = _phase(tail)
    assert (p.where, p.when) == ("checkpoint_load", "unknown")


def test_counts_that_a_starting_loop_follows_were_its_set_up():
    """Lines that only counted (a cache warmed, files indexed) followed by a loop's 0/N start:
    they counted the set-up, so the OOM is at the first step, not mid-run."""
    warm = [f"cache block {i} of 8 ready" for i in range(1, 6)]
    bar = "Epoch 0:   0%|          | 0/400 [00:00<?, ?it/s]"
    tb = _tb(ENTRY, ("/home/u/train.py", "main", "out = net(x)"), CALL, FORWARD)
    assert _phase([*warm, *tb]).when == "mid_run"  # nothing says they were not steps
    assert _phase([*warm, bar, *tb]).when == "first_step"
