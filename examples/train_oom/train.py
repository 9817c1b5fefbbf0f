"""A small distributed PyTorch training job that runs out of (modelled) GPU memory.

Runs for real on CPUs: `torch.distributed` with the gloo backend, one process per Slurm task
(srun), or per rank of torchrun, or of a shell wrapper (train.sbatch.j2's `launcher`), a real
all-reduce every step, a real `torch.save` checkpoint every --ckpt-every steps,
resume from RUNBOOK_RESUME_FROM (or --resume-from). There is no GPU here, so the GPU's memory is
*modelled*, openly, and only the model decides when a rank runs out:

    weights + optimizer  = --param-mib                                  (fixed)
    activations per step = micro_batch x --act-mib-per-sample x seq_factor(rank)
                           x 0.35 with activation checkpointing, / sharding degree
    request              = the activations of one micro-batch (what the step asks for at once)
    fragmentation        = the caching allocator's reserved-but-unallocated pool grows by
                           --frag-mib-per-step each step, unless PYTORCH_CUDA_ALLOC_CONF (or
                           PYTORCH_ALLOC_CONF) holds expandable_segments:True, where it stays 0
    card                 = --card-mib; a node can override it and add co-tenants in
                           /var/log/fake-gpu.json {"card_mib": N, "co_tenants": [[pid, mib]],
                           "gpu": local GPU they share, "from_step": when they appear}
    seq_factor(rank)     = --long-factor for --long-rank from --long-step on (it draws the
                           longest sequences of the data set there), 0.8 otherwise

A step needs allocated (weights + activations) + request <= card - co-tenants - pool.
When it does not fit, the rank raises torch.OutOfMemoryError with the message PyTorch >= 2.1
prints, built from these numbers, and then stays alive: NCCL does not notice a dead peer, and a
rank stuck in CUDA teardown keeps its GPU; gloo would notice a dead process, so the model keeps
it alive. The other ranks block in the next all-reduce: a real wedge, until the job is cancelled.

--host-mib-per-worker x --workers models host RAM (x --long-factor from --long-step on, when the
long rank's workers prefetch the long batches): above the job's Slurm memory limit
(SLURM_MEM_PER_NODE) the rank is SIGKILLed (exit 137), as the kernel's OOM killer would.
--fail-with value_error makes the long rank raise a plain ValueError at --long-step instead: a
failure that is not an OOM. --fail-with host_alloc makes it ask the CPU allocator for 128 TiB at
once (a shape gone wrong), which c10 really refuses (ENOMEM): host memory, but no --mem meets it.

When and where it runs out (docs/design.md §3.1), each through real code paths so the traceback is real:
the training OOM is raised in a real backward pass (autograd's own frames above it: a step runs
out at its peak), an evaluation's inside a real torch.nn.Module's forward;
--eval-every N evaluates every N steps with --eval-batch-size samples of
--eval-act-mib-per-sample each on --long-rank (x3 when --eval-keeps-graph calls the model
outside torch.no_grad()), over --eval-samples samples whose outputs, --eval-kept-mib-per-sample
each, stay on the GPU until the evaluation ends when that is set (all_preds.append), or for
--eval_accumulation_steps batches (HF's spelling, as --per_device_eval_batch_size is);
--optimizer-state-mib is Adam's state, allocated inside a real torch.optim.Adam's first step;
--resume-onto-one-gpu restores every local rank's copy of a --ckpt-mib checkpoint onto GPU 0,
inside a real torch.load (map_location called per storage);
--leak-mib-per-step grows what stays allocated every step, --warmup-mib over --warmup-steps then
flat; --mem-lines prints runbook.instrument's per-step memory line with these numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import signal
import socket
import sys
import time

import torch
import torch.distributed as dist


def _gib(mib: float) -> str:
    return f"{mib / 1024:.2f} GiB" if mib >= 1024 else f"{mib:.2f} MiB"


class _Weights:
    """What install(model) reads of a model, for the modelled weights: their parameter count."""

    def __init__(self, param_mib: float):
        from runbook.instrument import BYTES_PER_PARAM_ADAM_MIXED

        self.count = int(param_mib * 2**20 / BYTES_PER_PARAM_ADAM_MIXED)

    def parameters(self):
        count = self.count
        return [type("Parameter", (), {"numel": lambda self: count})()]


def oom_message(
    gpu: int,
    request: float,
    card: float,
    free: float,
    process: float,
    allocated: float,
    unallocated: float,
    others: list,
) -> str:
    procs = "".join(f"Process {pid} has {_gib(mib)} memory in use. " for pid, mib in others)
    return (
        f"CUDA out of memory. Tried to allocate {_gib(request)}. GPU {gpu} has a total capacity "
        f"of {_gib(card)} of which {_gib(free)} is free. {procs}Including non-PyTorch memory, "
        f"this process has {_gib(process)} memory in use. Of the allocated memory "
        f"{_gib(allocated)} is allocated by PyTorch, and {_gib(unallocated)} is reserved by "
        "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
        "documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
    )


def fetch_shard_from_storage(step: int) -> None:
    """A data-loading read that never completes (a stuck filesystem): the rank stops here while
    its peers wait in the all-reduce, so their stacks differ from this one's."""
    print(f"loading shard {step} from storage", flush=True)
    while True:
        time.sleep(1.0)


class _PeakInBackward(torch.autograd.Function):
    """A training step's modelled need is its peak (the activations and their gradients), and a
    step that runs out at its peak runs out in the backward pass: on a real H200, one sample past
    the largest micro-batch that ran, GPT-2, Llama, ResNet and ViT all did (tests/data/gpu/
    families). The OOM is raised from here, through autograd's own frames."""

    @staticmethod
    def forward(ctx, x, oom):
        ctx.oom = oom
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        raise torch.OutOfMemoryError(ctx.oom)


class Net(torch.nn.Module):
    """The model: a real module whose forward is where a modelled evaluation's allocation fails,
    and whose output's backward is where a training step's does, so the traceback runs through
    torch's own frames as a real one does."""

    def forward(self, oom: str | None, *, training: bool = False):
        if oom and not training:
            raise torch.OutOfMemoryError(oom)
        x = torch.ones(1, requires_grad=True)
        return _PeakInBackward.apply(x, oom) if oom else x


def evaluate(model: Net, oom: str | None) -> None:
    """Evaluation as it should be written: no graph is built."""
    with torch.no_grad():
        model(oom)


def evaluate_keeping_predictions(model: Net, ooms: list[str | None]) -> list:
    """Evaluation that keeps every batch's outputs on the GPU until it ends (HF Trainer without
    eval_accumulation_steps, a loop's own list): they grow with the evaluation set, whatever
    its batch."""
    all_preds = []
    with torch.no_grad():
        for oom in ooms:
            all_preds.append(model(oom))
    return all_preds


def evaluate_keeping_graph(model: Net, oom: str | None) -> None:
    """Evaluation that forgot no_grad: every forward builds a graph it never uses."""
    model.eval()
    model(oom)


class ModelledAdam(torch.optim.Adam):
    """A real torch.optim.Adam whose state (two fp32 moments) is modelled: it is allocated at
    the first step, and a card without room for it fails there."""

    def __init__(self, params, state_mib: float, room):  # room(MiB) -> OOM message or None
        super().__init__(params)
        self.state_mib, self.room, self.materialized = state_mib, room, False

    def step(self, closure=None):
        if not self.materialized and self.state_mib:
            oom = self.room(self.state_mib)
            if oom:
                raise torch.OutOfMemoryError(oom)
        self.materialized = True
        return super().step(closure)


def load_checkpoint(path: str, place) -> dict:
    """torch.load with a map_location that decides where each storage goes (`place`)."""
    return torch.load(path, map_location=place, weights_only=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--micro-batch-size", type=int, default=8)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--sharding", type=int, default=1)
    ap.add_argument("--card-mib", type=float, default=81559.0)  # an H100 80GB HBM3
    ap.add_argument("--param-mib", type=float, default=30000.0)
    ap.add_argument("--act-mib-per-sample", type=float, default=5000.0)
    ap.add_argument("--frag-mib-per-step", type=float, default=0.0)
    ap.add_argument("--long-rank", type=int, default=3)
    ap.add_argument("--long-step", type=int, default=1)
    ap.add_argument("--long-factor", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--host-mib-per-worker", type=float, default=0.0)
    ap.add_argument("--ckpt-every", type=int, default=4)
    ap.add_argument("--ckpt-dir", default="checkpoints")
    ap.add_argument("--resume-from", default=os.environ.get("RUNBOOK_RESUME_FROM", ""))
    ap.add_argument("--step-seconds", type=float, default=0.05)
    ap.add_argument("--fail-with", choices=["oom", "value_error", "host_alloc"], default="oom")
    ap.add_argument(
        "--config",
        default="",
        help="a YAML recipe, as HF-style jobs keep their knobs: its "
        "per_device_train_batch_size and gradient_accumulation_steps win over the flags",
    )
    ap.add_argument(
        "--hang-node",
        default="",
        help="from --long-step on, --long-rank blocks in data loading (a stuck storage read) "
        "when it runs on this node, while the others wait in the all-reduce: a hung job",
    )
    ap.add_argument(
        "--report-params",
        action="store_true",
        help="tell runbook.instrument the parameter count the modelled weights stand for "
        "(--param-mib at 18 bytes a parameter, mixed-precision Adam), as a real job does by "
        "passing its model to install(): the dump then states the fixed cost",
    )
    ap.add_argument("--eval-every", type=int, default=0)
    # HF TrainingArguments' spellings too: a plain script written for a Trainer passes them.
    ap.add_argument("--eval-batch-size", "--per_device_eval_batch_size", type=int, default=8)
    ap.add_argument("--eval_accumulation_steps", "--eval-accumulation-steps", type=int, default=0)
    ap.add_argument("--eval-act-mib-per-sample", type=float, default=0.0)
    ap.add_argument("--eval-keeps-graph", action="store_true")
    ap.add_argument("--eval-samples", type=int, default=64)
    ap.add_argument("--eval-kept-mib-per-sample", type=float, default=0.0)
    ap.add_argument("--optimizer-state-mib", type=float, default=0.0)
    ap.add_argument("--ckpt-mib", type=float, default=0.0)
    ap.add_argument("--resume-onto-one-gpu", action="store_true")
    ap.add_argument("--leak-mib-per-step", type=float, default=0.0)
    ap.add_argument("--warmup-mib", type=float, default=0.0)
    ap.add_argument("--warmup-steps", type=int, default=1)
    ap.add_argument("--mem-lines", action="store_true")
    ap.add_argument(
        "--undeclared-rank",
        type=int,
        default=-1,
        help="this rank does not declare that it checkpoints on request (its code never does)",
    )
    ap.add_argument("--retries-per-step", type=int, default=0)
    ap.add_argument(
        "--thrash-rank",
        type=int,
        default=-1,
        help="only this rank's retries rise (-1: every rank's): the rank heading for an OOM "
        "need not be rank 0",
    )
    ap.add_argument(
        "--oom-exits",
        action="store_true",
        help="the OOM rank exits (as under torchrun's teardown) instead of wedging",
    )
    ap.add_argument(
        "--lightning-csv",
        default="",
        help="rank 0 writes Lightning's DeviceStatsMonitor columns (the modelled memory) to "
        "DIR/version_0/metrics.csv every step, as Lightning's CSVLogger does",
    )
    ap.add_argument(
        "--oom-raises",
        action="store_true",
        help="the OOM goes uncaught (runbook.instrument's excepthook: dump, traceback, and the "
        "push to the hook when RUNBOOK_HOOK_URL is set)",
    )
    args = ap.parse_args()
    if args.config:
        import yaml

        with open(args.config, encoding="utf-8") as f:
            recipe = yaml.safe_load(f) or {}
        args.micro_batch_size = int(
            recipe.get("per_device_train_batch_size", args.micro_batch_size)
        )
        args.grad_accum = int(recipe.get("gradient_accumulation_steps", args.grad_accum))

    # Under torchrun (or a launcher like it) its variables; under srun, Slurm's.
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))
    local = int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))
    dist.init_process_group(
        "gloo",
        init_method="env://",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(hours=2),
    )
    if rank == args.undeclared_rank:
        os.environ.pop("RUNBOOK_CHECKPOINT_ON_REQUEST", None)
    try:
        from runbook import instrument

        # Prints the allocator settings in force; dumps numbers on OOM (with the parameter count
        # when the job states it: what the fitted micro-batch rests on).
        instrument.install(_Weights(args.param_mib) if args.report_params else None)
        watch = instrument.watch
        # RUNBOOK_CHECKPOINT_ON_REQUEST=1 in the job's environment: install() declares it, and
        # every rank saves the step runbook names and holds (runbook's prevention).
        requested, written = instrument.checkpoint_requested, instrument.checkpoint_written
    except ImportError:  # the job runs without runbook installed too
        watch = contextlib.nullcontext
        requested, written = (lambda _step: False), (lambda _step, _path: None)

    retried = [0]  # the allocator's retries so far (num_alloc_retries)

    def instrument_line(step: int, allocated_mib: float, peak_mib: float) -> None:
        """runbook.instrument's per-step line, with the modelled numbers (no CUDA here): the
        allocator's retries rise by --retries-per-step a step (a thrashing allocator)."""
        from runbook.instrument import memory_line

        b, p = int(allocated_mib * 2**20), int(peak_mib * 2**20)
        # The allocator flushes its cache and retries only near the card: a step peaking over
        # 90% of it (a fitted rerun well under it thrashes no more).
        thrashes = args.thrash_rank < 0 or args.thrash_rank == rank
        if thrashes and peak_mib >= 0.9 * card:
            retried[0] += args.retries_per_step
        memory_line(
            step, allocated=b, peak=p, reserved=p, retries=retried[0], total=int(card * 2**20)
        )

    def lightning_row(step: int, allocated_mib: float, peak_mib: float) -> None:
        """One row of a CSVLogger's metrics.csv with DeviceStatsMonitor's memory columns (their
        names as Lightning 2.6.6 wrote them on a real H100: tests/data/gpu/lightning_metrics.csv).
        """
        path = os.path.join(args.lightning_csv, "version_0", "metrics.csv")
        fresh = not os.path.exists(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            if fresh:
                f.write(
                    "DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.peak,"
                    "DeviceStatsMonitor.on_train_batch_start/allocated_bytes.all.current,"
                    "epoch,step\n"
                )
            f.write(f",{int(allocated_mib * 2**20)},,{step}\n")
            f.write(f"{int(peak_mib * 2**20)},,,{step}\n")

    alloc_conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", os.environ.get("PYTORCH_ALLOC_CONF", ""))
    expandable = "expandable_segments:true" in alloc_conf.lower().replace(" ", "")

    node_gpu = {}
    if os.path.exists("/var/log/fake-gpu.json"):  # this node's modelled card
        with open("/var/log/fake-gpu.json") as f:
            node_gpu = json.load(f)
    card = float(node_gpu.get("card_mib", args.card_mib))
    shared = node_gpu.get("gpu", local) == local
    co_tenants = [tuple(p) for p in node_gpu.get("co_tenants", [])] if shared else []
    co_from = int(node_gpu.get("from_step", 1))

    mem_limit = float(os.environ.get("SLURM_MEM_PER_NODE", "0") or 0)

    start = 0
    weights = torch.zeros(1024)
    model = Net()
    procs: list = [None] * world
    # The job's own processes (real PIDs) and their nodes.
    dist.all_gather_object(procs, (os.getpid(), socket.gethostname()))
    if args.resume_from:
        if rank == 0:
            print(f"Resuming from checkpoint {args.resume_from}", flush=True)

        def place(storage, location):
            # Without a map_location to this rank's GPU every local rank's copy lands on GPU 0:
            # local rank 0 finds its card full of its peers' copies (docs/design.md §3.1).
            here = socket.gethostname()
            peers = [p for r, (p, h) in enumerate(procs) if r != rank and h == here]
            held = args.param_mib + args.ckpt_mib * (1 + len(peers))
            if args.resume_onto_one_gpu and local == 0 and held > card:
                others = [(p, args.ckpt_mib + 600.0) for p in peers]
                mine = args.param_mib + args.ckpt_mib
                free = max(card - held - 600.0 * len(peers), 0.0)
                raise torch.OutOfMemoryError(
                    oom_message(0, args.ckpt_mib, card, free, mine + 600.0, mine, 0.0, others)
                )
            return storage

        try:
            with watch():
                ck = load_checkpoint(args.resume_from, place)
        except torch.OutOfMemoryError:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            time.sleep(3600 * 24)  # keep the "GPU": see the module docstring
        start, weights = int(ck["step"]), ck["weights"]
        if rank == 0:
            print(f"resumed from {args.resume_from} at step {start}", flush=True)

    def activations(step: int) -> float:
        long = rank == args.long_rank and step >= args.long_step
        seq = args.long_factor if long else 0.8
        act = args.micro_batch_size * args.act_mib_per_sample * seq / max(args.sharding, 1)
        return act * 0.35 if args.gradient_checkpointing else act

    def kept(step: int) -> float:
        """What stays allocated between steps beyond the weights: a warm-up, a leak."""
        warm = args.warmup_mib * min(step, args.warmup_steps) / max(args.warmup_steps, 1)
        return warm + args.leak_mib_per_step * step

    def room(need: float, request: float, step: int, others: list) -> str | None:
        """The OOM message when `need` MiB (all that would be allocated) does not fit."""
        pool = 0.0 if expandable else args.frag_mib_per_step * step
        foreign = sum(m for _, m in others)
        if need + pool + foreign <= card:
            return None
        allocated = need - request
        free = max(card - allocated - pool - foreign, 0.0)
        return oom_message(
            local, request, card, free, allocated + pool + 600.0, allocated, pool, others
        )

    # A real Adam only where its state is modelled: building one imports torch._dynamo (1.4 s
    # measured on this CPU, per rank), which every other scenario would pay at start-up.
    opt = (
        ModelledAdam(
            [torch.nn.Parameter(torch.zeros(1))],
            args.optimizer_state_mib,
            lambda mib: room(args.param_mib + kept(start + 1) + mib, mib, start + 1, []),
        )
        if args.optimizer_state_mib
        else None
    )
    if rank == 0:
        print(
            f"model: card {card:.0f} MiB, micro-batch {args.micro_batch_size} x grad-accum "
            f"{args.grad_accum}, checkpointing {args.gradient_checkpointing}, allocator "
            f"{alloc_conf or 'default'}, NCCL_DEBUG {os.environ.get('NCCL_DEBUG', 'unset')}",
            flush=True,
        )
        print("Starting training", flush=True)

    def failed() -> None:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()

    done_peak: float | None = None  # the peak of the last step that completed
    for step in range(start + 1, args.steps + 1):
        long = rank == args.long_rank and step >= args.long_step
        host_need = args.workers * args.host_mib_per_worker * (args.long_factor if long else 1.0)
        if mem_limit and host_need > mem_limit:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does, silently
        if args.hang_node == socket.gethostname() and long:
            fetch_shard_from_storage(step)  # never returns: a read that hangs
        if long and args.fail_with == "value_error":
            raise ValueError(f"sample {step * 97} has an empty label sequence")
        if long and args.fail_with == "host_alloc":
            torch.empty(1 << 47, dtype=torch.uint8)  # c10 raises RuntimeError: can't allocate
        act = activations(step)
        others = co_tenants if step >= co_from else []
        base = args.param_mib + kept(step)
        # As the real ones are written after a step: the allocation at this step's start and the
        # peak of the step before (nothing ran before the first), never this step's own.
        done_peak = base if done_peak is None else done_peak
        if args.mem_lines:
            instrument_line(step - 1, base, done_peak)
        if args.lightning_csv and rank == 0:
            lightning_row(step - 1, base, done_peak)
        oom = room(base + act + act, act, step, others)
        try:
            with watch():  # the dump: rank, device numbers (null on CPU), settings
                model(oom, training=True).sum().backward()
                if opt is not None:
                    opt.step()
        except torch.OutOfMemoryError:
            if args.oom_raises:
                raise  # uncaught, as in most scripts: runbook.instrument's excepthook takes it
            failed()
            if args.oom_exits:
                return 1  # the peers' gloo sockets close; they fail too; the job ends FAILED
            time.sleep(3600 * 24)  # keep the "GPU": see the module docstring
        done_peak = base + 2 * act
        for _ in range(args.grad_accum):
            grad = torch.ones(1024) * (rank + 1)
            dist.all_reduce(grad)  # a real collective: where the survivors wedge
        weights += grad / world
        time.sleep(args.step_seconds)
        asked = requested(step)  # every rank asks after every step; rank 0 writes the file
        path = os.path.join(args.ckpt_dir, f"step_{step}.pt")
        if rank == 0:
            print(f"step {step}/{args.steps} loss {1.0 / step:.4f}", flush=True)
            if step % args.ckpt_every == 0 or asked:
                os.makedirs(args.ckpt_dir, exist_ok=True)
                torch.save({"step": step, "weights": weights}, path + ".tmp")
                os.replace(path + ".tmp", path)
        if asked:  # every rank says it, then holds for the cancel
            written(step, path)
        if args.eval_every and step % args.eval_every == 0:
            if rank == 0:
                print("***** Running Evaluation *****", flush=True)
            need = args.eval_batch_size * args.eval_act_mib_per_sample
            need *= 3.0 if args.eval_keeps_graph else 1.0
            oom = room(base + need, need, step, others) if rank == args.long_rank else None
            # Outputs kept across the evaluation's batches: after batch i, every sample so far
            # (the evaluation set's size, not its batch, sets what they come to).
            ooms: list[str | None] = []
            batches = -(-args.eval_samples // args.eval_batch_size)
            acc = args.eval_accumulation_steps  # they leave the GPU every `acc` batches
            for i in range(batches if args.eval_kept_mib_per_sample else 0):
                on_gpu = (i % acc + 1) if acc else (i + 1)
                seen = min(on_gpu * args.eval_batch_size, args.eval_samples)
                kept_mib = seen * args.eval_kept_mib_per_sample
                o = room(base + need + kept_mib, kept_mib, step, others)
                ooms.append(o if rank == args.long_rank else None)
                if ooms[-1]:
                    break
            try:
                with watch():
                    if ooms:
                        evaluate_keeping_predictions(model, ooms)
                    else:
                        (evaluate_keeping_graph if args.eval_keeps_graph else evaluate)(model, oom)
            except torch.OutOfMemoryError:
                failed()
                time.sleep(3600 * 24)
            dist.barrier()
    dist.barrier()
    if rank == 0:
        print(f"training finished at step {args.steps}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
