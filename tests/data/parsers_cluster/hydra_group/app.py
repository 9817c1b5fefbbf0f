"""A Hydra app: its trainer settings from a config group; runbook's example program trains with
the batch Hydra composed."""

import os
import runpy
import shlex
import sys

import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg):
    sys.argv = [
        os.environ["EXAMPLE"],
        *shlex.split(os.environ["EXAMPLE_ARGS"]),
        "--micro-batch-size",
        str(cfg.trainer.micro_batch_size),
        "--grad-accum",
        str(cfg.trainer.accumulate),
    ]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
