"""A micro-batch and nothing that keeps the global batch: halving it changes the science."""

import argparse

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, default=8)
p.add_argument("--lr", type=float, default=1e-3)
a = p.parse_args()
print(f"RUNS micro={a.batch_size} accum=1", flush=True)
