"""python-fire over a class: the settings in its constructor, the job calls its method."""

import fire


class Trainer:
    def __init__(self, batch_size=32, accumulate_steps=1, lr=1e-4):
        self.batch_size, self.accumulate_steps = batch_size, accumulate_steps

    def fit(self, epochs=1):
        print(f"RUNS micro={self.batch_size} accum={self.accumulate_steps}", flush=True)


if __name__ == "__main__":
    fire.Fire(Trainer)
