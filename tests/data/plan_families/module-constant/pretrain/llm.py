"""Pretraining a small language model (a fixture written here in the shape of TinyLlama's
pretrain script: the batch sizes are module constants, the accumulation derived from them)."""

import sys
from pathlib import Path

wd = Path(__file__).parent.parent.resolve()
sys.path.append(str(wd))

num_of_devices = 8
global_batch_size = 512
learning_rate = 4e-4
micro_batch_size = 8
max_step = 1000
batch_size = global_batch_size // num_of_devices
gradient_accumulation_steps = batch_size // micro_batch_size
assert gradient_accumulation_steps > 0


def setup(devices: int = 8, train_data_dir: Path = Path("data")) -> None:
    print(devices, train_data_dir, micro_batch_size, gradient_accumulation_steps)


if __name__ == "__main__":
    from jsonargparse import CLI

    CLI(setup)
