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

Checkpoint on request (docs/design.md §3.3): `checkpoint_on()` (or
RUNBOOK_CHECKPOINT_ON_REQUEST=1 in the job's environment, read by install()) declares that this
rank checkpoints when runbook asks, with the figures runbook counts it against (the world size
and ranks per node its launcher set, Slurm's task and node counts) and the request file it
polls. runbook asks by writing that file as the job's owner, never by a signal: a signal
reaches torchrun's agent or a wrapping shell too, which die of it. Every rank calls
`checkpoint_requested(step)` after each step; the request names one step for every rank; each
rank saves it and calls `checkpoint_written(step, path)`, whose line runbook reads back:

    instrument.checkpoint_on()
    for step in range(start + 1, steps + 1):
        train_step()
        if instrument.checkpoint_requested(step):
            path = save_checkpoint(step)          # rank 0's file, or this rank's shard
            instrument.checkpoint_written(step, path)

After a requested checkpoint, checkpoint_written() holds the loop until runbook cancels the job
(its rerun already in Slurm, held) or withdraws the request (the job goes on), at most
RUNBOOK_CHECKPOINT_HOLD_S seconds (default 900): no step runs past the checkpoint. The job says
whether runbook may then cancel and resubmit it unattended with RUNBOOK_PREVENT=1 (its owner's
opt-in, which [policy] unattended_prevent = "opted_in" honours); the declaration says so.

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

_state: dict = {
    "installed": False,
    "params": None,
    "pushed": set(),  # the reasons this process pushed for (push: once each)
    "retries": [],  # the allocator's retries on the last three memory lines (_pressure)
    "pressure_told": False,
}
HOOK_URL_VAR, HOOK_TOKEN_VAR = "RUNBOOK_HOOK_URL", "RUNBOOK_HOOK_TOKEN"
HOOK_TIMEOUT_S = 3.0  # a dying rank waits this long at most per try (RUNBOOK_HOOK_TIMEOUT_S)
# srun relays a rank's output to the log through slurmstepd: the incident the push starts reads
# that log, so the push waits a moment after the traceback is flushed (RUNBOOK_HOOK_SETTLE_S).
HOOK_SETTLE_S = 0.5
_JOB_ID = re.compile(r"\d{1,10}(?:_\d{1,10})?")
_HOOK_URL = re.compile(r"(https?://)(?:([^@/?#\s]*)@)?([^@/?#\s]+)")
_ELASTIC = ("TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS")  # set by torchrun


def _emit(line: str) -> None:
    """One marker line on stderr in one write. Under torchrun (accelerate, deepspeed) the ranks
    of a node share one stderr pipe, and print() to stderr writes the text and its newline
    apart: two ranks' lines then run together and one is lost to the reader (measured on the
    test cluster: a rank's checkpoint line glued to another's). A write of a whole line below
    the pipe's 4 KiB atomic size is never split."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: the job's own error matters more
        pass


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
        _emit(f"{MARKER} oom-dump rank={rank} failed: {e}")
        return None
    _emit(f"{MARKER} oom-dump rank={rank} path={path}")
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
        _emit(
            f"{MARKER} peak rank={_rank()} max_memory_reserved={n['max_memory_reserved']} "
            f"total={total} max_memory_allocated={n['max_memory_allocated']}"
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
    _emit(
        f"{MARKER} mem rank={_rank()} step={n} allocated={int(allocated)} peak={int(peak)} "
        f"reserved={int(reserved)} retries={int(retries)} inactive={int(inactive)}"
        + (f" total={int(total)}" if total else "")
    )
    _pressure(int(retries))


def _pressure(retries: int) -> None:
    """The allocator's retries rising over the last three memory lines (the sweep's own rule
    for thrashing): with RUNBOOK_HOOK_URL set, tell the hook once, from a thread so the step is
    not held; it reads the job's series and the prevention runbook decides."""
    seen = _state["retries"] = [*_state["retries"][-2:], retries]
    rising = len(seen) == 3 and seen[0] < seen[1] < seen[2]
    if rising and os.environ.get(HOOK_URL_VAR) and not _state["pressure_told"]:
        _state["pressure_told"] = True  # one thread, ever: the next line may come at once
        threading.Thread(target=push, args=("thrashing",), daemon=True).start()


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
    per process and reason, and print one marker line saying what the hook answered. Never
    raises: the rank may be failing, and its own error is what the log must show. Returns that
    line, or None when no URL is set or this process already pushed for `reason`. The hook
    reads the job's log itself: the reason is a word for the log, never evidence."""
    url = os.environ.get(HOOK_URL_VAR, "").strip()
    if not url or reason in _state["pushed"]:
        return None
    _state["pushed"].add(reason)
    job = os.environ.get("SLURM_JOB_ID", "")
    m = _HOOK_URL.match(url)  # printed: the scheme and host only, never a secret of the URL
    where = m.group(1) + m.group(3) if m else "(not an http URL)"
    head = f"{MARKER} push rank={_rank()} job={job or '-'} reason={reason} to={where}"
    blocked = _push_blocked(job, url)
    line = f"{head} {blocked}" if blocked else f"{head} {_post(url, job)}"
    _emit(line)
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


# Checkpoint on request (docs/design.md §3.3): the ranks poll a file runbook writes as the job's
# owner; no signal is ever sent to the job. A signal from `scancel --signal` reaches every
# process of the job's steps, launchers included, and torchrun's agent (accelerate's and
# deepspeed's alike, a shell between srun and the ranks too) dies of one it does not handle,
# orphaning its ranks: measured on the test cluster (issue 62). A file reaches only the code
# that reads it.
REQUEST_PREFIX = ".runbook-checkpoint-"  # + the Slurm job id: the only name runbook writes
REQUEST_HEAD = "runbook-checkpoint-request"
HOLD_S = 900.0  # the default of RUNBOOK_CHECKPOINT_HOLD_S (pause and hold, each at most this)
_POLL_HOLD_S = 0.2  # how often a paused or holding rank reads the request again
_ON_VARS = ("RUNBOOK_CHECKPOINT_ON_REQUEST", "RUNBOOK_CHECKPOINT_SIGNAL")  # the second: old name
_requested = threading.Event()  # a person's signal (checkpoint_on("USR1")): "save at once"
_req: dict = {"path": None, "seen": None, "done": set(), "asked": None, "missed": set()}


def _env_int(*names: str) -> int | None:
    for name in names:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return None


def _launcher() -> str:
    """What started this rank: torchrun's elastic agent (accelerate's multi-GPU launch goes
    through it), deepspeed's launcher (its LOCAL_SIZE and CROSS_SIZE), srun itself (each Slurm
    task a rank), or unknown (a launcher that says none of these)."""
    if os.environ.get("TORCHELASTIC_RUN_ID") or "LOCAL_WORLD_SIZE" in os.environ:
        return "torchrun"
    if "LOCAL_SIZE" in os.environ or "CROSS_SIZE" in os.environ:
        return "deepspeed"
    procid = os.environ.get("SLURM_PROCID")
    if procid is not None and os.environ.get("RANK", procid) == procid:
        return "srun"
    return "unknown"


def request_path() -> str | None:
    """The file this rank polls: $RUNBOOK_CHECKPOINT_DIR (else the working folder)/
    .runbook-checkpoint-<job id>. It must be on a filesystem runbook's host shares (the job's
    folder usually is): runbook checks that every rank saw its request."""
    job = os.environ.get("SLURM_JOB_ID", "")
    if not _JOB_ID.fullmatch(job):
        return None
    folder = os.environ.get("RUNBOOK_CHECKPOINT_DIR") or os.getcwd()
    return os.path.join(os.path.abspath(folder), REQUEST_PREFIX + job)


def _say(kind: str, text: str) -> None:
    _emit(f"{MARKER} {kind} rank={_rank()} {text}")


def checkpoint_on(signal_name: str | None = None) -> bool:
    """Declare that this rank checkpoints when runbook asks: the loop calls
    checkpoint_requested(step) after every step. The line printed names the request file,
    this rank, the world size and ranks per node the launcher set and Slurm's own figures, so
    runbook asks only when every rank of the job declared. `signal_name` (USR1, USR2) also
    handles that signal as "save at once", for a person's own `kill`; runbook never sends one.
    False where nothing could be declared (not in a Slurm job), said on stderr."""
    if signal_name:
        import signal as signals

        name = signal_name.upper()
        name = name if name.startswith("SIG") else f"SIG{name}"
        signum = getattr(signals, name, None)
        if not isinstance(signum, int) or threading.current_thread() is not threading.main_thread():
            _say(
                "checkpoint-request",
                f"refused: {signal_name!r} (an unknown signal, or not called from the main thread)",
            )
            return False
        signals.signal(signum, lambda _n, _f: _requested.set())
    path = request_path()
    if path is None:
        _say("checkpoint-request", "refused: SLURM_JOB_ID is not a Slurm job id")
        return False
    _req["path"] = path
    figures = {
        "world": _env_int("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"),
        "local_rank": _env_int("LOCAL_RANK", "SLURM_LOCALID"),
        "local_world": _env_int("LOCAL_WORLD_SIZE", "LOCAL_SIZE"),
        "slurm_ntasks": _env_int("SLURM_NTASKS"),
        "slurm_nnodes": _env_int("SLURM_JOB_NUM_NODES", "SLURM_NNODES"),
    }
    said = " ".join(f"{k}={v if v is not None else '-'}" for k, v in figures.items())
    # The path last: it may hold spaces.
    _say(
        "checkpoint-request",
        f"{said} launcher={_launcher()} host={socket.gethostname()} pid={os.getpid()} "
        f"prevent={'yes' if _opted_in() else 'no'} hold={_hold_s():g} request={path}",
    )
    return True


def _opted_in() -> bool:
    return os.environ.get("RUNBOOK_PREVENT", "").strip().lower() in ("1", "yes", "true", "on")


def _hold_s() -> float:
    try:
        value = float(os.environ.get("RUNBOOK_CHECKPOINT_HOLD_S", HOLD_S))
    except ValueError:
        return HOLD_S
    return max(0.0, value) if value == value else HOLD_S


def read_request(text: str) -> tuple[str, str] | None:
    """(id, what) of a request file's text: what is `next` (pause at the next step boundary
    and say which step this is), a step number (save after that step), or `withdrawn`."""
    m = re.fullmatch(
        rf"{REQUEST_HEAD} id=([\w.:-]{{1,80}}) step=(next|withdrawn|\d{{1,12}})\s*", text
    )
    return (m.group(1), m.group(2)) if m else None


def _poll() -> tuple[str, str] | None:
    path = _req["path"]
    if not path:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return read_request(f.read(512))
    except OSError:  # no request (the usual case), or one being replaced
        return None


def _wait_change(ident: str, what: str, deadline: float) -> tuple[str, str] | None:
    """Poll until request `ident` says something other than `what`, or the deadline: the
    newest reading (None: the file is gone)."""
    now: tuple[str, str] | None = (ident, what)
    while time.monotonic() < deadline:
        time.sleep(_POLL_HOLD_S)
        now = _poll()
        if now is None or now != (ident, what):
            return now
    return now


def checkpoint_requested(step: int | None = None) -> bool:
    """Called by every rank after each step (`step`: the step just completed). True when this
    rank must save a checkpoint of this step now, then call checkpoint_written(step, path).

    runbook's request comes in two writes of one file: `next` (each rank says the step it is
    at and pauses there), then the step every rank saves at (the highest step a rank said, or
    the one after it when a rank had not answered yet: one blocked in a collective with the
    paused ones). Ranks that pass that step without having seen the request say so, and
    runbook withdraws it: nobody saves a mix of steps. Without `step` (an older loop) a rank
    says it saw the request with no step and saves nothing: runbook then withdraws it. A
    person's signal (checkpoint_on("USR1")) still means "now"."""
    if _req["asked"] is not None:  # saved on request but never said so: hold here
        _hold(_req["asked"])
    if _requested.is_set():
        _requested.clear()
        _req["asked"] = "signal"
        return True
    got = _poll()
    if got is None or got[0] in _req["done"]:
        return False
    ident, what = got
    if _req["seen"] != ident:
        _req["seen"] = ident
        _say("checkpoint-seen", f"id={ident} step={step if step is not None else '-'}")
    if step is None or what == "withdrawn":
        _req["done"].add(ident)
        return False
    if what == "next":
        got = _wait_change(ident, what, time.monotonic() + _hold_s())
        if got is None or got[0] != ident or got[1] in ("next", "withdrawn"):
            _req["done"].add(ident)
            _say("checkpoint-resumed", f"id={ident} step={step} why=no-step-named")
            return False
        what = got[1]
    target = int(what)
    if step < target:
        return False
    if step > target:
        if ident not in _req["missed"]:
            _req["missed"].add(ident)
            _say("checkpoint-missed", f"id={ident} step={step} asked={target}")
        return False
    _req["done"].add(ident)
    _req["asked"] = ident
    return True


def _hold(ident: str) -> None:
    """After a requested checkpoint, hold the loop until runbook cancels the job (this process
    ends) or withdraws its request (it then goes on), at most RUNBOOK_CHECKPOINT_HOLD_S: a step
    run past the checkpoint would be a step lost."""
    _req["asked"] = None
    deadline = time.monotonic() + _hold_s()
    why = "timeout"
    while time.monotonic() < deadline:
        if ident != "signal":
            now = _poll()
            if now is None or now[0] != ident or now[1] == "withdrawn":
                why = "withdrawn"
                break
        elif _requested.is_set():
            why = "asked-again"
            break
        time.sleep(_POLL_HOLD_S)
    _say("checkpoint-resumed", f"id={ident} why={why}")


def checkpoint_written(step: int, path: str) -> None:
    """Say the checkpoint a request asked for is written: every rank calls it, with the path of
    its own part (rank 0's whole file: the same path on every rank). runbook reads the file
    back before relying on it. Then hold for the cancel (see _hold)."""
    ident = _req["asked"]
    _say("checkpoint", f"step={int(step)}" + (f" id={ident}" if ident else "") + f" path={path}")
    if ident is not None:
        _hold(ident)


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
    _emit(
        f"{MARKER} start rank={_rank()} torch={torch.__version__} "
        f"cuda={torch.cuda.is_available()} {params}allocator {settings}"
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
    # RUNBOOK_CHECKPOINT_ON_REQUEST=1 (RUNBOOK_CHECKPOINT_SIGNAL=USR1, its older name, also
    # handles that signal for a person's own kill).
    if os.environ.get(_ON_VARS[0], "").strip().lower() in ("1", "yes", "true", "on"):
        checkpoint_on()
    elif sig := os.environ.get(_ON_VARS[1]):
        checkpoint_on(sig)
