"""A click group whose `fit` command holds the batch options."""

import click


@click.group()
@click.option("--seed", default=0)
def cli(seed):
    pass


@cli.command()
@click.option("--per-device-batch-size", "-b", type=int, default=4)
@click.option("--accumulation", type=int, default=1)
def fit(per_device_batch_size, accumulation):
    print(f"RUNS micro={per_device_batch_size} accum={accumulation}", flush=True)


if __name__ == "__main__":
    cli()
