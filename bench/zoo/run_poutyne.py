"""poutyne's Model on the zoo's tiny classifier (CPU), as its documentation sets one up:
fit_generator with a validation loader, its progress output, a ModelCheckpoint each epoch.
`--resume` loads the last checkpoint's weights with Model.load_weights, then trains on."""

import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from poutyne import Model, ModelCheckpoint  # noqa: E402
from tiny import loader, net  # noqa: E402

network = net()
model = Model(network, torch.optim.Adam(network.parameters(), lr=1e-3), "cross_entropy",
              batch_metrics=["accuracy"], device=torch.device("cpu"))  # fmt: skip
if "--resume" in sys.argv:
    print("Resuming from last.ckpt")
    model.load_weights("last.ckpt")
model.fit_generator(
    loader(80), loader(24), epochs=2 if "--resume" not in sys.argv else 3,
    callbacks=[ModelCheckpoint("last.ckpt")],
)  # fmt: skip
