"""simple_parsing over a dataclass."""

from dataclasses import dataclass

from simple_parsing import ArgumentParser


@dataclass
class TrainConfig:
    batch_size: int = 16
    accumulation_steps: int = 1
    lr: float = 1e-3


p = ArgumentParser()
p.add_arguments(TrainConfig, dest="train")
cfg = p.parse_args().train
print(f"RUNS micro={cfg.batch_size} accum={cfg.accumulation_steps}", flush=True)
