"""A plain DDP training program: every knob an argparse option with its default."""

import argparse


def parse_args():
    parser = argparse.ArgumentParser(description="GPT pretraining with DDP")
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--batch_size", type=int, default=12, help="samples per GPU per step")
    parser.add_argument(
        "--gradient_accumulation_steps", type=int, default=4, help="micro-steps per update"
    )
    parser.add_argument("--learning_rate", type=float, default=6e-4)
    parser.add_argument("--max_steps", type=int, default=600000)
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
