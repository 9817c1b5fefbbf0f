"""The Lightning callback of docs/configuration.md (examples/on_request/lightning_callback.py)
run for real: Lightning 2.6.6 on the CPU, gradient accumulation 2, the request file written as
runbook writes it (`next`, then the step, then withdrawn). The rank says the step it reached and
pauses, saves exactly the step named through Lightning's own save_checkpoint, holds until the
request is withdrawn, then trains to the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lightning", reason="scripts/test installs lightning (2.6.6)")
REPO = Path(__file__).resolve().parents[2]

PROGRAM = r"""
import os, sys, threading, time
sys.path.insert(0, sys.argv[1])
import torch
import lightning as L
from lightning_callback import CheckpointOnRequest
from runbook import instrument

class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
    def training_step(self, batch, i):
        time.sleep(0.05)
        return self.layer(batch).sum()
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

path = instrument.request_path()
def runbook_side():
    def write(what):
        with open(path + ".tmp", "w") as f:
            f.write(f"runbook-checkpoint-request id=inc-9 step={what}\n")
        os.replace(path + ".tmp", path)
    time.sleep(1.0)
    write("next")
    deadline = time.monotonic() + 30
    while "checkpoint-seen" not in open("err.txt").read() and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = int(open("err.txt").read().split("checkpoint-seen")[1].split("step=")[1].split()[0])
    write(str(seen + 2))
    time.sleep(1.0)
    write("withdrawn")
threading.Thread(target=runbook_side, daemon=True).start()
trainer = L.Trainer(
    max_steps=40, accelerator="cpu", devices=1, accumulate_grad_batches=2, logger=False,
    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    default_root_dir=os.getcwd(), callbacks=[CheckpointOnRequest()],
)
trainer.fit(Tiny(), torch.utils.data.DataLoader(torch.randn(400, 4), batch_size=2))
print("finished at", trainer.global_step, sorted(os.listdir("checkpoints")))
"""


def test_the_lightning_callback_saves_the_step_named_holds_and_goes_on(tmp_path):
    err = tmp_path / "err.txt"
    with err.open("w") as f:
        r = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(REPO / "examples" / "on_request")],
            stdout=subprocess.PIPE,
            stderr=f,
            text=True,
            timeout=180,
            cwd=tmp_path,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": str(REPO),
                "SLURM_JOB_ID": "77",
                "RUNBOOK_CHECKPOINT_HOLD_S": "60",
            },
        )
    log = err.read_text()
    assert r.returncode == 0, log[-3000:]
    seen = int(log.split("checkpoint-seen rank=None id=inc-9 step=")[1].split()[0])
    saved = f"step_{seen + 2}.ckpt"
    assert r.stdout.strip() == f"finished at 40 ['{saved}']", r.stdout
    assert (
        f"checkpoint rank=None step={seen + 2} id=inc-9 path={tmp_path}/checkpoints/{saved}" in log
    )
    assert "checkpoint-resumed rank=None id=inc-9 why=withdrawn" in log
    import torch

    assert torch.load(tmp_path / "checkpoints" / saved, weights_only=False)["global_step"] == (
        seen + 2
    )
