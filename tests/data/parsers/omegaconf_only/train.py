"""OmegaConf.from_cli alone: the command line is the whole configuration."""

from omegaconf import OmegaConf

cfg = OmegaConf.from_cli()
print(f"RUNS micro={cfg.batch_size} accum={cfg.grad_accum_steps}", flush=True)
