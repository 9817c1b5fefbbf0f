"""A training entry in an OpenMMLab shape: the config file, then overrides merged over it."""

import argparse

from mmengine.config import Config, DictAction
from mmengine.runner import Runner


def parse_args():
    parser = argparse.ArgumentParser(description="train a classifier")
    parser.add_argument("config", help="the config file")
    parser.add_argument("--work-dir", help="where logs and checkpoints go")
    parser.add_argument("--auto-scale-lr", action="store_true", help="scale the LR by batch")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, help="key=value overrides")
    parser.add_argument("--launcher", default="none", help="job launcher")
    return parser.parse_args()


def main():
    args = parse_args()
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    if args.auto_scale_lr:
        cfg.auto_scale_lr.enable = True
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    Runner.from_cfg(cfg).train()


if __name__ == "__main__":
    main()
