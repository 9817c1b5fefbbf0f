"""The in-job OOM hook, for training scripts (needs torch).

    from runbook import instrument
    instrument.install(model=model)          # once, after the model is built
    ...
    with instrument.watch():                 # or rely on install()'s excepthook
        loss = step(batch)

At start-up it prints the allocator settings in force (`runbook verify` reads that line). On
`torch.OutOfMemoryError` it writes a JSON dump for this rank (rank, device, memory_allocated,
memory_reserved, the peaks, mem_get_info, memory_summary(), the allocator settings, and a memory
snapshot if RUNBOOK_OOM_SNAPSHOT=1) into $RUNBOOK_OOM_DUMP_DIR (default: the job's working
directory, beside the log), prints one marker line the log scanner recognises, and re-raises.
Without CUDA every device number is null: the dump still says which rank failed, when and how.

With RUNBOOK_HOOK_URL in the job's environment (and RUNBOOK_HOOK_TOKEN, the hook's bearer
token), an uncaught OOM also POSTs {"job_id": $SLURM_JOB_ID} to `runbook hook serve` once the
traceback is in the log: the wedged job is handled in seconds, not at the next sweep. Skipped
while torchrun still has restarts left (it restarts the workers itself). `push()` does the same
for a job that catches the OOM and exits or waits on its own.

Checkpoint on request (issue 56): `checkpoint_on("USR1")` (or RUNBOOK_CHECKPOINT_SIGNAL=USR1 in
the job's environment, read by install()) installs a handler for that signal and prints a line
saying the job handles it, which is how runbook knows it may ask (`scancel --signal=USR1 JOB`,
as the job's owner: every process of the job's steps, the ranks srun started; not the batch
shell, which would end of it). Every rank must declare it. The loop calls
`checkpoint_requested()` once a step; when it is True the loop saves a checkpoint at once and
calls `checkpoint_written(step, path)`, whose line runbook reads back:

    instrument.checkpoint_on("USR1")
    for step in range(start, steps):
        train_step()
        if instrument.checkpoint_requested():
            path = save_checkpoint(step)
            instrument.checkpoint_written(step, path)

After a requested checkpoint, checkpoint_written() holds the loop (at most
RUNBOOK_CHECKPOINT_HOLD_S seconds, default 120; 0: never) for the cancel that follows it, so no
step runs past the checkpoint and none is lost; when no cancel comes the loop goes on. The job
says whether runbook may then cancel and resubmit it unattended with RUNBOOK_PREVENT=1 (its
owner's opt-in, which [policy] unattended_prevent = "opted_in" honours); the signal line says so.

When the job enables PyTorch's flight recorder (TORCH_FR_BUFFER_SIZE, or TORCH_NCCL_TRACE_BUFFER_SIZE
for NCCL), a daemon thread serves `runbook hang`: when the request file in
/tmp/runbook-fr-<job id>/ changes, it writes this rank's recorder as JSON beside it
(rank<N>.json). A thread, because a hung rank's main thread never returns to Python; the
collective it waits in releases the GIL.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import socket
import stat
import sys
import tempfile
import threading
import time

MARKER = "RUNBOOK_INSTRUMENT"  # upper case: a rare first byte keeps the node-side grep fast
ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
# Fixed training cost with Adam in mixed precision, per parameter: fp16/bf16 weights (2) + fp32
# master weights (4), Adam's two fp32 moments (8), gradients (4): 18 bytes. The plan uses it to
# know when the model alone no longer fits a card, where only sharding can help.
BYTES_PER_PARAM_ADAM_MIXED = 18

_state: dict = {"installed": False, "params": None, "pushed": False}
HOOK_URL_VAR, HOOK_TOKEN_VAR = "RUNBOOK_HOOK_URL", "RUNBOOK_HOOK_TOKEN"
HOOK_TIMEOUT_S = 3.0  # a dying rank waits this long at most per try (RUNBOOK_HOOK_TIMEOUT_S)
# srun relays a rank's output to the log through slurmstepd: the incident the push starts reads
# that log, so the push waits a moment after the traceback is flushed (RUNBOOK_HOOK_SETTLE_S).
HOOK_SETTLE_S = 0.5
_JOB_ID = re.compile(r"\d{1,10}(?:_\d{1,10})?")
_HOOK_URL = re.compile(r"(https?://)(?:([^@/?#\s]*)@)?([^@/?#\s]+)")
_ELASTIC = ("TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS")  # set by torchrun


def _rank() -> int | None:
    for var in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def allocator_settings() -> dict[str, str | None]:
    return {v: os.environ.get(v) for v in ALLOC_VARS}


def estimate_fixed_mib(params: int) -> float:
    """Weights, gradients and optimizer state of `params` parameters, in MiB."""
    return params * BYTES_PER_PARAM_ADAM_MIXED / 2**20


# The largest peaks step() saw before it reset PyTorch's peak counters: without them the peak
# line at exit (and a dump) would say the peak since the last step line, not the run's (a real
# H100, micro-batch 48: 5.8 GB "max allocated" at exit after steps that peaked at 42 GB).
_SEEN_PEAKS = {"allocated": 0, "reserved": 0}


def _run_peaks(torch, dev) -> tuple[int, int]:
    """(max allocated, max reserved) over the whole run, across step()'s resets."""
    return (
        max(int(torch.cuda.max_memory_allocated(dev)), _SEEN_PEAKS["allocated"]),
        max(int(torch.cuda.max_memory_reserved(dev)), _SEEN_PEAKS["reserved"]),
    )


def _device_numbers(torch) -> dict:
    out: dict[str, object] = {
        "cuda": False,
        "device": None,
        "memory_allocated": None,
        "memory_reserved": None,
        "max_memory_allocated": None,
        "max_memory_reserved": None,
        "mem_get_info": None,
        "memory_summary": None,
    }
    try:
        if not torch.cuda.is_available():
            return out
        dev = torch.cuda.current_device()
        max_allocated, max_reserved = _run_peaks(torch, dev)
        out.update(
            cuda=True,
            device=dev,
            memory_allocated=torch.cuda.memory_allocated(dev),
            memory_reserved=torch.cuda.memory_reserved(dev),
            max_memory_allocated=max_allocated,
            max_memory_reserved=max_reserved,
            mem_get_info=list(torch.cuda.mem_get_info(dev)),
            memory_summary=torch.cuda.memory_summary(dev),
        )
    except Exception as e:  # a broken context must not hide the original OOM
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def dump(exc: BaseException, *, directory: str | None = None) -> str | None:
    """Write this rank's dump for `exc` and print the marker line; returns the path."""
    import torch

    done = getattr(exc, "_runbook_dump", None)
    if done:  # already dumped (watch() then the excepthook)
        return str(done)
    rank = _rank()
    folder = directory or os.environ.get("RUNBOOK_OOM_DUMP_DIR") or os.getcwd()
    data = {
        "schema": "runbook.oom-dump/1",
        "time": time.time(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "rank": rank,
        "local_rank": os.environ.get("SLURM_LOCALID"),
        "job_id": os.environ.get("SLURM_JOB_ID"),
        "exception": type(exc).__name__,
        "message": str(exc)[:20000],
        "allocator": allocator_settings(),
        "torch": torch.__version__,
        "params": _state["params"],
        "fixed_training_mib": estimate_fixed_mib(_state["params"]) if _state["params"] else None,
        **_device_numbers(torch),
    }
    if os.environ.get("RUNBOOK_OOM_SNAPSHOT") == "1" and data["cuda"]:
        with contextlib.suppress(Exception):
            data["snapshot"] = torch.cuda.memory._snapshot()
    name = (
        f"oom-dump-{data['job_id'] or 'nojob'}-rank{rank if rank is not None else 'x'}-"
        f"{os.getpid()}.json"
    )
    path = os.path.join(folder, name)
    try:
        os.makedirs(folder, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(data, f, default=str)
        os.replace(path + ".tmp", path)
    except OSError as e:
        print(f"{MARKER} oom-dump rank={rank} failed: {e}", file=sys.stderr, flush=True)
        return None
    print(f"{MARKER} oom-dump rank={rank} path={path}", file=sys.stderr, flush=True)
    with contextlib.suppress(AttributeError):
        setattr(exc, "_runbook_dump", path)  # noqa: B010  (an attribute exceptions do not declare)
    return path


@contextlib.contextmanager
def watch(directory: str | None = None):
    """Dump on torch.OutOfMemoryError raised inside, then let it propagate unchanged."""
    import torch

    try:
        yield
    except torch.OutOfMemoryError as e:
        dump(e, directory=directory)
        raise


def _peak_line() -> None:
    import torch

    n = _device_numbers(torch)
    if n["cuda"] and n["mem_get_info"]:
        total = n["mem_get_info"][1]
        # Both peaks: the fit predicts the allocation's (verify compares like with like), the
        # card held the reserved one (9-14% above it on a real H100: tests/data/gpu/fit-m*.log).
        print(
            f"{MARKER} peak rank={_rank()} max_memory_reserved={n['max_memory_reserved']} "
            f"total={total} max_memory_allocated={n['max_memory_allocated']}",
            file=sys.stderr,
            flush=True,
        )


def step(n: int, every: int | None = None) -> None:
    """Opt-in memory series for runbook's trend (docs/design.md §3.1): every `every` steps (default
    $RUNBOOK_MEM_EVERY, unset: never) one line with the allocated memory at this step boundary,
    the peak since the last line, reserved, the allocator's retries and its inactive split
    bytes; then the peak is reset (the run's own peaks are kept for the exit line and the dump).
    Without CUDA it prints nothing. Its cost per call is measured by bench/instrument_step.py."""
    if every is None:
        every = int(os.environ.get("RUNBOOK_MEM_EVERY", "0") or 0)
    if every <= 0 or n % every:
        return
    import torch

    if not torch.cuda.is_available():
        return
    stats = torch.cuda.memory_stats()
    peak = torch.cuda.max_memory_allocated()
    _SEEN_PEAKS["allocated"], _SEEN_PEAKS["reserved"] = _run_peaks(torch, None)
    memory_line(
        n,
        allocated=torch.cuda.memory_allocated(),
        peak=peak,
        reserved=torch.cuda.memory_reserved(),
        retries=stats.get("num_alloc_retries", 0),
        inactive=stats.get("inactive_split_bytes.all.current", 0),
        total=torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory,
    )
    torch.cuda.reset_peak_memory_stats()


def memory_line(
    n: int,
    *,
    allocated: int,
    peak: int,
    reserved: int,
    retries: int = 0,
    inactive: int = 0,
    total: int | None = None,
) -> None:
    """The per-step line runbook's trend reads (bytes), for numbers a job has from elsewhere.
    `total` (the card's size) lets runbook fit a micro-batch before any OOM (a sweep that sees
    the allocator thrash)."""
    print(
        f"{MARKER} mem rank={_rank()} step={n} allocated={int(allocated)} peak={int(peak)} "
        f"reserved={int(reserved)} retries={int(retries)} inactive={int(inactive)}"
        + (f" total={int(total)}" if total else ""),
        file=sys.stderr,
        flush=True,
    )


FR_VARS = ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
FR_BASE = "/tmp"  # runbook.evidence.stacks reads the same place on the node


def flight_recorder_dir(job_id: str) -> str:
    return os.path.join(FR_BASE, f"runbook-fr-{job_id}")


def _serve_flight_recorder() -> None:
    """Start the thread that dumps this rank's flight recorder on request (see the docstring)."""
    job, rank = os.environ.get("SLURM_JOB_ID", ""), _rank()
    enabled = any(os.environ.get(v, "0").strip() not in ("", "0") for v in FR_VARS)
    if not (enabled and job.isdigit() and rank is not None):
        return
    d = flight_recorder_dir(job)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(d, 0o700)
        st = os.lstat(d)
        # Ours, a real folder: never write into one another user planted.
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return
        os.chmod(d, 0o1777)  # the on-call account drops its request; the sticky bit keeps ours
    except OSError:
        return
    request, target = os.path.join(d, "request"), os.path.join(d, f"rank{rank}.json")

    def serve() -> None:
        served = 0.0
        while True:
            time.sleep(1.0)
            try:
                asked = os.stat(request).st_mtime
            except OSError:
                continue
            if asked <= served:
                continue
            served = asked
            try:
                import torch._C._distributed_c10d as c10d

                # (include collectives, only active ones: False): the recent history too.
                data = getattr(c10d, "_dump_fr_trace_json")(True, False)  # noqa: B009 (private)
            except Exception as e:  # an old torch, no process group yet: say so
                data = json.dumps({"error": f"{type(e).__name__}: {e}"}).encode()
            try:
                fd, tmp = tempfile.mkstemp(dir=d, prefix=f".rank{rank}-")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)  # replaces a planted link, never follows it
            except OSError:
                continue

    threading.Thread(target=serve, daemon=True, name="runbook-flight-recorder").start()


def _seconds(var: str, default: float) -> float:
    """$var in seconds, within 0-60; the default for anything else ("nan" included)."""
    try:
        value = float(os.environ.get(var, default))
    except ValueError:
        return default
    return min(max(value, 0.0), 60.0) if value == value else default


def _push_blocked(job: str, url: str) -> str | None:
    """Why this rank must not push (a line for the log), or None."""
    if not _JOB_ID.fullmatch(job):
        return f"not pushed: SLURM_JOB_ID is {job[:24]!r}, not a Slurm job id"
    m = _HOOK_URL.match(url)
    if not m:
        return f"not pushed: {HOOK_URL_VAR} must be an http:// or https:// URL"
    if m.group(2) is not None:
        return f"not pushed: credentials go in {HOOK_TOKEN_VAR}, not in {HOOK_URL_VAR}"
    restarts, most = (os.environ.get(v, "") for v in _ELASTIC)
    if restarts.isdigit() and most.isdigit() and int(restarts) < int(most):
        return f"not pushed: torchrun restarts the workers ({restarts} of {most} restarts used)"
    return None


def push(reason: str = "oom") -> str | None:
    """POST this job's id to runbook's hook ($RUNBOOK_HOOK_URL, bearer $RUNBOOK_HOOK_TOKEN), once
    per process, and print one marker line saying what the hook answered. Never raises: the
    rank is already failing, and its own error is what the log must show. Returns that line, or
    None when no URL is set or this process already pushed."""
    url = os.environ.get(HOOK_URL_VAR, "").strip()
    if not url or _state["pushed"]:
        return None
    _state["pushed"] = True
    job = os.environ.get("SLURM_JOB_ID", "")
    m = _HOOK_URL.match(url)  # printed: the scheme and host only, never a secret of the URL
    where = m.group(1) + m.group(3) if m else "(not an http URL)"
    head = f"{MARKER} push rank={_rank()} job={job or '-'} reason={reason} to={where}"
    blocked = _push_blocked(job, url)
    line = f"{head} {blocked}" if blocked else f"{head} {_post(url, job)}"
    print(line, file=sys.stderr, flush=True)
    return line


def _post(url: str, job: str) -> str:
    import http.client
    import urllib.error
    import urllib.request

    body = json.dumps({"job_id": job}).encode()
    headers = {"Content-Type": "application/json"}
    token = os.environ.get(HOOK_TOKEN_VAR, "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    time.sleep(_seconds("RUNBOOK_HOOK_SETTLE_S", HOOK_SETTLE_S))
    timeout = _seconds("RUNBOOK_HOOK_TIMEOUT_S", HOOK_TIMEOUT_S) or HOOK_TIMEOUT_S
    said = "failed: no answer"
    for attempt in (1, 2):  # one retry: a hook restarting, a dropped connection
        req = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 (http(s) only)
                return _answer(r.status, r.read(65536))
        except urllib.error.HTTPError as e:
            if e.code < 500:  # the hook refused it (a token, the payload): retrying cannot help
                return _answer(e.code, e.read(65536))
            said = _answer(e.code, e.read(65536))
        # Refused, unreachable, timed out, a bad URL, a reply that is not HTTP.
        except (OSError, ValueError, http.client.HTTPException) as e:
            said = f"failed: {type(e).__name__}: {str(e)[:160]}"
        if attempt == 1:
            time.sleep(1.0)
    return said


def _answer(status: int, raw: bytes) -> str:
    """The hook's answer as one line: its status and the incident it queued (or its error)."""
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        doc = None
    doc = doc if isinstance(doc, dict) else {}
    accepted = doc.get("accepted")
    got = accepted[0] if isinstance(accepted, list) and accepted else None
    if isinstance(got, dict) and got.get("incident"):
        return f"status={status} incident={str(got['incident'])[:80]}"
    error = doc.get("error")
    return f"status={status}" + (f" error={str(error)[:160]!r}" if error else "")


_requested = threading.Event()


def checkpoint_on(signal_name: str = "USR1") -> bool:
    """Handle `signal_name` (USR1, USR2, SIGUSR1...) as a request to checkpoint now, and say so
    in the log. From the main thread (Python runs signal handlers there); False where it cannot
    be installed (another thread, an unknown signal), said on stderr."""
    import signal as signals

    name = signal_name.upper()
    name = name if name.startswith("SIG") else f"SIG{name}"
    signum = getattr(signals, name, None)
    if not isinstance(signum, int) or threading.current_thread() is not threading.main_thread():
        print(
            f"{MARKER} checkpoint-signal rank={_rank()} refused: {signal_name!r} (an unknown "
            "signal, or not called from the main thread)",
            file=sys.stderr,
            flush=True,
        )
        return False
    signals.signal(signum, lambda _n, _f: _requested.set())
    prevent = "yes" if _opted_in() else "no"
    print(
        f"{MARKER} checkpoint-signal rank={_rank()} signal={name[3:]} prevent={prevent} "
        f"hold={_hold_s():g}",
        file=sys.stderr,
        flush=True,
    )
    return True


def _opted_in() -> bool:
    return os.environ.get("RUNBOOK_PREVENT", "").strip().lower() in ("1", "yes", "true", "on")


def _hold_s() -> float:
    try:
        return max(0.0, float(os.environ.get("RUNBOOK_CHECKPOINT_HOLD_S", "120")))
    except ValueError:
        return 120.0


def checkpoint_requested() -> bool:
    """True once for each request since the last call: the loop checkpoints now."""
    if _requested.is_set():
        _requested.clear()
        _state["asked"] = True
        return True
    return False


def checkpoint_written(step: int, path: str) -> None:
    """Say the checkpoint a request asked for is written (runbook reads it back, and checks
    the file itself). After a requested one, hold the loop for the cancel that follows (at most
    RUNBOOK_CHECKPOINT_HOLD_S seconds): a step run past the checkpoint would be a step lost."""
    print(
        f"{MARKER} checkpoint rank={_rank()} step={int(step)} path={path}",
        file=sys.stderr,
        flush=True,
    )
    if _state.pop("asked", False) and (hold := _hold_s()) > 0:
        deadline = time.monotonic() + hold
        while time.monotonic() < deadline and not _requested.is_set():
            time.sleep(0.2)


def install(model=None) -> None:
    """Print the allocator settings in force; dump on an uncaught OOM; print the peak at exit."""
    import torch

    if model is not None:
        _state["params"] = sum(p.numel() for p in model.parameters())
    if _state["installed"]:
        return
    _state["installed"] = True
    settings = " ".join(
        f"{k}={v if v is not None else '(unset)'}" for k, v in allocator_settings().items()
    )
    # The parameter count rides on the start line: the fit reads it from the log alone (a
    # dump may not be readable from where runbook runs).
    params = f"params={_state['params']} " if _state["params"] else ""
    print(
        f"{MARKER} start rank={_rank()} torch={torch.__version__} "
        f"cuda={torch.cuda.is_available()} {params}allocator {settings}",
        file=sys.stderr,
        flush=True,
    )
    previous = sys.excepthook

    def hook(kind, value, tb):
        oom = isinstance(value, torch.OutOfMemoryError)
        if oom:
            dump(value)
        previous(kind, value, tb)  # the traceback first: the incident the push starts reads it
        if oom:
            push("oom")

    sys.excepthook = hook
    atexit.register(_peak_line)
    _serve_flight_recorder()
    if sig := os.environ.get("RUNBOOK_CHECKPOINT_SIGNAL"):
        checkpoint_on(sig)
