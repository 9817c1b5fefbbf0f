"""Benchmark: what runbook.instrument's per-step memory line costs a training step (DESIGN §3.1).

Measured in the same run, in one process: one training step of the demo job
(examples/train_oom/train.py's real work per step, without its modelled sleep: a forward through
an nn.Module, the optimizer step, a gloo all-reduce of its gradient on one rank) against
`instrument.step(n, every=1)` (the opt-in line every step: on a machine without CUDA it returns
before reading the device, so `memory_line`, the print it makes on a GPU, is timed too), and
`instrument.checkpoint_requested(n)`, the poll every rank makes after every step once it
declared checkpoint_on() (no request file: the usual case; and a request naming a later step).
Reports the per-call cost in microseconds and as a share of the step.

    python3 bench/instrument_step.py [--steps 2000]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from contextlib import redirect_stderr
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    import torch
    import torch.distributed as dist

    from runbook import instrument

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = torch.nn.Linear(1024, 1024)
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(8, 1024)

    def train_step(_i: int) -> None:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        grad = torch.ones(1024)
        dist.all_reduce(grad)

    def line(i: int) -> None:
        instrument.memory_line(i, allocated=1 << 30, peak=1 << 31, reserved=3 << 30)

    import tempfile

    folder = tempfile.mkdtemp(prefix="runbook-bench-")
    os.environ["SLURM_JOB_ID"], os.environ["RUNBOOK_CHECKPOINT_DIR"] = "4242", folder
    with redirect_stderr(io.StringIO()):
        instrument.checkpoint_on()
    request = os.path.join(folder, ".runbook-checkpoint-4242")

    def poll(i: int) -> None:
        instrument.checkpoint_requested(i)

    def poll_pending(i: int) -> None:  # a request for a step far ahead: read, not yet due
        instrument.checkpoint_requested(i)

    sink = io.StringIO()
    rounds = []
    with redirect_stderr(sink):
        for _ in range(a.repeat):
            step_s = _per_call(train_step, a.steps // 10)
            call_s = _per_call(lambda i: instrument.step(i, every=1), a.steps)
            line_s = _per_call(line, a.steps)
            poll_s = _per_call(poll, a.steps)
            with open(request, "w") as f:
                f.write(f"runbook-checkpoint-request id=bench step={10**9}\n")
            pending_s = _per_call(poll_pending, a.steps)
            os.remove(request)
            rounds.append((step_s, call_s, line_s, poll_s, pending_s))
            sink.seek(0)
            sink.truncate()
    step_s, call_s, line_s, poll_s, pending_s = (
        statistics.median(r[k] for r in rounds) for k in range(5)
    )
    cuda = torch.cuda.is_available()
    print(f"one demo training step        {step_s * 1e6:10.1f} us")
    print(
        f"instrument.step(every=1)      {call_s * 1e6:10.1f} us  "
        f"{call_s / step_s:7.2%} of a step{'' if cuda else ' (no CUDA: returns early)'}"
    )
    print(
        f"memory_line (the print)       {line_s * 1e6:10.1f} us  {line_s / step_s:7.2%} of a step"
    )
    print(
        f"checkpoint_requested (none)   {poll_s * 1e6:10.1f} us  {poll_s / step_s:7.2%} of a step"
    )
    print(
        f"checkpoint_requested (later)  {pending_s * 1e6:10.1f} us  "
        f"{pending_s / step_s:7.2%} of a step"
    )
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
