"""Trains a classifier from a YAML config with command-line overrides."""

import argparse

from config import load


def parse():
    p = argparse.ArgumentParser("classifier")
    p.add_argument("--cfg", required=True, help="the YAML config")
    p.add_argument("--opts", nargs="+", default=None, help="KEY VALUE pairs over the config")
    p.add_argument("--batch-size", type=int, help="batch size for one GPU")
    p.add_argument("--accumulation-steps", type=int, help="gradient accumulation steps")
    return load(p.parse_args())


def main(config):
    steps = config.TRAIN.ACCUMULATION_STEPS
    print(f"batch {config.DATA.BATCH_SIZE} x {steps} steps")


if __name__ == "__main__":
    main(parse())
