"""click."""

import click


@click.command()
@click.option("--batch-size", type=int, default=8)
@click.option("--grad-accum", type=int, default=1)
@click.option("--data", default="data/train.jsonl")
def main(batch_size, grad_accum, data):
    print(f"RUNS micro={batch_size} accum={grad_accum}", flush=True)


if __name__ == "__main__":
    main()
