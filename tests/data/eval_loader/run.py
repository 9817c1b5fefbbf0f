"""A training program whose evaluation loader takes the training's own batch option (issue 64,
item 3): its train and validation DataLoaders are both built with batch_size=args.batch_size,
and it trains with runbook's example program (`$EXAMPLE`, its other options in
`$EXAMPLE_ARGS`) at the batches those loaders hold."""

import argparse
import os
import runpy
import shlex
import sys

from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=32)
p.add_argument("--accum-steps", type=int, default=1, help="gradient accumulation steps")
args = p.parse_args()

train_loader = DataLoader(range(256), batch_size=args.batch_size, shuffle=True)
val_loader = DataLoader(range(64), batch_size=args.batch_size)

sys.argv = [
    os.environ["EXAMPLE"],
    *shlex.split(os.environ["EXAMPLE_ARGS"]),
    "--micro-batch-size",
    str(train_loader.batch_size),
    "--grad-accum",
    str(args.accum_steps),
    "--eval-batch-size",
    str(val_loader.batch_size),
]
runpy.run_path(sys.argv[0], run_name="__main__")
