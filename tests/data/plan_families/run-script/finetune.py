"""Supervised fine-tuning (a fixture in the shape of a DeepSpeed example's main.py)."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--model_name_or_path", type=str)
parser.add_argument("--per_device_train_batch_size", type=int, default=16)
parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
parser.add_argument("--output_dir", type=str)

if __name__ == "__main__":
    print(parser.parse_args())
