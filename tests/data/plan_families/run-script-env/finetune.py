"""Fine-tuning (a fixture): its options only."""

from argparse import ArgumentParser

p = ArgumentParser()
for flag, default in (("--per_device_train_batch_size", 16), ("--gradient_accumulation_steps", 1)):
    p.add_argument(flag, type=int, default=default)
print(p.parse_args())
