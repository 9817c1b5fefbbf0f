"""Record the zoo: each framework run for real on a CPU with a tiny model, an out-of-memory
error raised inside its own code at each phase (oomshot.py), its output kept as it wrote it.

    python3 bench/zoo/record.py --python VENV/bin/python --cache DIR [--only FRAMEWORK]

VENV holds the frameworks (README.md says which versions and how it was made); DIR holds what
the runs read and the project never commits: timm's train.py from its repository, the tiny image
sets (made by this script). The logs go to tests/data/zoo/FRAMEWORK-PHASE.log with this
machine's paths replaced by neutral ones (PATHS below); nothing else is changed.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent.parent / "tests" / "data" / "zoo"
PHASES = ("forward", "backward", "optimizer", "eval", "save", "resume", "placement")
# Steps that complete before the error, by framework: enough for two of its progress lines.
AFTER = {"mmengine": 12, "composer": 12, "ignite": 12, "timm": 12, "ultralytics": 2}
# Frameworks recorded before any change for them and scored before and after (issue 64): runbook
# read none of their shapes when they were recorded.
UNSEEN = {"poutyne": 12, "tabnet": 12, "deepctr": 12, "monai": 12}
AFTER.update(UNSEEN)
# The four frameworks issue 64 measured on its own logs (fastai, Keras 3 on torch, skorch, a
# PyTorch Geometric loop): recorded here after the rules, scored once, never tuned on.
NAMED = {"fastai": 12, "keras": 12, "skorch": 12, "pyg": 12}
AFTER.update(NAMED)
# Each framework set up a second way (ZOO_VARIANT): the logs FRAMEWORK.VARIANT-PHASE.log were
# recorded after the reader was tuned on the first, and scored before any change (the measure).
VARIANTS = {"mmengine": "iter", "composer": "console", "ignite": "print", "ultralytics": "cls"}
# What does not record: the error raised does not end the run. (A run that ends without the
# error at all, as ultralytics' classifier does at forward, backward and save, stepping its
# optimizer once in its 2 epochs of 6 batches, writes no log either.)
SKIP = {
    ("ultralytics", "save"): "its run went on to the end past the error raised in torch.save; "
    "not looked into further",
}
# Keras steps its own optimizer and saves with its own format: only its forward and its
# evaluation are raised where a real error would be (run_keras.py).
SKIP.update(
    {("keras", p): "Keras runs no torch optimizer, save or load" for p in PHASES}
    | {("keras", "placement"): "Keras places its variables as it builds them"}
)
for _p in ("forward", "eval"):
    SKIP.pop(("keras", _p))
TIMM = [
    "--model", "resnet10t", "--num-classes", "2", "--img-size", "32", "-b", "2",
    "--epochs", "2", "--log-interval", "5", "--device", "cpu", "--no-prefetcher",
    "--workers", "0", "--opt", "adamw", "--lr", "1e-3", "--output", "output",
    "--checkpoint-hist", "2",
]  # fmt: skip


def command(framework: str, cache: Path, resume: bool, work: Path) -> list[str]:
    if framework == "timm":
        argv = [str(cache / "timm" / "train.py"), "--data-dir", str(cache / "images"), *TIMM]
        if resume:
            argv += ["--resume", sorted(glob.glob(f"{work}/output/*/last.pth.tar"))[-1]]
        # timm's train.py is a script of its repository, not of the package: run as __main__
        # behind the injector.
        return ["-c", "import oomshot,runpy,sys; oomshot.arm(); sys.argv=sys.argv[1:]; "
                "runpy.run_path(sys.argv[0], run_name='__main__')", *argv]  # fmt: skip
    argv = [str(HERE / f"run_{framework}.py")]
    if framework == "ultralytics":
        argv += [str(cache / "yolo" / "data.yaml"), str(cache / "cls")]
    return argv + (["--resume"] if resume else [])


def images(cache: Path, python: str) -> None:
    """The tiny data sets: 2 classes of 32 px pictures for timm, 64 px boxes for YOLO."""
    code = """
import os, random, sys
from PIL import Image
root = sys.argv[1]; random.seed(0)
for split, n in (("train", 40), ("validation", 12)):
    for c in range(2):
        d = f"{root}/images/{split}/class{c}"; os.makedirs(d, exist_ok=True)
        for i in range(n // 2):
            Image.new("RGB", (32, 32), (random.randrange(256), c * 200, i * 5)).save(f"{d}/{i}.png")
y = f"{root}/yolo"
for split, n in (("train", 48), ("val", 8)):
    os.makedirs(f"{y}/images/{split}", exist_ok=True); os.makedirs(f"{y}/labels/{split}", exist_ok=True)
    for i in range(n):
        Image.new("RGB", (64, 64), (random.randrange(256), 90, i * 5)).save(f"{y}/images/{split}/{i}.jpg")
        open(f"{y}/labels/{split}/{i}.txt", "w").write(f"{i % 2} 0.5 0.5 0.3 0.4\\n")
for split, n in (("train", 24), ("val", 8)):
    for c in range(2):
        d = f"{root}/cls/{split}/class{c}"; os.makedirs(d, exist_ok=True)
        for i in range(n // 2):
            Image.new("RGB", (32, 32), (random.randrange(256), c * 200, i * 9)).save(f"{d}/{i}.png")
open(f"{y}/data.yaml", "w").write(f"path: {y}\\ntrain: images/train\\nval: images/val\\nnames:\\n  0: a\\n  1: b\\n")
"""
    subprocess.run([python, "-c", code, str(cache)], check=True)


def run(python: str, name: str, phase: str, cache: Path, work: Path) -> str:
    framework, _, variant = name.partition(".")
    env = dict(os.environ, PYTHONPATH=str(HERE), ZOO_AFTER=str(AFTER[framework]))
    env["ZOO_VARIANT"] = variant
    if framework in UNSEEN or framework in NAMED:
        env["ZOO_PLACEMENT"] = "tensor"
    env.pop("ZOO_RESUMING", None)
    if phase == "resume":  # a first run to its end writes the checkpoint the second resumes
        subprocess.run([python, *command(framework, cache, False, work)], cwd=work,
                       env=dict(env, ZOO_PHASE=""), capture_output=True, timeout=600)  # fmt: skip
        env.update(ZOO_RESUMING="1")
    p = subprocess.run(
        [python, *command(framework, cache, phase == "resume", work)],
        cwd=work, env=dict(env, ZOO_PHASE=phase), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, timeout=600,
    )  # fmt: skip
    return p.stdout.decode("utf-8", "replace")


def neutral(text: str, python: str, cache: Path, work: Path) -> str:
    venv = str(Path(python).absolute().parent.parent)
    system = str(Path(sys.base_prefix).resolve())
    for mine, theirs in (
        (str(work), "/home/user/run"),
        (str(cache), "/home/user/data"),
        (str(HERE), "/home/user/zoo"),
        (venv, "/home/user/venv"),
        (system, "/usr/local"),
        (str(Path.home()), "/home/user"),
    ):
        text = text.replace(mine, theirs)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="the zoo environment's python")
    ap.add_argument("--cache", required=True, type=Path, help="what the runs read")
    ap.add_argument("--only", action="append", help="one framework (repeatable)")
    ap.add_argument("--phase", action="append", help="one phase (repeatable)")
    a = ap.parse_args()
    cache = a.cache.resolve()
    if not (cache / "cls").exists():
        images(cache, a.python)
    OUT.mkdir(parents=True, exist_ok=True)
    names = list(AFTER) + [f"{f}.{v}" for f, v in VARIANTS.items()]
    for framework in a.only or names:
        for phase in a.phase or PHASES:
            if (framework, phase) in SKIP:
                print(f"{framework}-{phase}: not recorded ({SKIP[framework, phase]})")
                continue
            work = Path(tempfile.mkdtemp(prefix="zoo-"))
            try:
                text = run(a.python, framework, phase, cache, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            out = OUT / f"{framework}-{phase}.log"
            if "OutOfMemoryError" not in text:  # the run never reached the phase: no record
                print(f"{out.name}: not recorded (the run ended without the error)")
                continue
            out.write_text(neutral(text, a.python, cache, work.resolve()))
            print(f"{out.name}: {len(text.splitlines())} lines, OOM {'OutOfMemoryError' in text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
