"""Issue 64, item 3: an evaluation OOM never halves the training batch unless the evaluation's
batch is that same option, read from the program (its evaluation loader's `batch_size=`), and
the plan says which batch it changed. Programs written here in the shapes of plain PyTorch
scripts (a train and a val DataLoader from one argparse option) and of a Lightning DataModule."""

from __future__ import annotations

import ast

import pytest

from runbook import cause
from runbook.jobfiles.program import _dests, code_roles, eval_loader_roles, program_options
from runbook.planning import ladder
from runbook.playbook import load
from runbook.site import SiteConfig

KNOBS = SiteConfig().knobs
PLAYBOOK = load()

HEAD = """import argparse
from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=32)
p.add_argument("--accum-steps", type=int, default=1, help="gradient accumulation steps")
p.add_argument("--eval-batch", type=int, default=64)
args = p.parse_args()
"""


def _roles(body: str) -> list[tuple[str, str, str]]:
    tree = ast.parse(HEAD + body)
    options = _dests(tree)
    got = code_roles(tree, "run.py", options) + eval_loader_roles(tree, "run.py", options)
    return sorted((r.kind, r.flags[-1], r.where) for r in got)


@pytest.mark.parametrize(
    "body, want",
    [
        # one option for both loaders: the training's micro-batch and the evaluation's batch
        (
            "train_loader = DataLoader(train_set, batch_size=args.batch_size)\n"
            "val_loader = DataLoader(val_set, batch_size=args.batch_size)\n",
            [
                ("eval_batch", "--batch-size", "run.py:10"),
                ("micro_batch", "--batch-size", "run.py:9"),
            ],
        ),
        # named by its dataset only; the evaluation's batch twice the option's still follows it
        (
            "loader = DataLoader(ds, batch_size=args.batch_size)\n"
            "evaluator = DataLoader(test_ds, batch_size=args.batch_size * 2)\n",
            [
                ("eval_batch", "--batch-size", "run.py:10"),
                ("micro_batch", "--batch-size", "run.py:9"),
            ],
        ),
        # its own option: the evaluation's loader is never the micro-batch
        (
            "train_dl = DataLoader(train_set, batch_size=args.batch_size)\n"
            "valid_dl = DataLoader(valid_set, batch_size=args.eval_batch)\n",
            [
                ("eval_batch", "--eval-batch", "run.py:10"),
                ("micro_batch", "--batch-size", "run.py:9"),
            ],
        ),
        # a Lightning DataModule: the function that builds it says which loader it is
        (
            "class DM:\n"
            "    def train_dataloader(self):\n"
            "        return DataLoader(self.ds, batch_size=self.hparams.batch_size)\n"
            "    def val_dataloader(self):\n"
            "        return DataLoader(self.ds, batch_size=self.hparams.batch_size)\n",
            [
                ("eval_batch", "--batch-size", "run.py:13"),
                ("micro_batch", "--batch-size", "run.py:11"),
            ],
        ),
        # words that only contain an evaluation's name are not one (device, latest)
        (
            "device_loader = DataLoader(latest_ds, batch_size=args.batch_size)\n",
            [("micro_batch", "--batch-size", "run.py:9")],
        ),
    ],
)
def test_an_evaluation_loader_is_told_from_the_training_one_by_its_names(body, want):
    assert _roles(body) == want


def _program(tmp_path, body: str):
    (tmp_path / "run.py").write_text(HEAD + body)
    script = "#!/bin/bash\n#SBATCH --nodes=1\nsrun python run.py -b 8\n"
    return script, program_options(script, tmp_path)


def _eval_oom(script, program, tried=()):
    return ladder.plan(
        "true_oom",
        PLAYBOOK.ladder,
        script=script,
        knobs=KNOBS,
        tried=list(tried),
        node="gpu-01",
        causes=PLAYBOOK.causes,
        cause=cause.Cause("eval_batch", ["the OOM is in evaluation"]),
        program=program,
    )


SHARED = (
    "train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)\n"
    "val_loader = DataLoader(val_set, batch_size=args.batch_size)\n"
)


def test_an_evaluation_oom_on_the_training_loaders_option_halves_it_with_the_global_batch_kept(
    tmp_path,
):
    script, program = _program(tmp_path, SHARED)
    p = _eval_oom(script, program)
    assert (p.rung, p.needs_human) == ("halve_micro_batch", False), p.why
    assert "srun python run.py --accum-steps 2 -b 4\n" in p.patch.new, p.patch.new
    # The report says which batch changed, and why the training's did.
    assert "micro-batch 8 -> 4 (-b)" in p.patch.changes
    assert "evaluation batch halved with it (--batch-size: run.py:10)" in p.patch.changes
    assert "val_loader = DataLoader(..., batch_size=args.batch_size)" in p.why
    assert "training loader's micro-batch (run.py:9)" in p.why
    assert any(c.startswith("global batch: 8 x 1 = 4 x 2") for c in p.patch.checks), p.patch.checks
    assert dict(p.passed_over)["halve_eval_batch"]
    # The lineage halved it and the rerun ran out in evaluation again: a person.
    again = _eval_oom(script, program, tried=[("1", "halve_micro_batch")])
    assert again.needs_human and "in evaluation again after the lineage halved" in again.why


def test_an_evaluation_with_its_own_option_never_touches_the_training_batch(tmp_path):
    """The evaluation's loader takes --eval-batch (default 64): that is halved on the command
    line, -b stays 8."""
    script, program = _program(
        tmp_path,
        "train_loader = DataLoader(train_set, batch_size=args.batch_size)\n"
        "val_loader = DataLoader(val_set, batch_size=args.eval_batch)\n",
    )
    p = _eval_oom(script, program)
    assert (p.rung, p.needs_human) == ("halve_eval_batch", False), p.why
    assert "srun python run.py --eval-batch 32 -b 8\n" in p.patch.new, p.patch.new
    assert p.patch.changes == [
        "evaluation batch 64 -> 32 (--eval-batch added: the default, run.py:7 (argparse default))"
    ]
    assert "the training batch (micro-batch, accumulation, global batch) is not touched" in (
        p.patch.checks
    )


def test_an_evaluation_loader_on_a_site_micro_batch_spelling_is_the_evaluation_s_batch(tmp_path):
    """The evaluation's loader reads --batch-size (a spelling the site lists as a micro-batch)
    and the training loader --train-batch: the program proves which is which, so --batch-size is
    halved as the evaluation's batch and the training's stays."""
    body = (
        "p.add_argument('--train-batch', type=int, default=8)\n"
        "a2 = p.parse_args()\n"
        "train_loader = DataLoader(train_set, batch_size=a2.train_batch)\n"
        "val_loader = DataLoader(val_set, batch_size=args.batch_size)\n"
    )
    (tmp_path / "run.py").write_text(HEAD + body)
    script = "#!/bin/bash\nsrun python run.py --batch-size 8 --train-batch 8 --accum-steps 1\n"
    p = _eval_oom(script, program_options(script, tmp_path))
    assert (p.rung, p.needs_human) == ("halve_eval_batch", False), p.why
    assert "srun python run.py --batch-size 4 --train-batch 8 --accum-steps 1\n" in p.patch.new
    assert p.patch.changes == ["evaluation batch 8 -> 4 (--batch-size)"]
