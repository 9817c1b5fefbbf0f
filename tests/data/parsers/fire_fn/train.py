"""python-fire over a function."""

import fire


def train(batch_size=32, grad_accum_steps=1, lr=3e-4):
    print(f"RUNS micro={batch_size} accum={grad_accum_steps}", flush=True)


if __name__ == "__main__":
    fire.Fire(train)
