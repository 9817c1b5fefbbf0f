"""LightningCLI with its YAML: the batch in the data module, the accumulation in the trainer."""

import lightning.pytorch as pl
from lightning.pytorch.cli import LightningCLI


class Model(pl.LightningModule):
    def __init__(self, hidden: int = 64):
        super().__init__()


class Data(pl.LightningDataModule):
    def __init__(self, batch_size: int = 32, num_workers: int = 2):
        super().__init__()
        self.batch_size = batch_size


cli = LightningCLI(Model, Data, run=False, save_config_callback=None)
print(
    f"RUNS micro={cli.datamodule.batch_size} accum={cli.trainer.accumulate_grad_batches}",
    flush=True,
)
