"""argparse with short flags and an accumulation named --accum-steps; runbook's example program
trains with what it parsed."""

import argparse
import os
import runpy
import shlex
import sys

p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=32)
p.add_argument("--accum-steps", type=int, default=1)
p.add_argument("--data", default="data/train.json")
a = p.parse_args()
sys.argv = [
    os.environ["EXAMPLE"],
    *shlex.split(os.environ["EXAMPLE_ARGS"]),
    "--micro-batch-size",
    str(a.batch_size),
    "--grad-accum",
    str(a.accum_steps),
]
runpy.run_path(sys.argv[0], run_name="__main__")
