"""OmegaConf: a YAML merged with the command line's dotted overrides."""

from omegaconf import OmegaConf

cfg = OmegaConf.merge(OmegaConf.load("config.yaml"), OmegaConf.from_cli())
print(f"RUNS micro={cfg.train.micro_batch_size} accum={cfg.train.grad_accum}", flush=True)
