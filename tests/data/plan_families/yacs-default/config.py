"""Defaults of every setting, merged over by a YAML file and the command line."""

import os

import yaml
from yacs.config import CfgNode as CN

_C = CN()
_C.BASE = [""]

_C.DATA = CN()
_C.DATA.BATCH_SIZE = 64
_C.DATA.ROOT = ""

_C.TRAIN = CN()
_C.TRAIN.EPOCHS = 100
_C.TRAIN.ACCUMULATION_STEPS = 1
_C.TRAIN.LR = 1e-3


def _from_file(config, path):
    with open(path) as f:
        data = yaml.safe_load(f)
    for base in data.setdefault("BASE", [""]):
        if base:
            _from_file(config, os.path.join(os.path.dirname(path), base))
    config.merge_from_file(path)


def load(args):
    config = _C.clone()
    _from_file(config, args.cfg)
    if args.opts:
        config.merge_from_list(args.opts)
    if args.batch_size:
        config.DATA.BATCH_SIZE = args.batch_size
    if args.accumulation_steps:
        config.TRAIN.ACCUMULATION_STEPS = args.accumulation_steps
    config.freeze()
    return config
