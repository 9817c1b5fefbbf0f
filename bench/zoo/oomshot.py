"""Raise a CUDA out-of-memory error inside a framework's own code, at a chosen phase, on a CPU.

The zoo (bench/zoo/README.md) runs real frameworks on a tiny model; this module, imported first
by each run script (`import oomshot; oomshot.arm()`), hooks torch itself so the error surfaces
where a real one would: in a layer's forward, in autograd, in the optimizer, in torch.save or
torch.load, in a module's move to its device. The framework's frames above it, its progress
lines, its handling of the error (a retry, a shutdown message) are its own.

ZOO_PHASE chooses the phase; ZOO_AFTER the optimizer steps that complete first in a training
step's forward or backward (an evaluation's error comes at the first one after a step; a save's
at the first after a step).
"""

from __future__ import annotations

import os
import sys
import types

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

# PyTorch 2.x's own words for a failed allocation (c10/cuda/CUDACachingAllocator.cpp), with
# figures of an 80 GB card nearly full: a true OOM, nothing left to defragment.
MESSAGE = (
    "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.10 GiB "
    "of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.07 GiB memory "
    "in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.37 GiB is "
    "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
    "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
    "documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)

_steps = 0
_fired = False


def _oom() -> None:
    global _fired
    _fired = True
    raise torch.OutOfMemoryError(MESSAGE)


def _ready(after: int) -> bool:
    return not _fired and _steps >= after


def _leaf(module: torch.nn.Module) -> bool:
    return isinstance(module, (torch.nn.Linear, torch.nn.Conv2d))


def arm() -> None:
    phase = os.environ.get("ZOO_PHASE", "")
    after = int(os.environ.get("ZOO_AFTER", "12"))

    def count(_opt, _args, _kwargs):
        global _steps
        _steps += 1

    register_optimizer_step_post_hook(count)
    if phase == "forward":

        def pre(module, _inp):
            if _leaf(module) and module.training and torch.is_grad_enabled() and _ready(after):
                _oom()

        torch.nn.modules.module.register_module_forward_pre_hook(pre)
    elif phase == "eval":

        def pre_eval(module, _inp):
            evaluating = not module.training or not torch.is_grad_enabled()
            if _leaf(module) and evaluating and _ready(1):
                _oom()

        torch.nn.modules.module.register_module_forward_pre_hook(pre_eval)
    elif phase == "backward":
        # A hook on a layer's output runs inside autograd's backward, as its allocations do.
        def grad(_g):
            _oom()

        def out(module, _inp, output):
            if _leaf(module) and module.training and _ready(after):
                output.register_hook(grad)

        torch.nn.modules.module.register_module_forward_hook(out)
    elif phase == "optimizer":
        # Where a real first step runs out: Adam's state, made by torch.zeros_like in its
        # _init_group at its first step. Only adam's own name for torch is replaced: TorchScript
        # elsewhere must still see the real function.
        import torch.optim.adam as adam

        adam.torch = _Torch(lambda: sys._getframe(2).f_code.co_name == "_init_group")
    elif phase == "save":
        _wrap(torch, "save", lambda: _ready(1))
    elif phase == "resume":
        _wrap(torch, "load", lambda: os.environ.get("ZOO_RESUMING") == "1" and _ready(0))
    elif phase == "placement":
        if os.environ.get("ZOO_PLACEMENT") == "tensor":
            # Inside torch's own Module.to -> _apply -> convert, where a real move runs out (the
            # frames a real placement OOM shows; the frameworks recorded since issue 64).
            _wrap(torch.Tensor, "to", lambda: _ready(0) and _called_from("convert"))
        else:
            _wrap(torch.nn.Module, "to", lambda: _ready(0))


def _called_from(function: str) -> bool:
    return sys._getframe(3).f_code.co_name == function


def _wrap(owner, name: str, when) -> None:
    real = getattr(owner, name)

    def wrapped(*args, **kwargs):
        if when():
            _oom()
        return real(*args, **kwargs)

    wrapped.__name__ = real.__name__
    wrapped.__qualname__ = getattr(real, "__qualname__", real.__name__)
    setattr(owner, name, wrapped)


class _Torch(types.ModuleType):
    """torch as the optimizer's module sees it: the same, but its zeros_like runs out."""

    def __init__(self, when):
        super().__init__("torch")
        self._when = when

    def __getattr__(self, name):
        return getattr(torch, name)

    def zeros_like(self, *args, **kwargs):
        if self._when():
            _oom()
        return torch.zeros_like(*args, **kwargs)
