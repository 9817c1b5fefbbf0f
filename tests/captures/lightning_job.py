"""The training job tests/captures/lightning_launcher.py runs: a tiny LightningModule on CPU,
`strategy="ddp"`, so Lightning's own subprocess launcher starts the other ranks and watches them.

Environment: DEVICES (ranks), FAIL_RANK, FAIL_STEP, HOW (alloc: a host allocation no machine can
satisfy, which c10's CPU allocator refuses with ENOMEM; kill: the rank SIGKILLs itself, as the
kernel's OOM killer would), HOLD (seconds the other ranks spend in the failing step before
their next collective; 0 lets gloo notice the dead peer at once).
"""

import os
import signal
import time

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

DEVICES = int(os.environ.get("DEVICES", "2"))
FAIL_RANK = int(os.environ.get("FAIL_RANK", "1"))
FAIL_STEP = int(os.environ.get("FAIL_STEP", "3"))
HOW = os.environ.get("HOW", "alloc")
HOLD = float(os.environ.get("HOLD", "0"))


class Job(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(32, 2)

    def training_step(self, batch, idx):
        if idx == FAIL_STEP:
            if self.global_rank != FAIL_RANK:
                # NCCL ranks wait in the next collective; gloo's would fail at once, so the
                # other ranks stay in this step while the failing one dies.
                time.sleep(HOLD)
            elif HOW == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                torch.empty(1 << 47, dtype=torch.uint8).fill_(1)
        return self.layer(batch[0]).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    data = DataLoader(TensorDataset(torch.randn(256, 32)), batch_size=8)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=DEVICES,
        strategy="ddp",
        max_epochs=1,
        enable_progress_bar=False,
        enable_checkpointing=False,
        logger=False,
    )
    trainer.fit(Job(), data)
