"""mmengine's Runner on a tiny classifier (CPU): train 2 epochs of 20 iterations, validate after
each, checkpoint after each. `--resume` resumes from the work dir's last checkpoint."""

import os
import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from mmengine.evaluator import BaseMetric  # noqa: E402
from mmengine.model import BaseModel  # noqa: E402
from mmengine.runner import Runner  # noqa: E402
from torch.utils.data import Dataset  # noqa: E402

ITER = os.environ.get("ZOO_VARIANT") == "iter"


class Tiny(BaseModel):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.head = torch.nn.Linear(32, 4)

    def forward(self, inputs, labels, mode="tensor"):
        x = self.head(self.body(inputs))
        if mode == "loss":
            return {"loss": torch.nn.functional.cross_entropy(x, labels)}
        if mode == "predict":
            return x.argmax(1), labels
        return x


class Points(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 16, generator=g)
        self.y = torch.randint(0, 4, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"inputs": self.x[i], "labels": self.y[i]}


class Accuracy(BaseMetric):
    def process(self, data_batch, data_samples):
        pred, gt = data_samples
        self.results.append(((pred == gt).sum().item(), len(gt)))

    def compute_metrics(self, results):
        return {"accuracy": 100 * sum(r[0] for r in results) / sum(r[1] for r in results)}


def loader(n):
    return dict(
        dataset=Points(n),
        sampler=dict(type="DefaultSampler", shuffle=True),
        collate_fn=dict(type="default_collate"),
        batch_size=4,
    )


runner = Runner(
    model=Tiny(),
    work_dir="work_dirs/tiny",
    train_dataloader=loader(80),
    optim_wrapper=dict(optimizer=dict(type="AdamW", lr=0.001)),
    # ZOO_VARIANT=iter: counted in iterations, as mmdetection's and mmsegmentation's
    # iteration-based schedules are ("Iter(train) [  5/40]").
    train_cfg=dict(by_epoch=False, max_iters=40, val_interval=20)
    if ITER
    else dict(by_epoch=True, max_epochs=2, val_interval=1),
    log_processor=dict(by_epoch=not ITER),
    val_dataloader=loader(24),
    val_cfg=dict(),
    val_evaluator=dict(type=Accuracy),
    default_hooks=dict(
        logger=dict(type="LoggerHook", interval=5),
        checkpoint=dict(type="CheckpointHook", interval=20 if ITER else 1, by_epoch=not ITER),
    ),
    resume="--resume" in sys.argv,
    randomness=dict(seed=0),
)
runner.train()
