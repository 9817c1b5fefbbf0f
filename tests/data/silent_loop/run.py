"""A training program that prints nothing per epoch (issue 64): a full-batch loop in the shape
many graph and tabular scripts have (`loss = train()` then `evaluate()` each epoch, one line at the
end). It trains a real torch model on the CPU; its evaluation's GPU memory is modelled, openly,
with runbook's example program's numbers and message (`$EXAMPLE`, examples/train_oom/train.py):
the card holds --param-mib of weights, and an evaluation batch needs --eval-act-mib-per-sample
per sample. When it does not fit, torch.OutOfMemoryError is raised inside the model's forward,
in the first epoch's evaluation, before the program has printed a line."""

import argparse
import importlib.util
import os

import torch
from torch.utils.data import DataLoader

p = argparse.ArgumentParser()
p.add_argument("--eval-batch-size", type=int, default=8)
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--card-mib", type=float, default=81920)
p.add_argument("--param-mib", type=float, default=20000)
p.add_argument("--eval-act-mib-per-sample", type=float, default=9000)
args = p.parse_args()

spec = importlib.util.spec_from_file_location("example", os.environ["EXAMPLE"])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

train_loader = DataLoader(torch.randn(64, 8), batch_size=16, shuffle=True)
val_loader = DataLoader(torch.randn(32, 8), batch_size=args.eval_batch_size)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def _modelled_need(module, inputs):
    """The evaluation batch's modelled activations, asked for as the forward starts."""
    if module.training:
        return
    need = args.param_mib + len(inputs[0]) * args.eval_act_mib_per_sample
    if need > args.card_mib:
        request = need - args.param_mib
        raise torch.OutOfMemoryError(
            example.oom_message(
                0,
                request,
                args.card_mib,
                args.card_mib - args.param_mib - 300,
                args.param_mib + 300,
                args.param_mib,
                300,
                [],
            )  # fmt: skip
        )


model.register_forward_pre_hook(_modelled_need)


def train():
    model.train()
    for x in train_loader:
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return float(loss)


@torch.no_grad()
def evaluate():
    model.eval()
    return sum(float(model(x).pow(2).mean()) for x in val_loader)


for _epoch in range(args.epochs):
    loss = train()
    val = evaluate()
print(f"training finished after {args.epochs} epochs: loss {loss:.4f}, val {val:.4f}", flush=True)
