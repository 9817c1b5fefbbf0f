"""An image model's training (a fixture in the shape of a vision library's train.py, launched
through a script that hands it the job's own words)."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="resnet50")
parser.add_argument("-b", "--batch-size", type=int, default=128, help="batch size per GPU")
parser.add_argument(
    "--grad-accum-steps", type=int, default=1, help="The number of steps to accumulate gradients"
)

if __name__ == "__main__":
    print(parser.parse_args())
