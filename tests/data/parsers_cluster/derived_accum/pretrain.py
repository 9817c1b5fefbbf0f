"""Megatron's manner: the accumulation derived after parsing from the global batch, the
micro-batch and the data-parallel size; runbook's example program trains with it."""

import argparse
import os
import runpy
import shlex
import sys

p = argparse.ArgumentParser()
p.add_argument("--micro-batch-size", type=int, required=True)
p.add_argument("--global-batch-size", type=int, required=True)
a = p.parse_args()
world = int(os.environ["SLURM_NTASKS"])
accum = a.global_batch_size // (a.micro_batch_size * world)
sys.argv = [
    os.environ["EXAMPLE"],
    *shlex.split(os.environ["EXAMPLE_ARGS"]),
    "--micro-batch-size",
    str(a.micro_batch_size),
    "--grad-accum",
    str(accum),
]
runpy.run_path(sys.argv[0], run_name="__main__")
