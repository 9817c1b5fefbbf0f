"""Composer's Trainer on a tiny classifier (CPU): 2 epochs of 20 batches, evaluation and a
checkpoint after each epoch, its progress bars as by default. `--resume` loads the last one."""

import os
import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from composer import Trainer  # noqa: E402
from composer.models import ComposerClassifier  # noqa: E402
from tiny import loader, net  # noqa: E402

model = ComposerClassifier(net(), num_classes=4)
trainer = Trainer(
    model=model,
    train_dataloader=loader(80),
    eval_dataloader=loader(24),
    optimizers=torch.optim.AdamW(model.parameters(), lr=1e-3),
    max_duration="2ep",
    eval_interval="1ep",
    device="cpu",
    run_name="tiny",
    save_folder="checkpoints",
    save_interval="1ep",
    save_overwrite=True,
    load_path="checkpoints/latest-rank0.pt" if "--resume" in sys.argv else None,
    seed=0,
    # ZOO_VARIANT=console: the console logger every 5 batches instead of the progress bars.
    **(
        dict(log_to_console=True, console_log_interval="5ba", progress_bar=False)
        if os.environ.get("ZOO_VARIANT") == "console"
        else {}
    ),
)
trainer.fit()
