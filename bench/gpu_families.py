"""Record the fit's truth on several model families (needs one CUDA GPU; run where one is lent).

For each family (a CNN, a vision transformer, a GPT-2 decoder, a Llama-style decoder: each built
from its config in code, no download), the largest micro-batch that runs two real training
steps (bf16 autocast, its usual optimizer), and a real CUDA OOM at twice it: what the fit
(`runbook diagnose --micro-batch 2N`) is checked against by bench/gpu_fit.py and the tests.

How the largest is found, cheaply and then for real:
1. one process per family (`--child search`) makes the optimizer's state with one small step,
   then tries micro-batches in place (every try's tensors freed, the cache emptied between):
   two small ones, the line through their peaks to guess where the card ends, then bisection
   to within 1% (each try's allocation peak and outcome in search-<family>.json);
2. fresh processes (a clean allocator, as a job starts) find the truth from there: two steps
   at the largest that ran in place (fit-<family>-m<N>.log), 7% lower until one runs, then
   bisection to within 1% (fresh-<family>.json), and twice the largest that ran fresh: the OOM
   the fit starts from. Each step prints runbook.instrument's memory line.

    python3 bench/gpu_families.py --out DIR [--only FAMILY ...] [--budget SECONDS]

DIR/manifest.json: each process's command, exit status and seconds, and the GPU and versions.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.gpu_record import _DEADLINE, _instrumented, _me_in, _run, _shell, _torch  # noqa: E402

# Where the models run: a CUDA GPU; "cpu" only to check this script's own code on a machine
# without one (GPU_FAMILIES_DEVICE=cpu ... --child train FAMILY, nothing recorded).
DEV = os.environ.get("GPU_FAMILIES_DEVICE", "cuda")

# family: (what it is, the first micro-batch the search measures)
FAMILIES = {
    "gpt2_medium": ("transformers GPT-2 medium (24 layers, d=1024), sequence 1024, AdamW", 4),
    "resnet50": ("torchvision ResNet-50, 224x224 images, 1000 classes, SGD with momentum", 16),
    "llama_1b": ("transformers Llama (22 layers, d=2048, GQA 32/4), sequence 2048, AdamW", 2),
    "vit_b16": ("torchvision ViT-B/16, 224x224 images, 1000 classes, AdamW", 16),
}


def build(torch, family: str):
    """(model on the GPU, optimizer, batch(m) -> inputs, loss(model, inputs) -> loss)."""
    torch.manual_seed(0)
    f = torch.nn.functional
    if family in ("resnet50", "vit_b16"):
        import torchvision

        with torch.device(DEV):
            model = getattr(torchvision.models, family.replace("b16", "b_16"))(num_classes=1000)
        if family == "resnet50":
            opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        else:
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def batch(m):
            return (
                torch.randn(m, 3, 224, 224, device=DEV),
                torch.randint(0, 1000, (m,), device=DEV),
            )

        def loss(model, inputs):
            return f.cross_entropy(model(inputs[0]), inputs[1])

        return model, opt, batch, loss
    import transformers as tf

    if family == "gpt2_medium":
        cfg, seq = tf.GPT2Config(n_layer=24, n_embd=1024, n_head=16, n_positions=1024), 1024
        cls = tf.GPT2LMHeadModel
    else:
        cfg = tf.LlamaConfig(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
            vocab_size=32000,
            max_position_embeddings=2048,
        )
        cls, seq = tf.LlamaForCausalLM, 2048
    with torch.device(DEV):
        model = cls(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def batch(m):
        return torch.randint(0, cfg.vocab_size, (m, seq), device=DEV)

    def loss(model, ids):
        return model(input_ids=ids, labels=ids).loss

    return model, opt, batch, loss


def _step(torch, model, opt, batch, loss, m: int) -> float:
    inputs = batch(m)
    with torch.autocast(DEV, dtype=torch.bfloat16):
        value = loss(model, inputs)
    value.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return value.item()


def child_train(torch, family: str, m: int, steps: int) -> None:
    """`steps` training steps at micro-batch m, instrument's line after each."""
    model, opt, batch, loss = build(torch, family)
    instrument = _instrumented(torch, model)
    params = sum(p.numel() for p in model.parameters())
    print(f"params={params} family={family} micro_batch={m}", flush=True)
    for n in range(1, steps + 1):
        with instrument.watch():
            value = _step(torch, model, opt, batch, loss, m)
        print(f"step {n} micro_batch {m} loss {value:.4f}", flush=True)
        instrument.step(n, every=1)


def _try(torch, step_at, opt, m: int) -> dict:
    """One training step at m in this process: its allocation peak, and whether it ran."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    start = time.monotonic()
    try:
        step_at(m)
        torch.cuda.synchronize()
        ran = True
    except torch.OutOfMemoryError:
        ran = False
        opt.zero_grad(set_to_none=True)  # what a backward cut short left behind
    peak = torch.cuda.max_memory_allocated()
    gc.collect()
    torch.cuda.empty_cache()
    return {"m": m, "ran": ran, "peak": peak, "s": round(time.monotonic() - start, 2)}


def next_try(tries: list[dict], guess: int) -> int | None:
    """The next micro-batch to try, or None when the edge is known to within 1% (or one):
    the guess first, then 10% steps up from what ran, then bisection."""
    ran = [t["m"] for t in tries if t["ran"]]
    out = [t["m"] for t in tries if not t["ran"]]
    lo, hi = max(ran, default=0), min(out, default=None)
    if hi is None:
        return max(guess, lo + 1) if guess not in {t["m"] for t in tries} else int(lo * 1.1) + 1
    if hi - lo <= max(1, lo // 100):
        return None
    return (lo + hi) // 2


def guess_edge(tries: list[dict], reachable: int) -> int:
    """Where the line through the first two tries' peaks meets what PyTorch can reach."""
    (a, pa), (b, pb) = [(t["m"], t["peak"]) for t in tries[:2]]
    per = max((pb - pa) / (b - a), 1.0)
    return max(b + 1, int((reachable - (pa - per * a)) / per))


def child_search(torch, family: str, out: Path) -> None:
    model, opt, batch, loss = build(torch, family)
    params = sum(p.numel() for p in model.parameters())
    first = FAMILIES[family][1]

    def step_at(m):
        _step(torch, model, opt, batch, loss, m)

    _step(torch, model, opt, batch, loss, 1)  # the optimizer's state, as after a job's first step
    tries = [_try(torch, step_at, opt, first), _try(torch, step_at, opt, 2 * first)]
    free, total = torch.cuda.mem_get_info()
    reachable = free + torch.cuda.memory_reserved()
    # A first try that ran out has no peak to draw a line through: bisect below it instead.
    guess = guess_edge(tries, reachable) if all(t["ran"] for t in tries) else first
    while len(tries) < 16:
        m = next_try(tries, guess)
        if m is None:
            break
        tries.append(_try(torch, step_at, opt, m))
        print(json.dumps(tries[-1]), flush=True)
    largest = max((t["m"] for t in tries if t["ran"]), default=None)
    summary = {
        "family": family,
        "what": FAMILIES[family][0],
        "params": params,
        "total": total,
        "reachable": reachable,
        "guess": guess,
        "largest_ran": largest,
        "smallest_out": min((t["m"] for t in tries if not t["ran"]), default=None),
        "tries": tries,
    }
    (out / f"search-{family}.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary), flush=True)


def record(out: Path, family: str, env: dict, manifest: list, steps: int) -> None:
    rc = _run(out, f"search-{family}", _me_in(__file__, "--child", "search", family), env, manifest)
    path = out / f"search-{family}.json"
    if rc != 0 or not path.exists():
        return
    found = json.loads(path.read_text())

    def fresh(m: int) -> bool:
        argv = _me_in(__file__, "--child", "train", family, "--micro-batch", str(m))
        return _run(out, f"fit-{family}-m{m}", [*argv, "--steps", str(steps)], env, manifest) == 0

    # In place, the optimizer's state was made beside nothing; a fresh process makes it at the
    # end of step 1, among the cached blocks of step 1's activations, and may run out at step 2
    # where the in-place try ran (seen on an H200: GPT-2 at 49, Llama at 23). The fresh runs are
    # the truth: 7% steps down until one runs, then bisection to within 1%.
    lo, hi = 0, found["smallest_out"]
    m = found["largest_ran"]
    while m and not lo:
        if fresh(m):
            lo = m
        else:
            hi, m = m, int(m * 0.93)  # 0 once micro-batch 1 ran out: nothing runs
    while lo and hi and hi - lo > max(1, lo // 100):
        m = (lo + hi) // 2
        lo, hi = (m, hi) if fresh(m) else (lo, m)
    if hi and not (out / f"fit-{family}-m{hi}.log").exists():
        fresh(hi)
    if lo:
        fresh(2 * lo)
    (out / f"fresh-{family}.json").write_text(json.dumps({"largest_ran": lo, "smallest_out": hi}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for the recordings")
    ap.add_argument("--only", nargs="*", default=[], help=f"families: {', '.join(FAMILIES)}")
    ap.add_argument("--steps", type=int, default=2, help="training steps of each fresh run")
    ap.add_argument("--budget", type=float, default=300, help="seconds after which none starts")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--micro-batch", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        torch = _torch() if DEV == "cuda" else __import__("torch")
        what, family = a.child
        if what == "search":
            child_search(torch, family, Path.cwd())
        else:
            child_train(torch, family, a.micro_batch, a.steps)
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    unknown = [f for f in a.only if f not in FAMILIES]
    if unknown:
        ap.error(f"unknown families {unknown}: expected some of {', '.join(FAMILIES)}")
    _torch()
    _DEADLINE[0] = time.monotonic() + a.budget
    a.out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", RUNBOOK_OOM_DUMP_DIR=str(a.out))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        env.pop(var, None)
    manifest: list[dict] = []
    versions = (
        "import sys, torch, torchvision, transformers; print(sys.version); "
        "print(torch.__version__, torch.version.cuda, torchvision.__version__, "
        "transformers.__version__); print(torch.cuda.get_device_name(0))"
    )
    _shell(a.out, "versions", [sys.executable, "-c", versions], manifest)
    for family in a.only or FAMILIES:
        record(a.out, family, env, manifest, a.steps)
    (a.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
