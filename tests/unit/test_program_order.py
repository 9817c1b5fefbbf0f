"""What a job's own program says of its order (jobfiles.program_order): whether a training step
had completed when a traceback's frame was reached. Programs in the shapes people write, none of
them a framework's loop the zoo reads: data in, data out."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from runbook.jobfiles.program_order import placed, trained_before

REPO = Path(__file__).resolve().parents[2]

LOOP = """
def train(loader):
    model.train()
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return float(loss)

@torch.no_grad()
def evaluate(loader):
    model.eval()
    return sum(model(x).sum() for x, _ in loader)

for epoch in range(10):
    loss = train(train_loader)
    acc = evaluate(val_loader)
    torch.save(model.state_dict(), "last.pt")
"""

INLINE = """
for step, (x, y) in enumerate(loader):
    out = model(x)
    loss = crit(out, y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 100 == 0:
        evaluate(model, val_loader)
"""

METHODS = """
class Runner:
    def fit(self):
        for epoch in range(self.epochs):
            self.train_epoch()
            self.validate()

    def train_epoch(self):
        for batch in self.loader:
            self.engine.backward(self.engine(batch))
            self.engine.step()

    def validate(self):
        return self.model(self.val)
"""


def _line(program: str, text: str) -> int:
    lines = program.splitlines()
    return next(i + 1 for i, x in enumerate(lines) if x.strip().startswith(text))


def _said(program: str, text: str) -> str | None:
    return trained_before(ast.parse(program), _line(program, text), "train.py")


def test_a_call_after_the_loops_own_training_function_has_a_step_behind_it():
    said = _said(LOOP, "acc = evaluate(")
    assert said is not None
    assert "train.py:17 `loss = train(train_loader)`" in said
    assert "optimizer.step()" in said and "(train.py:7)" in said
    assert said.endswith("(read from the program, not from its log)")
    assert _said(LOOP, "torch.save(") is not None


def test_the_first_call_of_a_loop_and_a_training_functions_own_lines_say_nothing():
    # The first iteration's train() reaches its forward before any step of its own.
    assert _said(LOOP, "loss = train(train_loader)") is None
    assert _said(LOOP, "loss = F.cross_entropy") is None
    # The evaluation's own lines: nothing in evaluate() ran a step.
    assert _said(LOOP, "return sum(model(x)") is None


def test_an_optimizer_step_is_a_step_and_a_backward_alone_is_not():
    # The first step's optimizer.step() runs after its backward: it is still the first step.
    assert _said(INLINE, "opt.step()") is None
    assert _said(INLINE, "out = model(x)") is None
    said = _said(INLINE, "evaluate(model, val_loader)")
    assert said is not None and "train.py:6 `opt.step()`" in said


def test_an_objects_own_methods_and_a_deepspeed_engine_are_followed():
    said = _said(METHODS, "self.validate()")
    assert said is not None and "self.engine.step()" in said
    assert _said(METHODS, "self.train_epoch()") is None


@pytest.mark.parametrize(
    "program",
    [
        # A branch before the line may not have run.
        "if resume:\n    train()\nevaluate()\n",
        # A loop before the line may have run no time.
        "for _ in range(n):\n    train()\nevaluate()\n",
        # The model's train() is not the file's train().
        "model.train()\nevaluate()\n",
        # A library's loop: its body is not the job's file.
        "trainer.fit(model)\ntrainer.test(model)\n",
        # A scheduler's step ends no training step.
        "scheduler.step()\nevaluate()\n",
    ],
    ids=["branch", "loop-before", "model-train", "library-fit", "scheduler"],
)
def test_what_may_not_have_run_or_is_not_the_jobs_says_nothing(program):
    defs = "def train():\n    loss.backward()\n    optimizer.step()\n\n"
    text = defs + program
    last = text.strip().splitlines()[-1]
    assert trained_before(ast.parse(text), _line(text, last), "train.py") is None


def test_a_frame_is_placed_by_its_code_line_when_the_file_changed_since_the_run():
    text = "a = 1\nb = 2\nacc = evaluate(val)\n"
    assert placed(text, 3, "acc = evaluate(val)") == 3
    # Two lines added above it since the run: the frame's printed code finds it.
    assert placed("# one\n# two\n" + text, 3, "acc = evaluate(val)") == 5
    # Its code is gone, or on two lines: no reading.
    assert placed(text, 3, "acc = test(val)") is None
    assert placed(text + "acc = evaluate(val)\n", 9, "acc = evaluate(val)") is None
    # A frame printed without its code is taken at its line, where the file has one.
    assert placed(text, 2, "") == 2 and placed(text, 40, "") is None


def _diagnose(*args: str) -> dict:
    r = CliRunner().invoke(cli, ["diagnose", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["phase"]


def test_diagnose_reads_when_from_the_program_a_silent_log_ran(tmp_path):
    """A recorded PyG run (tests/data/zoo) that ran out in its test() before its epoch's line:
    the log alone says when unknown; with the program it ran (bench/zoo/run_pyg.py, since
    edited: its lines moved) the loop's train() stepped the optimizer first."""
    log = str(REPO / "tests/data/zoo/pyg-eval.log")
    alone = _diagnose("--log", log)
    assert (alone["where"], alone["when"]) == ("eval", "unknown")
    program = tmp_path / "run_pyg.py"
    program.write_text((REPO / "bench/zoo/run_pyg.py").read_text())
    read = _diagnose("--log", log, "--source", str(program))
    assert (read["where"], read["when"]) == ("eval", "eval_start")
    assert not any(e.startswith("when unknown") for e in read["evidence"])
    said = next(e for e in read["evidence"] if "read from the program" in e)
    assert "run_pyg.py:" in said and "`loss = train()`" in said and "optimizer.step()" in said
    # A program whose loop has no step before the failing line says nothing.
    program.write_text(textwrap.dedent(program.read_text()).replace("optimizer.step()", "pass"))
    again = _diagnose("--log", log, "--source", str(program))
    assert again["when"] == "unknown"
