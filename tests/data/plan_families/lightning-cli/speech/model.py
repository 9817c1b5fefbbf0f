"""A model small enough for the CPU."""

import lightning.pytorch as pl
import torch


class Denoiser(pl.LightningModule):
    def __init__(self, clip_len: int = 128, lr: float = 1e-3):
        super().__init__()
        self.net = torch.nn.Linear(clip_len, clip_len)
        self.lr = lr

    def training_step(self, batch, batch_idx):
        (x,) = batch
        return torch.nn.functional.mse_loss(self.net(x), x)

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), x))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
