"""A trainer whose parser grew an accumulation option in its second version (TRAINER_V2)."""

import argparse
import os


def options():
    p = argparse.ArgumentParser(description="train a tagger")
    p.add_argument("--data", required=True, help="the training shards")
    p.add_argument("--batch_size", type=int, default=32, help="per GPU batch size")
    if os.environ.get("TRAINER_V2", "1") == "1":
        p.add_argument("--grad_accum", type=int, default=1, help="gradient accumulation steps")
    return p.parse_args()


if __name__ == "__main__":
    args = options()
    print(f"batch {args.batch_size} x {getattr(args, 'grad_accum', 1)}")
