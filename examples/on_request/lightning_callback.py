"""Checkpoint on request for a Lightning job (Lightning 2.x): runbook's prevention asks through
the file every rank polls (runbook.instrument), never a signal; every rank saves the one step
runbook names and holds until the job is cancelled or the request withdrawn.

    trainer = Trainer(..., callbacks=[CheckpointOnRequest()])

Asked at accumulation boundaries only, where `global_step` is the optimizer step just done;
`trainer.save_checkpoint` is collective (every rank takes part), and every rank says it wrote.
Run for real by tests/unit/test_on_request_lightning.py.
"""

from __future__ import annotations

from lightning.pytorch.callbacks import Callback

from runbook import instrument


class CheckpointOnRequest(Callback):
    def __init__(self):
        instrument.checkpoint_on()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if (batch_idx + 1) % trainer.accumulate_grad_batches:
            return
        step = trainer.global_step
        if instrument.checkpoint_requested(step):
            path = f"{trainer.default_root_dir}/checkpoints/step_{step}.ckpt"
            trainer.save_checkpoint(path)  # every rank takes part
            instrument.checkpoint_written(step, path)
