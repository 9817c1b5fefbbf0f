"""A package's module run by torchrun -m, with its options in a dataclass via argparse."""

import argparse
from dataclasses import dataclass


@dataclass
class Args:
    local_batch_size: int = 8
    accum_iter: int = 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--local-batch-size", type=int, default=Args.local_batch_size)
    p.add_argument("--accum-iter", type=int, default=Args.accum_iter)
    a = p.parse_args()
    print(f"RUNS micro={a.local_batch_size} accum={a.accum_iter}", flush=True)


if __name__ == "__main__":
    main()
