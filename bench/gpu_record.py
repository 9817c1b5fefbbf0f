"""Record real GPU outputs for runbook's tests (needs one CUDA GPU; run where one is lent).

What a GPU-less machine cannot make, made for real and kept as recorded test cases:
- the node probe's real answer (runbook.evidence.gpu_health.PROBE_SCRIPT, query and table mode)
  with a co-tenant process holding memory, and `nvidia-smi -q` whole;
- a CUDA OOM of each kind PyTorch prints: the caching allocator's (a plain over-ask; a card held
  by another process; fragmentation: 6 MiB blocks freed two in three), expandable segments,
  the cudaMallocAsync backend, a per-process memory fraction, and what cuBLAS says on a full card;
- OOMs in each phase, through real code with runbook.instrument installed (its dump and its
  lines): Adam's state at the first optimizer.step, an evaluation outside no_grad, a torch.load
  of a checkpoint saved from the GPU, and a leak (a loss kept with its graph every step);
- the fit (#30): one small transformer built in code, trained a few steps at rising micro-batches
  (instrument's per-step line, its peak at exit) until one runs out; what it measured at each
  micro-batch is what runbook's fit from the OOM is checked against; and the same model beside
  a co-tenant holding 24 GiB (`fit_cotenant`), where the memory outside the pool is another's;
- when and where (#33) on the fit's model: variable-length batches with one far longer at the
  end (`trend_varlen`), and an evaluation under no_grad at its own batch, which runs out
  (`phase_eval_batch`), and at half that batch, which the halve_eval_batch rung would run
  (`phase_eval_batch_half`); a healthy Lightning run's DeviceStatsMonitor series through both
  of its loggers (`lightning_warmup`: a warm-up, never a leak); transformers' Trainer keeping
  the evaluation's predictions on the GPU, and the same with eval_accumulation_steps=1
  (`hf_eval_accumulation`, `hf_eval_accumulation_1`).

    python3 bench/gpu_record.py --out DIR [--only NAME ...]

Each case runs as its own process (a fresh allocator and CUDA context), its stdout and stderr
kept whole in DIR/<case>.log, with DIR/manifest.json: the command, exit status, seconds, and
the GPU, driver and torch that made them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GIB = 2**30
MIB = 2**20


# ---------------------------------------------------------------- children: one case each


def _torch():
    import torch

    if not torch.cuda.is_available():
        sys.exit("gpu_record: this case needs a CUDA GPU and torch sees none")
    return torch


def _fill(torch, leave_gib: float) -> list:
    """Hold memory until about `leave_gib` GiB of the card stay free."""
    held = []
    for chunk in (GIB, 64 * MIB, 2 * MIB):
        while torch.cuda.mem_get_info()[0] - chunk > leave_gib * GIB:
            try:
                held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
            except torch.OutOfMemoryError:
                break
    return held


def case_plain(torch):
    torch.empty(int(1.5 * torch.cuda.mem_get_info()[1]), dtype=torch.uint8, device="cuda")


def case_after_some(torch):
    """Most of the card allocated, then one ask more than what is left."""
    held = [torch.empty(GIB, dtype=torch.uint8, device="cuda") for _ in range(50)]
    free = torch.cuda.mem_get_info()[0]
    held.append(torch.empty(free + 2 * GIB, dtype=torch.uint8, device="cuda"))


def case_fraction(torch):
    torch.cuda.set_per_process_memory_fraction(0.25)
    held = [torch.empty(GIB, dtype=torch.uint8, device="cuda") for _ in range(10)]
    held.append(torch.empty(15 * GIB, dtype=torch.uint8, device="cuda"))


def case_fragmentation(torch):
    """6 MiB tensors come from 20 MiB segments, three to a segment; freeing two of each three
    leaves every segment in use, so nothing can be given back and a large ask fails with most
    of the reserved memory unallocated."""
    blocks = []
    try:
        while True:
            blocks.append(torch.empty(6 * MIB, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        pass
    kept = blocks[::3]
    del blocks
    print(
        f"kept {len(kept)} blocks of 6 MiB; allocated {torch.cuda.memory_allocated() / GIB:.2f} "
        f"GiB, reserved {torch.cuda.memory_reserved() / GIB:.2f} GiB",
        flush=True,
    )
    torch.empty(4 * GIB, dtype=torch.uint8, device="cuda")


def case_cublas(torch):
    """A card filled to the last MiBs, then the first matrix product (cuBLAS's handle and
    workspace are made at the first use)."""
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    held = _fill(torch, 0)
    print(f"held {len(held)} blocks, free {torch.cuda.mem_get_info()[0] / MIB:.0f} MiB", flush=True)
    print((a @ a).sum().item())


def case_holder(torch):
    """The co-tenant: holds 24 GiB until killed."""
    held = torch.empty(24 * GIB, dtype=torch.uint8, device="cuda")
    print(f"holder pid={os.getpid()} holds {held.numel() / GIB:.0f} GiB", flush=True)
    time.sleep(600)


def case_cotenant(torch):
    """Another process holds memory on the card (case_holder); this one asks for more than is
    left."""
    held = [torch.empty(GIB, dtype=torch.uint8, device="cuda") for _ in range(20)]
    free = torch.cuda.mem_get_info()[0]
    held.append(torch.empty(free + GIB, dtype=torch.uint8, device="cuda"))


def _instrumented(torch, model=None):
    from runbook import instrument

    instrument.install(model=model)
    return instrument


def case_optimizer_state(torch):
    """Forward and backward fit; Adam's two moments, made at the first step, do not."""
    layers = [torch.nn.Linear(8192, 8192, bias=False) for _ in range(12)]
    model = torch.nn.Sequential(*layers).cuda()
    instrument = _instrumented(torch, model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    params = sum(p.numel() for p in model.parameters()) * 4
    x = torch.randn(64, 8192, device="cuda")
    model(x).float().pow(2).mean().backward()
    ballast = _fill(torch, params * 1.2 / GIB)
    print(f"step 0: ballast {len(ballast)} blocks; optimizer step next", flush=True)
    with instrument.watch():
        opt.step()


def case_eval_graph(torch):
    """Training fits; the evaluation runs a larger batch outside torch.no_grad()."""
    # (The 2026-11-26 recording stacked Linear(4096, 16384) eight times: a shape error.)
    model = torch.nn.Sequential(
        *[
            torch.nn.Sequential(
                torch.nn.Linear(4096, 16384), torch.nn.GELU(), torch.nn.Linear(16384, 4096)
            )
            for _ in range(4)
        ]
    ).cuda()
    instrument = _instrumented(torch, model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def train_step(batch):
        loss = model(batch).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    def evaluate(batches):
        total = 0.0
        for batch in batches:
            total += model(batch).float().mean()  # no torch.no_grad(): every graph is kept
        return total

    for step in range(1, 6):
        loss = train_step(torch.randn(256, 4096, device="cuda"))
        print(f"step {step} loss {loss:.4f}", flush=True)
        instrument.step(step, every=1)
    print("Evaluating", flush=True)
    with instrument.watch():
        evaluate(torch.randn(4096, 4096, device="cuda") for _ in range(200))


def case_load(torch):
    """A checkpoint saved from the GPU and loaded without map_location: its tensors go back to
    the GPU they were saved from, which other work has filled."""
    path = "/tmp/gpu_record-ckpt.pt"
    state = {f"w{i}": torch.randn(256, MIB, device="cuda") for i in range(8)}  # 8 GiB
    torch.save(state, path)
    del state
    torch.cuda.empty_cache()
    instrument = _instrumented(torch)
    ballast = _fill(torch, 4)
    print(f"Loading checkpoint {path} (ballast {len(ballast)} blocks)", flush=True)
    try:
        with instrument.watch():
            torch.load(path)
    finally:
        os.unlink(path)


def case_leak(torch):
    """A loss kept with its graph across steps: every step's activations stay allocated."""
    model = torch.nn.Sequential(
        *[torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU()) for _ in range(16)]
    ).cuda()
    instrument = _instrumented(torch, model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    running = 0.0
    for step in range(1, 10_000):
        with instrument.watch():
            loss = model(torch.randn(1024, 4096, device="cuda")).float().pow(2).mean()
            running = running + loss  # the bug: the graph of every step is kept
            loss.backward(retain_graph=True)
            opt.step()
            opt.zero_grad(set_to_none=True)
        if step % 5 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
        instrument.step(step, every=5)


_VOCAB, _SEQ, _D = 32000, 1024, 1024


def _lm(torch):
    """The fit's model: a 12-layer transformer (d=1024, 16 heads, ffn 4096, 32k vocabulary),
    216.7 M parameters, on the GPU, with runbook.instrument installed."""
    torch.manual_seed(0)

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(_VOCAB, _D)
            layer = torch.nn.TransformerEncoderLayer(
                _D, 16, 4 * _D, dropout=0.0, batch_first=True, norm_first=True
            )
            self.body = torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)
            self.head = torch.nn.Linear(_D, _VOCAB, bias=False)

        def forward(self, tokens):
            return self.head(self.body(self.embed(tokens), is_causal=False))

    model = LM().cuda()
    return model, _instrumented(torch, model)


def _lm_step(torch, model, opt, instrument, tokens) -> float:
    """One training step of _lm: bf16 autocast forward, loss, backward, AdamW."""
    with instrument.watch(), torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, _VOCAB), tokens.view(-1))
    with instrument.watch():
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return loss.item()


def case_train(torch, micro_batch: int, steps: int):
    """The fit's model (_lm), sequence 1024, `steps` steps at `micro_batch`."""
    model, instrument = _lm(torch)
    params = sum(p.numel() for p in model.parameters())
    print(f"params={params} micro_batch={micro_batch} seq={_SEQ}", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(1, steps + 1):
        tokens = torch.randint(0, _VOCAB, (micro_batch, _SEQ), device="cuda")
        loss = _lm_step(torch, model, opt, instrument, tokens)
        print(f"step {step} micro_batch {micro_batch} loss {loss:.4f}", flush=True)
        instrument.step(step, every=1)


def case_varlen(torch):
    """Variable-length batches (#33, the longest batch): _lm at micro-batch 8, each step's
    sequence length drawn from 128..1024 (seeded), instrument's line every step; at step 41 one
    batch is 64 times the usual longest (a sample that packing or truncation let through)."""
    import random

    model, instrument = _lm(torch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    rng = random.Random(1)
    for step in range(1, 42):
        seq = 65536 if step == 41 else rng.randrange(128, 1025, 64)
        tokens = torch.randint(0, _VOCAB, (8, seq), device="cuda")
        print(f"step {step} batch 8x{seq} tokens", flush=True)
        loss = _lm_step(torch, model, opt, instrument, tokens)
        print(f"step {step} loss {loss:.4f}", flush=True)
        instrument.step(step, every=1)


def case_eval_batch(torch):
    """The evaluation's own batch (#33, halve_eval_batch): _lm trains at micro-batch 8, then
    evaluates under torch.no_grad() at its own batch (GPU_RECORD_EVAL_BATCH, 256 by default,
    as HF's per_device_eval_batch_size is set apart from the training's)."""
    eval_batch = int(os.environ.get("GPU_RECORD_EVAL_BATCH", "256"))
    model, instrument = _lm(torch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(1, 6):
        tokens = torch.randint(0, _VOCAB, (8, _SEQ), device="cuda")
        loss = _lm_step(torch, model, opt, instrument, tokens)
        print(f"step {step} loss {loss:.4f}", flush=True)
        instrument.step(step, every=1)
    print(f"***** Running Evaluation *****\n  Batch size = {eval_batch}", flush=True)
    model.eval()
    total = 0.0
    with torch.no_grad(), instrument.watch():
        for _ in range(3):
            tokens = torch.randint(0, _VOCAB, (eval_batch, _SEQ), device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(tokens)
            total += torch.nn.functional.cross_entropy(
                logits.float().view(-1, _VOCAB), tokens.view(-1)
            ).item()
    print(f"eval_loss {total / 3:.4f}", flush=True)


def case_push_oom(torch):
    """A real OOM nobody catches, runbook.instrument installed with RUNBOOK_HOOK_URL set: its
    excepthook dumps, prints the traceback, then POSTs the job id (the parent's recorder)."""
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).cuda()
    _instrumented(torch, model)
    held = _fill(torch, 1)
    print(f"step 1: {len(held)} blocks of ballast; forward next", flush=True)
    model(torch.randn(65536, 4096, device="cuda"))


def case_lightning_stats(torch):
    """Lightning's own loop with DeviceStatsMonitor and a CSVLogger (what it writes, and when),
    on a real leak: training_step keeps each step's logits on the GPU, until the OOM."""
    import lightning as L  # noqa: N812 (Lightning's own spelling)
    from lightning.pytorch.callbacks import DeviceStatsMonitor
    from lightning.pytorch.loggers import CSVLogger

    class Leaky(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU())
            self.head = torch.nn.Linear(4096, 16384)
            self.kept = []

        def training_step(self, batch, batch_idx):
            x = torch.randn(2048, 1024, device=self.device)
            logits = self.head(self.body(x))
            self.kept.append(logits)  # the bug: every step's logits (128 MiB) stay on the GPU
            loss = logits.float().pow(2).mean()
            self.log("train_loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=1e-6)

    _lightning_fit(
        torch,
        Leaky(),
        max_steps=5000,
        callbacks=[DeviceStatsMonitor()],
        logger=CSVLogger("lightning_logs", name="stats"),
        log_every_n_steps=10,
    )


def case_lightning_warmup(torch):
    """Lightning's own loop with DeviceStatsMonitor on a healthy run (#33: a warm-up must never
    read as a leak): AdamW's state appears at the first optimizer step, then nothing grows; a
    CSVLogger and a TensorBoardLogger both keep the series, every 10 steps, for 300 steps."""
    import lightning as L  # noqa: N812 (Lightning's own spelling)
    from lightning.pytorch.callbacks import DeviceStatsMonitor
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

    class Healthy(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(4096, 16384), torch.nn.GELU(), torch.nn.Linear(16384, 4096)
            )

        def training_step(self, batch, batch_idx):
            x = torch.randn(1024, 4096, device=self.device)
            loss = self.net(x).float().pow(2).mean()
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-5)

    _lightning_fit(
        torch,
        Healthy(),
        max_steps=300,
        callbacks=[DeviceStatsMonitor()],
        logger=[
            CSVLogger("lightning_logs", name="warmup"),
            TensorBoardLogger("lightning_logs", name="warmup_tb"),
        ],
        log_every_n_steps=10,
        enable_progress_bar=False,
    )


def _lightning_fit(torch, model, **trainer_args) -> None:
    """Lightning's own Trainer on the one GPU, over a dataset of placeholder rows (each
    training_step makes its batch on the GPU)."""
    import lightning as L  # noqa: N812 (Lightning's own spelling)

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(100000, 1)))
    trainer = L.Trainer(accelerator="gpu", devices=1, enable_checkpointing=False, **trainer_args)
    trainer.fit(model, data)


def case_lightning_forward(torch):
    """Lightning's own loop with its TQDM bar: at batch 30 one batch is 2048 times longer (the
    longest batch of variable-length data) and the forward runs out, inside optimizer.step's
    closure."""
    import lightning as L  # noqa: N812 (Lightning's own spelling)
    from lightning.pytorch.callbacks import TQDMProgressBar

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(4096, 16384), torch.nn.GELU(), torch.nn.Linear(16384, 4096)
            )

        def training_step(self, batch, batch_idx):
            rows = 1024 * (2048 if batch_idx == 30 else 1)
            x = torch.randn(rows, 4096, device=self.device)
            return self.net(x).float().pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-5)

    _lightning_fit(
        torch, Model(), max_steps=100, callbacks=[TQDMProgressBar(refresh_rate=1)], logger=False
    )


def _gpt2(torch, tf, vocab: int, positions: int):
    """A 4-layer GPT-2 built from a config (no download), and a dataset of n seeded rows of
    `positions` random tokens (labels = inputs) for transformers' Trainer."""
    cfg = tf.GPT2Config(n_layer=4, n_embd=512, n_head=8, vocab_size=vocab, n_positions=positions)

    class Tokens(torch.utils.data.Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            gen = torch.Generator().manual_seed(i)
            ids = torch.randint(0, vocab, (positions,), generator=gen)
            return {"input_ids": ids, "labels": ids}

    return tf.GPT2LMHeadModel(cfg), Tokens


def case_hf_mem_metrics(torch):
    """transformers' Trainer with its memory metrics on (skip_memory_metrics=False): a GPT-2
    built from a config (no download), evaluation every 10 steps; what it prints, and when."""
    import transformers as tf

    model, Tokens = _gpt2(torch, tf, vocab=8192, positions=256)
    kw = dict(
        output_dir="hf_out",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=16,
        max_steps=30,
        logging_steps=5,
        eval_strategy="steps",
        eval_steps=10,
        save_strategy="no",
        report_to="none",
        skip_memory_metrics=False,
        disable_tqdm=True,
    )
    try:
        args = tf.TrainingArguments(**kw)
    except TypeError as e:  # an argument this version no longer has: say which, go on without
        print(f"TrainingArguments: {e}", flush=True)
        kw.pop("skip_memory_metrics")
        args = tf.TrainingArguments(**kw)
    print(f"transformers {tf.__version__}", flush=True)
    trainer = tf.Trainer(
        model=model, args=args, train_dataset=Tokens(4096), eval_dataset=Tokens(512)
    )
    out = trainer.train()
    trainer.log_metrics("train", out.metrics)
    trainer.log_metrics("eval", trainer.evaluate())


def case_hf_eval_accumulation(torch):
    """transformers' Trainer keeping every evaluation batch's logits on the GPU until the end
    (eval_accumulation_steps unset, a compute_metrics set): a GPT-2 from a config (50257
    tokens, 128 positions) trains 10 steps, then evaluates 600 samples, 15.4 GB of fp32
    logits, under a 20% memory fraction (16 GB of an H100, 28 of an H200). With
    GPU_RECORD_EVAL_ACC=N, eval_accumulation_steps=N (the predictions move to the CPU)."""
    import transformers as tf

    torch.cuda.set_per_process_memory_fraction(0.2)
    model, Tokens = _gpt2(torch, tf, vocab=50257, positions=128)
    acc = os.environ.get("GPU_RECORD_EVAL_ACC")
    args = tf.TrainingArguments(
        output_dir="hf_out",
        per_device_train_batch_size=16,
        per_device_eval_batch_size=16,
        eval_accumulation_steps=int(acc) if acc else None,
        max_steps=10,
        logging_steps=5,
        eval_strategy="steps",
        eval_steps=10,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    print(f"transformers {tf.__version__} eval_accumulation_steps={acc}", flush=True)
    trainer = tf.Trainer(
        model=model,
        args=args,
        train_dataset=Tokens(4096),
        eval_dataset=Tokens(600),
        compute_metrics=lambda p: {"predictions": len(p.predictions)},
    )
    trainer.train()


CASES = {
    "oom_plain": (case_plain, {}),
    "oom_after_some": (case_after_some, {}),
    "oom_expandable": (case_after_some, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
    "oom_async": (case_after_some, {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}),
    "oom_fraction": (case_fraction, {}),
    "oom_fragmentation": (case_fragmentation, {}),
    "oom_cublas": (case_cublas, {}),
    "oom_cotenant": (case_cotenant, {}),  # run by record_node, while the holder holds
    "phase_optimizer_state": (case_optimizer_state, {}),
    "phase_eval_graph": (case_eval_graph, {}),
    "phase_load": (case_load, {}),
    "phase_leak": (case_leak, {"RUNBOOK_OOM_SNAPSHOT": "1"}),
    "push_oom": (case_push_oom, {}),  # run by record_push, with the recorder listening
    "lightning_stats": (case_lightning_stats, {}),
    "hf_mem_metrics": (case_hf_mem_metrics, {}),
    "lightning_forward": (case_lightning_forward, {}),
    "trend_varlen": (case_varlen, {}),
    "lightning_warmup": (case_lightning_warmup, {}),
    "hf_eval_accumulation": (case_hf_eval_accumulation, {}),
    "hf_eval_accumulation_1": (case_hf_eval_accumulation, {"GPU_RECORD_EVAL_ACC": "1"}),
    "phase_eval_batch": (case_eval_batch, {}),
    "phase_eval_batch_half": (case_eval_batch, {"GPU_RECORD_EVAL_BATCH": "128"}),
}


def child(name: str, micro_batch: int, steps: int) -> None:
    torch = _torch()
    if name == "train":
        case_train(torch, micro_batch, steps)
    elif name == "holder":
        case_holder(torch)
    else:
        CASES[name][0](torch)


# ---------------------------------------------------------------- parent: runs and records


_DEADLINE = [float("inf")]  # monotonic time after which no case starts (--budget)


def _run(out: Path, label: str, argv: list[str], env: dict, manifest: list, timeout=180) -> int:
    if time.monotonic() > _DEADLINE[0]:
        manifest.append({"case": label, "skipped": "over --budget"})
        print(f"{label}: skipped (over --budget)", flush=True)
        return -998
    start = time.monotonic()
    with open(out / f"{label}.log", "w") as log:
        try:
            rc = subprocess.run(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=out, timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired:
            rc = -999
        except OSError as e:  # the tool is not on this machine
            print(f"gpu_record: cannot run {argv[0]}: {e}", file=log)
            rc = -127
    seconds = round(time.monotonic() - start, 1)
    manifest.append({"case": label, "argv": argv, "env": _env_diff(env), "rc": rc, "s": seconds})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))  # kept if killed later
    print(f"{label}: exit {rc} in {seconds} s", flush=True)
    return rc


def _env_diff(env: dict) -> dict:
    return {k: v for k, v in env.items() if os.environ.get(k) != v}


def _me_in(script: str, *args: str) -> list[str]:
    return [sys.executable, str(Path(script).resolve()), *args]


def _me(*args: str) -> list[str]:
    return _me_in(__file__, *args)


def _shell(out: Path, label: str, command: list[str], manifest: list) -> None:
    _run(out, label, command, dict(os.environ), manifest, timeout=60)


def record_node(out: Path, env: dict, manifest: list) -> None:
    sys.path.insert(0, str(REPO))
    from runbook.evidence.gpu_health import PROBE_SCRIPT

    _shell(out, "nvidia-smi-q", ["nvidia-smi", "-q"], manifest)
    with _co_tenant(out, env, manifest):
        for mode in ("query", "table"):
            argv = ["sh", "-c", PROBE_SCRIPT, "runbook-probe", "4242", "nvidia-smi", mode]
            _shell(out, f"probe-{mode}", [*argv, "dmesg"], manifest)
        _run(out, "oom_cotenant", _me("--child", "oom_cotenant"), env, manifest)


@contextlib.contextmanager
def _co_tenant(out: Path, env: dict, manifest: list):
    """case_holder running beside what the block records (it holds its memory once it has said
    so), killed after."""
    holder = subprocess.Popen(
        _me("--child", "holder"), env=env, stdout=subprocess.PIPE, text=True, cwd=out
    )
    try:
        ready = holder.stdout.readline() if holder.stdout else ""
        manifest.append({"case": "holder", "said": ready.strip(), "pid": holder.pid})
        yield
    finally:
        holder.kill()
        holder.wait()


def record_push(out: Path, env: dict, manifest: list) -> None:
    """case_push_oom with a recorder standing in for `runbook hook serve` (no Slurm here): what
    the dying rank sent, and when it arrived after the OOM (the dump's time)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    got: list[dict] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            n = int(self.headers.get("Content-Length") or 0)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            got.append(
                {
                    "arrived": time.time(),
                    "path": self.path,
                    "bearer": self.headers.get("Authorization") == "Bearer recorded-token",
                    "headers": headers,
                    "body": self.rfile.read(n).decode(),
                }
            )
            raw = b'{"accepted": [{"job_id": "4242", "incident": "recorded-4242"}]}'
            self.send_response(202)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    extra = {
        "RUNBOOK_HOOK_URL": f"http://127.0.0.1:{srv.server_address[1]}/",
        "RUNBOOK_HOOK_TOKEN": "recorded-token",
        "SLURM_JOB_ID": "4242",
        "SLURM_PROCID": "0",
    }
    try:
        _run(out, "push_oom", _me("--child", "push_oom"), {**env, **extra}, manifest)
    finally:
        srv.shutdown()
        srv.server_close()
    (out / "push_requests.json").write_text(json.dumps(got, indent=1))


def record_fit(out: Path, env: dict, manifest: list, steps: int) -> None:
    """Micro-batches 1, 2, 4, ... until one runs out; then the points between the last that
    fitted and the first that did not, so the fit is checked where it matters."""
    fitted, failed = 0, 0
    m = 1
    while m <= 512:
        rc = _run(
            out,
            f"fit-m{m}",
            _me("--child", "train", "--micro-batch", str(m), "--steps", str(steps)),
            env,
            manifest,
        )
        if rc != 0:
            failed = m
            break
        fitted, m = m, m * 2
    if not failed or not fitted:
        return
    for k in (1, 2, 3):
        between = fitted + (failed - fitted) * k // 4
        if fitted < between < failed:
            _run(
                out,
                f"fit-m{between}",
                _me("--child", "train", "--micro-batch", str(between), "--steps", str(steps)),
                env,
                manifest,
            )


def record_fit_cotenant(out: Path, env: dict, manifest: list, steps: int) -> None:
    """The fit's model while another process (case_holder, 24 GiB) holds part of the card: at
    micro-batch 64 it runs out (alone it ran, tests/data/gpu/fit-m64.log); 48 and 32 are the
    candidates that keep 64 x 3 exact with the accumulation 4 and 6. The message's memory
    outside this process's pool is the holder's: what a fit must count as fixed."""
    with _co_tenant(out, env, manifest):
        for m in (64, 48, 32):
            argv = _me("--child", "train", "--micro-batch", str(m), "--steps", str(steps))
            _run(out, f"fit-cotenant-m{m}", argv, env, manifest)


def parent(out: Path, only: list[str], steps: int, budget: float) -> int:
    import torch

    if not torch.cuda.is_available():
        sys.exit("gpu_record: needs a CUDA GPU, and torch sees none here; run it where one is lent")
    _DEADLINE[0] = time.monotonic() + budget
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", RUNBOOK_OOM_DUMP_DIR=str(out))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        env.pop(var, None)
    manifest: list[dict] = []
    _shell(
        out,
        "versions",
        [
            sys.executable,
            "-c",
            "import torch, sys; print(sys.version); "
            "print(torch.__version__, torch.version.cuda); "
            "print(torch.cuda.get_device_name(0))",
        ],
        manifest,
    )
    _shell(
        out,
        "nvidia-smi-version",
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv"],
        manifest,
    )
    if not only or "node" in only:
        record_node(out, env, manifest)
    for name, (_, extra) in CASES.items():
        if name in ("oom_cotenant", "push_oom") or (only and name not in only):
            continue
        _run(out, name, _me("--child", name), {**env, **extra}, manifest)
    if not only or "push_oom" in only:
        record_push(out, env, manifest)
    if not only or "fit" in only:
        record_fit(out, env, manifest, steps)
    if not only or "fit_cotenant" in only:
        record_fit_cotenant(out, env, manifest, steps)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for the recordings")
    ap.add_argument("--only", nargs="*", default=[], help="node, fit, fit_cotenant, or case names")
    ap.add_argument("--steps", type=int, default=4, help="training steps per micro-batch")
    ap.add_argument("--budget", type=float, default=600, help="seconds after which no case starts")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--micro-batch", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.micro_batch, a.steps)
        return 0
    if not a.out:
        ap.error("--out DIR is required")
    return parent(a.out, a.only, a.steps, a.budget)


if __name__ == "__main__":
    sys.exit(main())
