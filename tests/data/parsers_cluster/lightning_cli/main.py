"""LightningCLI parses the job's configuration (its YAML and command line); runbook's example
program trains with the batch it parsed. The Trainer is not built: Lightning's own Slurm
detection would take over the ranks srun started."""

import os
import runpy
import shlex
import sys

import lightning.pytorch as pl
from lightning.pytorch.cli import LightningCLI


class Model(pl.LightningModule):
    def __init__(self, width: int = 32):
        super().__init__()


class Data(pl.LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        self.batch_size = batch_size


class ParseOnlyCLI(LightningCLI):
    def instantiate_trainer(self, **kwargs):
        return None


cli = ParseOnlyCLI(Model, Data, run=False, save_config_callback=None)
accum = cli.config.trainer.accumulate_grad_batches
sys.argv = [
    os.environ["EXAMPLE"],
    *shlex.split(os.environ["EXAMPLE_ARGS"]),
    "--micro-batch-size",
    str(cli.datamodule.batch_size),
    "--grad-accum",
    str(accum),
]
runpy.run_path(sys.argv[0], run_name="__main__")
