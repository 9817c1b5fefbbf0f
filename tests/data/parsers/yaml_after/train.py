"""argparse names a YAML; the program reads its settings from it after parsing."""

import argparse

import yaml

p = argparse.ArgumentParser()
p.add_argument("--config", required=True)
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
with open(a.config) as f:
    cfg = yaml.safe_load(f)
print(f"RUNS micro={cfg['train']['batch_size']} accum={cfg['train']['grad_accum']}", flush=True)
