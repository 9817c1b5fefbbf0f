"""DeepCTR-Torch's DeepFM on a tiny click table (CPU), as its README sets one up: compile, fit
with a validation split (its Keras-like epoch lines), evaluated each epoch; the weights saved
with torch.save after each fit. `--resume` loads them with torch.load and fits on."""

import sys

import oomshot

oomshot.arm()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from deepctr_torch.inputs import DenseFeat, SparseFeat, get_feature_names  # noqa: E402
from deepctr_torch.models import DeepFM  # noqa: E402

rng = np.random.default_rng(0)
n = 100
data = {f"C{i}": rng.integers(0, 8, n) for i in range(3)}
data.update({f"I{i}": rng.normal(size=n).astype("float32") for i in range(4)})
columns = [SparseFeat(f"C{i}", 8, embedding_dim=4) for i in range(3)]
columns += [DenseFeat(f"I{i}", 1) for i in range(4)]
x = {name: data[name] for name in get_feature_names(columns)}
y = rng.integers(0, 2, n).astype("float32")
model = DeepFM(columns, columns, task="binary", device="cpu", dnn_hidden_units=(32, 16))
model.compile(torch.optim.Adam(model.parameters(), lr=1e-3), "binary_crossentropy",
              metrics=["acc"])  # fmt: skip
if "--resume" in sys.argv:
    print("Resuming from deepfm.pt")
    model.load_state_dict(torch.load("deepfm.pt"))
for _part in range(2):
    model.fit(x, y, batch_size=4, epochs=1, verbose=2, validation_split=0.2)
    torch.save(model.state_dict(), "deepfm.pt")
