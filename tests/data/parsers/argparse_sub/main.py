"""argparse with subcommands; the batch options belong to `train`."""

import argparse

p = argparse.ArgumentParser()
p.add_argument("--seed", type=int, default=0)
sub = p.add_subparsers(dest="command", required=True)
t = sub.add_parser("train")
t.add_argument("--batch-size", type=int, default=16)
t.add_argument("--gradient-accumulation-steps", type=int, default=1)
e = sub.add_parser("eval")
e.add_argument("--batch-size", type=int, default=64)
a = p.parse_args()
if a.command == "train":
    print(f"RUNS micro={a.batch_size} accum={a.gradient_accumulation_steps}", flush=True)
