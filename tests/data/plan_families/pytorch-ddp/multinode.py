"""The shape of pytorch/examples' distributed/ddp-tutorial-series/multinode.py: two positional
arguments and a per-device batch size option; no gradient accumulation."""

import argparse


def main(save_every: int, total_epochs: int, batch_size: int, snapshot_path: str = "snapshot.pt"):
    pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("total_epochs", type=int, help="Total epochs to train the model")
    parser.add_argument("save_every", type=int, help="How often to save a snapshot")
    parser.add_argument(
        "--batch_size", default=32, type=int, help="Input batch size on each device (default: 32)"
    )
    args = parser.parse_args()
    main(args.save_every, args.total_epochs, args.batch_size)
