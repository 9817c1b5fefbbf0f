"""Hydra's compose API: the program composes its config from the command line's overrides."""

import sys

from hydra import compose, initialize

with initialize(version_base=None, config_path="conf"):
    cfg = compose(config_name="config", overrides=sys.argv[1:])
print(
    f"RUNS micro={cfg.optim.micro_batch_size} accum={cfg.optim.gradient_accumulation_steps}",
    flush=True,
)
