"""The shape of accelerate's examples/nlp_example.py: the batch size is a key of a dict built in
the program (config = {"lr": 2e-5, "num_epochs": 3, "seed": 42, "batch_size": 16}), not an
option the command line can set."""

import argparse


def training_function(config, args):
    batch_size = int(config["batch_size"])
    return batch_size


def main():
    parser = argparse.ArgumentParser(description="Simple example of training script.")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--cpu", action="store_true", help="If passed, will train on the CPU.")
    args = parser.parse_args()
    config = {"lr": 2e-5, "num_epochs": 3, "seed": 42, "batch_size": 16}
    training_function(config, args)


if __name__ == "__main__":
    main()
