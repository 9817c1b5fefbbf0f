"""Patching job scripts rung by rung: golden diffs, the global-batch invariant, refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runbook.errors import InputError, RungNotApplicable, UsageError
from runbook.jobfiles.program import HF_TRAINING_FLAGS, ProgramOptions
from runbook.jobfiles.templates import parse_vars, read_header, render
from runbook.planning.sbatch_patch import patch
from runbook.site import SiteConfig
from tests.golden import check_golden

DATA = Path(__file__).resolve().parents[1] / "data" / "sbatch"
KNOBS = SiteConfig().knobs

CASES = [
    ("hf_accelerate.sbatch", "halve_micro_batch"),
    ("hf_accelerate.sbatch", "activation_checkpointing"),
    ("hf_accelerate.sbatch", "expandable_segments"),
    ("hf_accelerate.sbatch", "raise_mem"),
    ("megatron.sbatch", "halve_micro_batch"),
    ("megatron.sbatch", "expandable_segments"),
    ("formula_accum.sbatch", "halve_micro_batch"),
]


@pytest.mark.parametrize("name, rung", CASES, ids=[f"{n}:{r}" for n, r in CASES])
def test_golden_diff(name, rung):
    # hf_accelerate.sbatch runs an HF Trainer program: its arguments are TrainingArguments'.
    program = ProgramOptions("train.py", set(HF_TRAINING_FLAGS), "Hugging Face arguments")
    p = patch((DATA / name).read_text(), rung, KNOBS, program=program)
    golden = DATA / "golden" / f"{name}.{rung}.diff"
    diff = p.diff(name)
    check_golden(golden, diff, __file__)


def _ints(text: str, *names: str) -> dict[str, int]:
    out = {}
    for n in names:
        m = re.search(rf"(?:^|\s){re.escape(n)}(?:=|\s+)\"?(\d+)", text, re.M)
        out[n] = int(m.group(1)) if m else None
    return out


def test_hf_global_batch_unchanged():
    old = (DATA / "hf_accelerate.sbatch").read_text()
    p = patch(old, "halve_micro_batch", KNOBS)
    a = _ints(old, "--per_device_train_batch_size", "--gradient_accumulation_steps")
    b = _ints(p.new, "--per_device_train_batch_size", "--gradient_accumulation_steps")
    assert (
        a["--per_device_train_batch_size"] * a["--gradient_accumulation_steps"]
        == b["--per_device_train_batch_size"] * b["--gradient_accumulation_steps"]
    )
    assert b["--per_device_train_batch_size"] == 4
    assert any("unchanged" in c for c in p.checks) and any("bash -n" in c for c in p.checks)


def test_megatron_leaves_accumulation_to_the_framework():
    p = patch((DATA / "megatron.sbatch").read_text(), "halve_micro_batch", KNOBS)
    assert "MBS=2" in p.new and "GBS=1024" in p.new
    assert p.changes == ["micro-batch 4 -> 2 (MBS)"]


def test_allocator_merges_with_existing_setting_under_both_names():
    p = patch((DATA / "megatron.sbatch").read_text(), "expandable_segments", KNOBS)
    for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        assert f"{name}=max_split_size_mb:512,expandable_segments:True" in p.new


def test_refusals_say_why():
    with pytest.raises(RungNotApplicable, match="cannot be halved"):
        patch(
            "#!/bin/bash\nsrun python t.py --micro-batch-size 1 --grad-accum 2\n",
            "halve_micro_batch",
            KNOBS,
        )
    with pytest.raises(RungNotApplicable, match="would halve the global batch"):
        patch("#!/bin/bash\nsrun python t.py --micro-batch-size 8\n", "halve_micro_batch", KNOBS)
    with pytest.raises(RungNotApplicable, match="no micro-batch knob"):
        patch("#!/bin/bash\nsrun python t.py\n", "halve_micro_batch", KNOBS)
    with pytest.raises(RungNotApplicable, match="already on"):
        patch(
            "#!/bin/bash\nsrun python t.py --micro-batch-size 8 --gradient-checkpointing\n",
            "activation_checkpointing",
            KNOBS,
        )


def test_an_original_that_already_fails_bash_n_is_reported_as_the_originals_fault():
    broken = "#!/bin/bash\nMBS=8\nif true; then\nsrun t.py --micro-batch-size $MBS --grad-accum 2\n"
    p = patch(broken, "halve_micro_batch", KNOBS)
    assert any(
        "the ORIGINAL script already fails" in c and "adds no new error" in c for c in p.checks
    )
    assert "MBS=4" in p.new and "--grad-accum 4" in p.new


def test_a_patch_that_breaks_the_script_is_refused():
    from runbook.jobfiles.bash import bash_n

    good = "#!/bin/bash\nsrun t.py --micro-batch-size 8\n"
    with pytest.raises(InputError, match="does not parse"):
        bash_n(good + "if true; then\n", original=good)
    broken = good + "if true; then\n"
    with pytest.raises(InputError, match="would add a bash error"):
        bash_n(broken + 'echo "oops\n', original=broken)


HISTORY_SCRIPT = (
    "#!/bin/bash\n"
    "#SBATCH -N 2\n"
    "# history: --micro-batch-size 16 --grad-accum 1 was too much\n"
    "cat > notes.txt <<'END'\n"
    "  --micro-batch-size 32 --grad-accum 9\n"
    "END\n"
    'echo "the # in quotes is no comment" # --micro-batch-size 64\n'
    'srun python train.py --micro-batch-size "${MBS:-8}" \\\n'
    "     --grad-accum 2\n"
)


def test_knobs_in_comments_heredocs_and_quotes_as_bash_reads_them():
    p = patch(HISTORY_SCRIPT, "halve_micro_batch", KNOBS)
    assert "# history: --micro-batch-size 16 --grad-accum 1" in p.new  # comments untouched
    assert "  --micro-batch-size 32 --grad-accum 9" in p.new  # here-document untouched
    assert '--micro-batch-size "${MBS:-4}"' in p.new and "--grad-accum 4" in p.new
    assert any("re-read from the patched script: 4 x 4 = 8 x 2 = 16" in c for c in p.checks)


def test_global_batch_check_rereads_the_patched_script():
    from runbook.planning.sbatch_patch import check_global_batch

    old = "srun t.py --micro-batch-size 8 --grad-accum 2\n"
    assert "unchanged" in check_global_batch(old, old, KNOBS)
    with pytest.raises(InputError, match="global batch would change"):
        check_global_batch(old, "srun t.py --micro-batch-size 4 --grad-accum 2\n", KNOBS)


def test_template_render_records_template_and_vars_and_patches_exactly(tmp_path):
    tpl = DATA / "train.sbatch.j2"
    v = parse_vars(
        ["nodes=2", "ranks_per_node=2", f"workdir={tmp_path}", "micro_batch=8", "grad_accum=2"]
    )
    text = render(str(tpl), v)
    assert text.startswith("#!/bin/bash\n# runbook:template=")
    assert read_header(text) == (str(tpl.resolve()), v)
    p = patch(text, "halve_micro_batch", KNOBS)
    assert p.variables["micro_batch"] == 4 and p.variables["grad_accum"] == 4
    assert "--micro-batch-size 4 --grad-accum 4" in p.new
    p2 = patch(p.new, "activation_checkpointing", KNOBS)
    assert "--gradient-checkpointing" in p2.new
    p3 = patch(text, "expandable_segments", KNOBS)
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in p3.new


def test_template_errors(tmp_path):
    with pytest.raises(UsageError, match="'micro_batch' is undefined"):
        render(str(DATA / "train.sbatch.j2"), {"nodes": 1, "ranks_per_node": 1, "workdir": "/w"})
    evil = tmp_path / "evil.j2"
    evil.write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(InputError, match="sandbox"):
        render(str(evil), {})
    with pytest.raises(UsageError, match="NAME=VALUE"):
        parse_vars(["no-equals"])


def test_rendered_values_are_shell_quoted(tmp_path):
    hostile = str(tmp_path / "ck; $(touch PWNED) 'x'")
    tpl = tmp_path / "t.j2"
    tpl.write_text(
        "#!/bin/bash\n#SBATCH --output={{ out }}/%j.out\necho {{ resume_from }} "
        "{{ n }} {{ args | unquoted }}\n"
    )
    text = render(str(tpl), {"out": hostile, "resume_from": hostile, "n": 4, "args": "--a 1"})
    import subprocess

    r = subprocess.run(
        ["bash", "-c", text.split("\n", 4)[4]], capture_output=True, text=True, cwd=tmp_path
    )
    assert r.stdout.strip() == f"{hostile} 4 --a 1"
    assert not (tmp_path / "PWNED").exists()


def test_allocator_replaces_the_scripts_own_empty_export_that_would_win():
    from runbook.rungs._allocator import set_allocator

    script = (
        "#!/bin/bash\n#SBATCH -N2\nexport PYTORCH_ALLOC_CONF=\n"
        "export PYTORCH_CUDA_ALLOC_CONF=\nsrun python t.py\n"
    )
    new, _, _ = set_allocator(script, "expandable_segments:True")
    assert "export PYTORCH_ALLOC_CONF=expandable_segments:True\n" in new
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n" in new
    assert "=\n" not in new.split("#SBATCH -N2\n", 1)[1]  # no empty export left to override it


def test_a_plain_script_that_assigns_the_resume_variable_gets_the_path_there():
    """`export RUNBOOK_RESUME_FROM=` in a plain script (no runbook header) would blank what the
    environment carries: the path is written into that assignment; a script without one is
    left to the environment."""
    from runbook.site import load_site

    site = load_site("devcluster", environ={})
    resume = (site.checkpoints, "/ck/step_4.pt")
    s = "#!/bin/bash\nexport RUNBOOK_RESUME_FROM=\nsrun python3 t.py --micro-batch-size 8 --grad-accum 2\n"
    p = patch(s, "halve_micro_batch", site.knobs, resume=resume)
    assert "export RUNBOOK_RESUME_FROM=/ck/step_4.pt\n" in p.new
    assert any("resume from /ck/step_4.pt" in c for c in p.changes)
    bare = "#!/bin/bash\nsrun python3 t.py --micro-batch-size 8 --grad-accum 2\n"
    assert (
        "RUNBOOK_RESUME_FROM" not in patch(bare, "halve_micro_batch", site.knobs, resume=resume).new
    )


# Issue 34 item 5: the four shapes a hand-written lexer kept missing. Each is patched at the
# exact bytes of one value, and the framework's batch rule is kept.
DEFAULTED = """#!/bin/bash
#SBATCH -N 2
MBS=${MBS:-4}
GAS=${GAS:-2}
srun python train.py --micro-batch-size $MBS --gradient-accumulation-steps $GAS
"""

DS_WRITTEN = """#!/bin/bash
MICRO_BATCH_SIZE=4
GLOBAL_BATCH_SIZE=256
GAS=8
cat > ds_config.json <<EOT
{
  "train_batch_size": $GLOBAL_BATCH_SIZE,
  "train_micro_batch_size_per_gpu": $MICRO_BATCH_SIZE,
  "gradient_accumulation_steps": $GAS
}
EOT
srun python train.py --deepspeed ds_config.json
"""

DS_LITERAL = """#!/bin/bash
cat > ds_config.json <<'EOT'
{
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 4
}
EOT
srun python train.py --deepspeed_config ds_config.json
"""

YAML_WRITTEN = """#!/bin/bash
cat <<EOF > recipe.yaml
per_device_train_batch_size: ${MBS:-8}
gradient_accumulation_steps: 2
EOF
srun accelerate launch train.py --config recipe.yaml
"""


def _changed(old: str, new: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(old.splitlines(), new.splitlines(), strict=True) if a != b]


def test_a_defaulted_knob_is_patched_at_its_default():
    p = patch(DEFAULTED, "halve_micro_batch", KNOBS)
    assert _changed(DEFAULTED, p.new) == [
        ("MBS=${MBS:-4}", "MBS=${MBS:-2}"),
        ("GAS=${GAS:-2}", "GAS=${GAS:-4}"),
    ]


def test_a_deepspeed_config_the_script_writes_keeps_train_batch_size_consistent():
    """train_batch_size, micro-batch and accumulation all stated: DeepSpeed checks at start that
    train_batch_size = micro x accumulation x world, so the accumulation doubles."""
    p = patch(DS_WRITTEN, "halve_micro_batch", KNOBS)
    assert _changed(DS_WRITTEN, p.new) == [
        ("MICRO_BATCH_SIZE=4", "MICRO_BATCH_SIZE=2"),
        ("GAS=8", "GAS=16"),
    ]
    assert any("global batch stated as 256 before and after" in c for c in p.checks), p.checks


def test_literal_knobs_in_a_quoted_heredoc_config_are_edited_in_place():
    p = patch(DS_LITERAL, "halve_micro_batch", KNOBS)
    assert _changed(DS_LITERAL, p.new) == [
        ('  "train_micro_batch_size_per_gpu": 8,', '  "train_micro_batch_size_per_gpu": 4,'),
        ('  "gradient_accumulation_steps": 4', '  "gradient_accumulation_steps": 8'),
    ]


def test_a_yaml_heredoc_with_a_defaulted_knob():
    p = patch(YAML_WRITTEN, "halve_micro_batch", KNOBS)
    assert _changed(YAML_WRITTEN, p.new) == [
        ("per_device_train_batch_size: ${MBS:-8}", "per_device_train_batch_size: ${MBS:-4}"),
        ("gradient_accumulation_steps: 2", "gradient_accumulation_steps: 4"),
    ]


def test_a_heredoc_that_is_not_written_to_a_file_stays_inert():
    """A usage text printed with `cat <<EOF` (no file) documents knobs; it is no config."""
    script = DEFAULTED.replace(
        "srun", "cat <<EOF\nusage: per_device_train_batch_size: 64\nEOF\nsrun", 1
    )
    p = patch(script, "halve_micro_batch", KNOBS)
    assert "per_device_train_batch_size: 64" in p.new


@pytest.mark.parametrize(
    ("written", "after"),
    [("--gradient_checkpointing false", "--gradient_checkpointing true"),
     ("--gradient_checkpointing=False", "--gradient_checkpointing=True")],
)  # fmt: skip
def test_activation_checkpointing_written_off_is_off_and_turned_on_where_written(written, after):
    """HF's boolean arguments take a value: `--gradient_checkpointing false` is off, never
    "already on"; the rung turns it on in place instead of adding a second flag."""
    script = (
        "#!/bin/bash\n#SBATCH --nodes=1\n"
        f"torchrun train.py --per_device_train_batch_size 8 {written}\n"
    )
    p = patch(script, "activation_checkpointing", KNOBS)
    assert after in p.new and p.new.count("gradient_checkpointing") == 1, p.new
    with pytest.raises(RungNotApplicable, match="already on"):
        patch(p.new, "activation_checkpointing", KNOBS)


def test_a_flag_is_added_only_where_the_program_takes_it(tmp_path):
    """activation_checkpointing adds the spelling the job's own program parses (its argparse,
    or HF's TrainingArguments), and refuses where the program takes none, or where its source
    cannot be read: a flag it does not take would fail the rerun at its argument parser."""
    from runbook.jobfiles.program import program_options

    script = "#!/bin/bash\n#SBATCH -N 1\ntorchrun train.py --micro-batch-size 8 --grad-accum 2\n"
    (tmp_path / "train.py").write_text(
        "import argparse\nap = argparse.ArgumentParser()\n"
        "ap.add_argument('--micro-batch-size', type=int)\nap.add_argument('--grad-accum')\n"
        "ap.add_argument('--recompute-activations', action='store_true')\n"
    )
    p = patch(script, "activation_checkpointing", KNOBS, program=program_options(script, tmp_path))
    assert "--micro-batch-size 8 --recompute-activations" in p.new
    assert any("train.py takes --recompute-activations" in c for c in p.checks)
    (tmp_path / "train.py").write_text("import argparse\nargparse.ArgumentParser().parse_args()\n")
    with pytest.raises(RungNotApplicable, match="train.py takes none of"):
        patch(script, "activation_checkpointing", KNOBS, program=program_options(script, tmp_path))
    (tmp_path / "train.py").unlink()
    with pytest.raises(RungNotApplicable, match="cannot tell whether train.py takes"):
        patch(script, "activation_checkpointing", KNOBS, program=program_options(script, tmp_path))
    # An HF program's own dataclasses handed to HfArgumentParser are options too, and
    # TrainingArguments' where it is handed one and parses the command line.
    (tmp_path / "train.py").write_text(
        "from dataclasses import dataclass\n"
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "@dataclass\nclass Extra:\n    micro_batch_size: int = 8\n"
        "parser = HfArgumentParser((Extra, TrainingArguments))\n"
        "extra, targs = parser.parse_args_into_dataclasses()\n"
    )
    opts = program_options(script, tmp_path)
    assert {"--micro_batch_size", "--gradient_checkpointing"} <= opts.flags
