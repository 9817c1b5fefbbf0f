"""Clips cut to a fixed length; the loader's settings in one dataclass per split."""

from dataclasses import dataclass

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class LoaderConfig:
    clip_len: int
    batch_size: int
    workers: int = 2


class ClipData(pl.LightningDataModule):
    def __init__(self, train_loader: LoaderConfig, val_loader: LoaderConfig):
        super().__init__()
        self.train_cfg = train_loader
        self.val_cfg = val_loader

    def _loader(self, cfg: LoaderConfig, shuffle: bool) -> DataLoader:
        clips = TensorDataset(torch.randn(64, cfg.clip_len))
        return DataLoader(clips, batch_size=cfg.batch_size, shuffle=shuffle, num_workers=0)

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_cfg, True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_cfg, False)
