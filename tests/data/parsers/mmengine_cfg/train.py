"""mmengine: a Config file with --cfg-options merged, then the Runner."""

import argparse

from mmengine.config import Config, DictAction

p = argparse.ArgumentParser()
p.add_argument("config")
p.add_argument("--cfg-options", nargs="+", action=DictAction)
a = p.parse_args()
cfg = Config.fromfile(a.config)
if a.cfg_options:
    cfg.merge_from_dict(a.cfg_options)
print(
    f"RUNS micro={cfg.train_dataloader.batch_size} accum={cfg.optim_wrapper.accumulative_counts}",
    flush=True,
)
from mmengine.runner import Runner  # noqa: E402

Runner.from_cfg(cfg)
