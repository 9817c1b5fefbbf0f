"""The pure parts of asking the job's program (issue 63): its answer read, the roles named in a
parsed configuration by the program's own words, two configurations compared, the training
command edited. Data in, data out."""

from __future__ import annotations

from runbook.asking import fix, parse_only
from runbook.asking.roles import roles
from runbook.jobfiles.command_line import appended

MARK = parse_only.MARK


def test_the_answer_is_the_last_marked_line_whatever_the_program_printed():
    out = f'loading...\n{MARK}{{"library": "click", "config": {{"a": {{"b": 1}}}}}}\n'
    p = parse_only.read(0, "noise \x1e in a line\n" + out, "")
    assert isinstance(p, parse_only.Parsed)
    assert (p.library, p.values, p.options) == ("click", {"a.b": 1}, {})


def test_no_answer_says_why():
    assert parse_only.read(1, "", "Traceback\nValueError: bad\n") == (
        "it stopped before its parser handed over (exit 1: ValueError: bad)"
    )
    assert "time limit" in parse_only.read(124, "", "")
    assert parse_only.read(0, f"{MARK}{{not json\n", "") == (
        "its parsed configuration was not readable JSON"
    )


def test_roles_by_the_programs_own_words():
    r = roles({"fit.data.batch_size": 16, "fit.data.val_batch_size": 64,
               "fit.trainer.accumulate_grad_batches": 2, "fit.model.lr": 0.1})  # fmt: skip
    assert (r.micro, r.accum, r.global_) == (
        "fit.data.batch_size", "fit.trainer.accumulate_grad_batches", None)  # fmt: skip
    r = roles({"micro_batch_size": 4, "batch_size": 64, "global_batch_size": 256})
    assert (r.micro, r.accum, r.global_) == ("micro_batch_size", None, "global_batch_size")
    r = roles({"optim_wrapper.accumulative_counts": 1, "train_dataloader.batch_size": 8,
               "val_dataloader.batch_size": 32, "test_dataloader.batch_size": 1})  # fmt: skip
    assert (r.micro, r.accum) == (
        "train_dataloader.batch_size",
        "optim_wrapper.accumulative_counts",
    )
    assert roles({"grad_accum": 2, "accum_steps": 4, "bs": 8}).why.startswith(
        "more than one value could be the accumulation"
    )


def test_ambiguous_or_missing_micro_batches_are_refused_not_guessed():
    r = roles({"model.batch_size": 8, "data.batch_size": 16})
    assert r.micro is None and "more than one value could be the micro-batch" in r.why
    assert roles({"model.batch_size": 8, "data.batch_size": 16}, {"--data.batch_size"}).why
    assert roles({"batch_size": None, "lr": 1}).why == (
        "no parsed value is named as a training micro-batch"
    )
    assert (
        roles({"batch_size": "auto"}).why == "batch_size is 'auto', not a whole number of samples"
    )
    assert roles({"eval_batch_size": 8}).micro is None  # an evaluation's batch is not training's


def test_difference_names_every_value_changed_added_or_gone():
    d = fix.difference({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 4, "d": 5})
    assert d == {"b": (2, 4), "c": (3, None), "d": (None, 5)}
    assert fix.shown_difference(d, limit=2) == "b 2 -> 4, c 3 -> None and 1 more"


def test_words_are_appended_where_the_arguments_end():
    s = "srun python train.py -b 8 \\\n  --lr 1e-3 > out.log 2>&1 # go\necho done\n"
    assert appended(s, "train.py", ["--batch-size", "4"]) == (
        "srun python train.py -b 8 \\\n  --lr 1e-3 --batch-size 4 > out.log 2>&1 # go\necho done\n"
    )
    s = "python app.py 'x=a b' trainer.bs=8 | tee log\n"
    assert appended(s, "app.py", ["trainer.bs=4"], ("trainer.bs=8",)) == (
        "python app.py 'x=a b' trainer.bs=4 | tee log\n"
    )
    assert (
        appended("python app.py a=1 &\nwait\n", "app.py", ["b=2"])
        == "python app.py a=1 b=2 &\nwait\n"
    )
    assert appended(s, "other.py", ["x"]) is None
    assert appended(s, "app.py", ["x=1"], ("y=2",)) is None
    assert appended('python t.py --name "a;b"\n', "t.py", ["--n", "a b"]) == (
        "python t.py --name \"a;b\" --n 'a b'\n"
    )


def _asker(answers: dict):
    """An Asker whose program answers from a table (words -> configuration)."""

    def run(argv):
        words = tuple(argv[4:])
        doc = answers.get(words)
        if doc is None:
            return 2, "", "error: unrecognized arguments", 0.1
        return 0, f"{MARK}{doc}\n", "", 0.1

    return fix.Asker("python", ["train.py"], run)


def test_the_fix_is_what_the_parser_took_and_nothing_else():
    base = (
        '{"library": "argparse", "config": %s, "options": {"bs": ["--bs"], "accum": ["--accum"]}}'
    )
    answers = {
        ("--bs", "8"): base % '{"bs": 8, "accum": 1, "lr": 0.1}',
        ("--bs", "8", "--bs", "4", "--accum", "2"): base % '{"bs": 4, "accum": 2, "lr": 0.1}',
    }
    got = fix.fix("python train.py --bs 8\n", "train.py", ["--bs", "8"], _asker(answers), set())
    assert got.script == "python train.py --bs 8 --bs 4 --accum 2\n"
    assert got.values_after == {"micro_batch": 4, "grad_accum": 2}
    assert "accum 1 -> 2, bs 8 -> 4; nothing else of its 3 values changed" in got.checks[0]


def test_a_parse_that_changes_anything_else_is_refused_showing_it():
    base = (
        '{"library": "argparse", "config": %s, "options": {"bs": ["--bs"], "accum": ["--accum"]}}'
    )
    answers = {
        ("--bs", "8"): base % '{"bs": 8, "accum": 1, "lr": 0.1}',
        ("--bs", "8", "--bs", "4", "--accum", "2"): base % '{"bs": 4, "accum": 2, "lr": 0.2}',
    }
    got = fix.fix("python train.py --bs 8\n", "train.py", ["--bs", "8"], _asker(answers), set())
    assert not got.script and got.asked
    assert "did not take the edit as planned: --bs 4 --accum 2: it parsed lr 0.1 -> 0.2" in got.why


def test_a_program_that_cannot_be_asked_leaves_the_static_reading():
    got = fix.fix("python train.py --bs 8\n", "train.py", ["--bs", "8"], _asker({}), set())
    assert not got.asked and "could not be asked" in got.why


def _answered(answers: dict) -> fix.Fixed:
    ask = _asker(answers)
    before = ask.parse(["--steps", "3"])
    assert isinstance(before, parse_only.Parsed)
    return fix.Fixed(why="asked its parser (argparse): no parsed value is named as a training "
                     "micro-batch", asked=True, asker=ask, before=before, entry="train.py")  # fmt: skip


def test_a_static_edit_the_parser_rejects_is_refused_with_its_words():
    base = '{"library": "argparse", "config": %s}'
    fixed = _answered({("--steps", "3"): base % '{"steps": 3}'})
    new = "python train.py --steps 3 --micro-batch-size 4 --grad-accum 2\n"
    check, refusal = fix.static_proof(fixed, new, ["--micro-batch-size added: the default 8"])
    assert not check and refusal == (
        "the program's parser rejects the static reading's edit (--micro-batch-size added: the "
        "default 8): it stopped before its parser handed over (exit 2: error: unrecognized "
        "arguments)"
    )


def test_a_static_edit_the_parser_takes_is_proved_by_the_parsed_roles():
    base = '{"library": "argparse", "config": %s}'
    fixed = _answered({
        ("--steps", "3"): base % '{"steps": 3, "mbs_x": 8, "grad_accum": 1}',
        ("--steps", "3", "--mbs_x", "4", "--grad_accum", "2"):
            base % '{"steps": 3, "mbs_x": 4, "grad_accum": 2}',
        ("--steps", "3", "--grad_accum", "2"): base % '{"steps": 3, "mbs_x": 8, "grad_accum": 2}',
    })  # fmt: skip
    # mbs_x is no name runbook knows: the parser cannot say it is the micro-batch
    check, refusal = fix.static_proof(
        fixed, "python train.py --steps 3 --mbs_x 4 --grad_accum 2\n", []
    )
    assert refusal and "no parsed value is named as the micro-batch" in refusal
    check, refusal = fix.static_proof(fixed, "python train.py --steps 3 --grad_accum 2\n", [])
    assert refusal and "grad_accum 1 -> 2" in refusal
    check, refusal = fix.static_proof(fixed, "python train.py --steps 3\n", ["a copy of c.yaml"])
    assert refusal is None and check.startswith("not confirmed by the program's parser")
