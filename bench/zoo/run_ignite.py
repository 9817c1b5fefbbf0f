"""ignite's supervised trainer on a tiny classifier (CPU), as its examples set one up: its
ProgressBar, its logger, an evaluator after each epoch, a Checkpoint after each epoch.
`--resume` loads the last checkpoint with Checkpoint.load_objects."""

import glob
import os
import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from ignite.engine import Events, create_supervised_evaluator, create_supervised_trainer  # noqa: E402
from ignite.handlers import Checkpoint, DiskSaver, ProgressBar  # noqa: E402
from ignite.metrics import Accuracy, Loss  # noqa: E402
from ignite.utils import setup_logger  # noqa: E402
from tiny import loader, net  # noqa: E402

model = net().to("cpu")
train, val = loader(80), loader(24)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss = torch.nn.CrossEntropyLoss()
trainer = create_supervised_trainer(model, optimizer, loss, device="cpu")
trainer.logger = setup_logger("trainer")
evaluator = create_supervised_evaluator(
    model, metrics={"accuracy": Accuracy(), "loss": Loss(loss)}, device="cpu"
)
evaluator.logger = setup_logger("evaluator")
if os.environ.get("ZOO_VARIANT") == "print":
    # ZOO_VARIANT=print: the loss printed every 5 iterations, as ignite's examples do.
    @trainer.on(Events.ITERATION_COMPLETED(every=5))
    def log_training_loss(engine):
        e = engine.state
        print(f"Epoch[{e.epoch}] Iteration[{e.iteration}/{len(train)}] Loss: {e.output:.2f}")

else:
    ProgressBar(persist=True).attach(trainer, output_transform=lambda x: {"loss": x})


@trainer.on(Events.EPOCH_COMPLETED)
def validate(engine):
    metrics = evaluator.run(val).metrics
    print(
        f"Validation Results - Epoch: {engine.state.epoch}  "
        f"Avg accuracy: {metrics['accuracy']:.2f} Avg loss: {metrics['loss']:.2f}"
    )


to_save = {"model": model, "optimizer": optimizer, "trainer": trainer}
saver = Checkpoint(to_save, DiskSaver("checkpoints", require_empty=False), n_saved=2)
trainer.add_event_handler(Events.EPOCH_COMPLETED, saver)
if "--resume" in sys.argv:
    last = sorted(glob.glob("checkpoints/checkpoint_*.pt"))[-1]
    print(f"Resuming from {last}")
    Checkpoint.load_objects(to_load=to_save, checkpoint=last)
trainer.run(train, max_epochs=2 if "--resume" not in sys.argv else 3)
