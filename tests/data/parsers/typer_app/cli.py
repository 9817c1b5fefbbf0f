"""A typer app with two commands; the job runs `train`."""

import typer

app = typer.Typer()


@app.command()
def train(micro_batch: int = 8, grad_accum: int = 1, data: str = "data/train.jsonl"):
    print(f"RUNS micro={micro_batch} accum={grad_accum}", flush=True)


@app.command()
def evaluate(batch_size: int = 64):
    print("EVAL", batch_size)


if __name__ == "__main__":
    app()
