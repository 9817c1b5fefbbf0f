"""pytorch-tabnet's TabNetClassifier on a tiny table (CPU), as its README sets one up: fit with
an eval_set, its per-epoch table, save_model at the end. `--resume` loads the saved model with
load_model and fits on from it (warm_start)."""

import sys

import oomshot

oomshot.arm()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from pytorch_tabnet.tab_model import TabNetClassifier  # noqa: E402

rng = np.random.default_rng(0)
X, y = rng.normal(size=(104, 16)).astype("float32"), rng.integers(0, 4, 104)
clf = TabNetClassifier(optimizer_fn=torch.optim.Adam, optimizer_params={"lr": 1e-2},
                       device_name="cpu", seed=0, n_d=8, n_a=8)  # fmt: skip
if "--resume" in sys.argv:
    clf.load_model("tabnet.zip")
clf.fit(X[:80], y[:80], eval_set=[(X[80:], y[80:])], max_epochs=3, patience=0,
        batch_size=8, virtual_batch_size=4, drop_last=False,
        warm_start="--resume" in sys.argv)  # fmt: skip
clf.save_model("tabnet")
