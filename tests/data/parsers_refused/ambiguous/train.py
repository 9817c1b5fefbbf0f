"""Two values named as a batch size: which one the model steps on is not said by a name."""

import argparse

p = argparse.ArgumentParser()
p.add_argument("--model-batch-size", dest="model_batch", type=int, default=8)
p.add_argument("--data-batch-size", dest="data_batch", type=int, default=16)
p.add_argument("--grad-accum", type=int, default=1)
a = p.parse_args()
print(f"RUNS micro={a.data_batch} accum={a.grad_accum}", flush=True)
