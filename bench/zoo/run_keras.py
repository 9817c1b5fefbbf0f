"""Keras 3 on its torch backend (CPU), as its guides set one up: a Sequential model, compile,
fit with validation data and its progress lines. Keras runs no torch.nn.Linear and steps no
torch optimizer, so oomshot's hooks never fire in it: here a Callback counts the steps and the
error is raised where a real one would be, in the backend's torch.matmul (forward: a training
batch after 12 steps; eval: the first validation batch). Keras filters its own frames out of the
traceback it prints (traceback_utils), which is what this run records."""

import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import keras  # noqa: E402
import keras.src.backend.torch.numpy as knp  # noqa: E402
import numpy as np  # noqa: E402
import oomshot  # noqa: E402

PHASE = os.environ.get("ZOO_PHASE", "")
AFTER = int(os.environ.get("ZOO_AFTER", "12"))
state = {"steps": 0, "mode": "train"}


class Count(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        state["mode"] = "train"

    def on_train_batch_end(self, batch, logs=None):
        state["steps"] += 1

    def on_test_batch_begin(self, batch, logs=None):
        state["mode"] = "eval"


def _ready() -> bool:
    if PHASE == "forward":
        return state["mode"] == "train" and state["steps"] >= AFTER
    return PHASE == "eval" and state["mode"] == "eval" and state["steps"] >= 1


class _Torch(oomshot._Torch):
    def matmul(self, *args, **kwargs):
        if _ready() and not oomshot._fired:
            oomshot._oom()
        return oomshot.torch.matmul(*args, **kwargs)


knp.torch = _Torch(lambda: False)
rng = np.random.default_rng(0)
x, y = rng.normal(size=(104, 16)).astype("float32"), rng.integers(0, 4, 104)
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(4)])  # fmt: skip
model.compile(optimizer="adam", metrics=["accuracy"],
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))  # fmt: skip
model.fit(x[:80], y[:80], batch_size=4, epochs=2, validation_data=(x[80:], y[80:]),
          callbacks=[Count()])  # fmt: skip
