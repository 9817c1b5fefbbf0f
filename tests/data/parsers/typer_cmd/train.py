"""typer."""

import typer


def main(batch_size: int = 16, accumulate: int = 1, epochs: int = 3):
    print(f"RUNS micro={batch_size} accum={accumulate}", flush=True)


if __name__ == "__main__":
    typer.run(main)
