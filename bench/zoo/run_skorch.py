"""skorch's NeuralNetClassifier on the zoo's tiny data (CPU), as its documentation sets one up:
a validation split, its epoch table, the parameters saved with save_params after fit.
`--resume` initializes the net, loads them with load_params and fits on (warm_start)."""

import sys

import oomshot

oomshot.arm()

import torch  # noqa: E402
from skorch import NeuralNetClassifier  # noqa: E402
from skorch.dataset import ValidSplit  # noqa: E402
from tiny import net  # noqa: E402

g = torch.Generator().manual_seed(0)
X, y = torch.randn(100, 16, generator=g), torch.randint(0, 4, (100,), generator=g)
clf = NeuralNetClassifier(
    net, criterion=torch.nn.CrossEntropyLoss, optimizer=torch.optim.Adam, lr=1e-3,
    max_epochs=3, batch_size=8, train_split=ValidSplit(5), device="cpu",
    warm_start="--resume" in sys.argv,
)  # fmt: skip
if "--resume" in sys.argv:
    clf.initialize()
    clf.load_params(f_params="params.pt")
clf.fit(X, y)
clf.save_params(f_params="params.pt")
