"""An image classifier (a fixture in the shape of a reference training script): its -b is the
batch of every GPU of the node, and it has no gradient accumulation."""

import argparse

parser = argparse.ArgumentParser(description="Training")
parser.add_argument("-a", "--arch", default="resnet18")
parser.add_argument(
    "-b",
    "--batch-size",
    default=256,
    type=int,
    metavar="N",
    help="mini-batch size (default: 256), this is the total batch size of all GPUs on the "
    "current node when using Distributed Data Parallel",
)
parser.add_argument("--workers", default=4, type=int)

if __name__ == "__main__":
    print(parser.parse_args())
