"""tyro over a dataclass."""

from dataclasses import dataclass

import tyro


@dataclass
class Config:
    batch_size: int = 8
    grad_accum_steps: int = 2
    lr: float = 1e-3


cfg = tyro.cli(Config)
print(f"RUNS micro={cfg.batch_size} accum={cfg.grad_accum_steps}", flush=True)
