"""Pretraining (a fixture): Megatron-style batch options, the accumulation derived."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--micro-batch-size", type=int, default=4)
parser.add_argument("--global-batch-size", type=int, default=256)
parser.add_argument("--cluster", default="local")

if __name__ == "__main__":
    print(parser.parse_args())
