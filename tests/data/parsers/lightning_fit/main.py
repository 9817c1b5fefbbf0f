"""LightningCLI with its subcommands (fit, validate, ...): the job runs `fit` with a YAML."""

import lightning.pytorch as pl
from lightning.pytorch.cli import LightningCLI


class Model(pl.LightningModule):
    def __init__(self, width: int = 32):
        super().__init__()


class Data(pl.LightningDataModule):
    def __init__(self, batch_size: int = 8):
        super().__init__()
        self.batch_size = batch_size


class CLI(LightningCLI):
    def before_fit(self):
        print(
            f"RUNS micro={self.datamodule.batch_size} accum={self.trainer.accumulate_grad_batches}",
            flush=True,
        )
        raise SystemExit(0)


CLI(Model, Data, save_config_callback=None)
