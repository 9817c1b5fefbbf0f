"""jsonargparse's CLI over a function."""

from jsonargparse import CLI


def train(micro_batch_size: int = 8, gradient_accumulation: int = 1, lr: float = 1e-3) -> None:
    print(f"RUNS micro={micro_batch_size} accum={gradient_accumulation}", flush=True)


if __name__ == "__main__":
    CLI(train)
