"""fastai's Learner on the zoo's tiny data (CPU), as its documentation sets one up with plain
PyTorch DataLoaders and a PyTorch optimizer (OptimWrapper): fit with its progress table, the
model saved with learn.save after fit. `--resume` loads it with learn.load and fits on."""

import sys
from functools import partial

import oomshot

oomshot.arm()

import torch  # noqa: E402
from fastai.basics import DataLoaders, Learner, OptimWrapper, accuracy  # noqa: E402
from tiny import loader, net  # noqa: E402

dls = DataLoaders(loader(80), loader(24), device="cpu")
learn = Learner(dls, net(), loss_func=torch.nn.CrossEntropyLoss(), metrics=accuracy,
                opt_func=partial(OptimWrapper, opt=torch.optim.Adam), lr=1e-3)  # fmt: skip
if "--resume" in sys.argv:
    learn.load("model")
learn.fit(2)
learn.save("model")
