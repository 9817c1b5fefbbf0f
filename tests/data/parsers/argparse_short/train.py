"""argparse with short flags and an accumulation named --accum-steps; a data path on the command line."""

import argparse

p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=32)
p.add_argument("--accum-steps", type=int, default=1)
p.add_argument("--data", default="data/train.json")
p.add_argument("--eval-batch-size", type=int, default=64)
a = p.parse_args()
print(
    f"RUNS micro={a.batch_size} accum={a.accum_steps} data={a.data} eval={a.eval_batch_size}",
    flush=True,
)
