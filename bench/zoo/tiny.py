"""The zoo's tiny model and data: 16 features, 4 classes, batches of 4 (seeded)."""

import torch
from torch.utils.data import DataLoader, TensorDataset


def loader(n: int) -> DataLoader:
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(n, 16, generator=g), torch.randint(0, 4, (n,), generator=g))
    return DataLoader(data, batch_size=4)


def net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
