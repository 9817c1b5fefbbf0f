"""Megatron's manner: the accumulation derived from the global batch after parsing."""

import argparse
import os

p = argparse.ArgumentParser()
p.add_argument("--micro-batch-size", type=int, required=True)
p.add_argument("--global-batch-size", type=int, required=True)
a = p.parse_args()
world = int(os.environ.get("WORLD_SIZE", "4"))
accum = a.global_batch_size // (a.micro_batch_size * world)
print(f"RUNS micro={a.micro_batch_size} accum={accum}", flush=True)
