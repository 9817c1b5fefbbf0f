"""The job's own arguments from the sbatch line accounting keeps (SubmitLine), data in, data
out: the lines people type (alignment-handbook's `sbatch ... recipes/launch.slurm zephyr-7b-beta
sft full ...`, options before the script in every form getopt takes) and the ones that have no
script arguments to read."""

from __future__ import annotations

import pytest

from runbook.slurm.submit_line import script_arguments


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("sbatch launch.slurm zephyr-7b-beta sft full", ["zephyr-7b-beta", "sft", "full"]),
        # alignment-handbook's README line: options, the script, then its four arguments.
        (
            "sbatch --job-name=handbook_sft --nodes=1 recipes/launch.slurm zephyr-7b-beta sft "
            "full deepspeed_zero3",
            ["zephyr-7b-beta", "sft", "full", "deepspeed_zero3"],
        ),
        ("sbatch -N 2 -J x -H --parsable run.sh 'a b' c", ["a b", "c"]),
        ("sbatch -N2 --gres gpu:8 --time 30 run.sh --lr 3e-4", ["--lr", "3e-4"]),
        ("/usr/bin/sbatch --hold run.sh", []),
        ("sbatch -n2 : -n1 het.sh x", ["x"]),
    ],
)
def test_the_words_after_the_script(line, args):
    assert script_arguments(line) == args


@pytest.mark.parametrize(
    "line", ["", "sbatch --wrap='python train.py'", "sbatch -N2", "sbatch 'unclosed", "srun x.sh"]
)
def test_no_script_arguments_to_read(line):
    assert script_arguments(line) is None
