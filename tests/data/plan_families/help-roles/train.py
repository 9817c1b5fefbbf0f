"""A classifier trained with torch.distributed (a fixture written here in the shape of vision
repositories' main.py: the batch and the accumulation named by their help texts only)."""

import argparse


def get_args_parser():
    parser = argparse.ArgumentParser("classifier training", add_help=False)
    parser.add_argument("--batch_size", default=64, type=int, help="Per GPU batch size")
    parser.add_argument("--epochs", default=300, type=int)
    parser.add_argument("--update_freq", default=1, type=int, help="gradient accumulation steps")
    parser.add_argument("--lr", type=float, default=4e-3, metavar="LR")
    return parser


def main(args):
    print(args.batch_size, args.update_freq)


if __name__ == "__main__":
    main(get_args_parser().parse_args())
