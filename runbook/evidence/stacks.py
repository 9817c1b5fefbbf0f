"""Live evidence of a hung job: every rank's Python stack, taken while the ranks are alive.

One exec per node runs the node-health probe (kernel log, ECC, compute apps: gpu_health's
script, unchanged) and then, for the job's processes that `scontrol listpids` names on that node,
`py-spy dump` of each at once, each under its own time limit, so a node answers within a bounded
time whatever the job does. `scontrol listpids` gives each task's global id: the rank of an
`srun`-launched process. A rank that a launcher (torchrun, accelerate) started is a child of the
task; its rank is not in any file a non-owner may read, so it is shown by node and PID, rank
unknown.

Reading another user's processes needs privilege: with `[hang] sudo = true` the two commands
that need it (`py-spy dump --pid N` and `scontrol listpids`) run under `sudo -n`, and a site
grants exactly those to runbook's account (docs/hang.md).

Everything here below `capture_argv` is a pure function of text.
"""

from __future__ import annotations

import re
from dataclasses import field

from runbook.evidence import gpu_health
from runbook.evidence.units import small_int
from runbook.record import record

# Runs after the probe script (same arguments after the first four, which are ours). Every
# py-spy runs in the background under `timeout`, into its own file, and the files are printed
# after `wait`: the node answers in about one timeout, however many ranks it holds.
STACKS_SCRIPT = r"""
echo "@@runbook step_pids"
lp=$(run scontrol listpids "$job" 2>&1); rc=$?
printf '%s\n@@exit %s\n' "$lp" "$rc"
pids=$(printf '%s\n' "$lp" | awk '$1 ~ /^[0-9]+$/ && $1 != 0 {print $1}' | sort -un)
echo "@@runbook procs"
for p in $pids; do
  [ -r "/proc/$p/stat" ] || continue
  # comm may hold spaces and parentheses: the fields after the last ") " are fixed.
  st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
  comm=$(tr -d '\n' <"/proc/$p/comm" 2>/dev/null)
  printf 'proc %s %s %s\n' "$p" "${st:--}" "$comm"
done
echo "@@exit 0"
d=$(mktemp -d 2>/dev/null) || d=""
n=0
if [ -n "$d" ]; then
  for p in $pids; do
    case $(tr -d '\n' <"/proc/$p/comm" 2>/dev/null) in
      slurmstepd|slurm_script|srun|sleep|sh|bash|dash|timeout|sudo|"") continue ;;
    esac
    ( timeout -k 2 "$tmo" $sudo "$spy" dump --pid "$p" >"$d/$p" 2>&1
      printf '\n@@exit %s\n' "$?" >>"$d/$p" ) &
    n=$((n + 1))
  done
  # The flight recorder, where the job serves it (runbook.instrument): ask, and wait a moment
  # for each rank's dump, while py-spy reads the stacks. A rank looks for requests once a
  # second, so wait at least that long: where one /tmp is seen by several nodes' captures, the
  # files of other nodes' ranks can be counted before this node's own ranks have answered.
  fr=/tmp/runbook-fr-$job
  if [ -d "$fr" ] && [ ! -L "$fr" ] && touch "$fr/request" 2>/dev/null; then
    i=0
    while [ "$i" -lt 10 ]; do
      sleep 0.5; i=$((i + 1))
      [ "$i" -ge 3 ] &&
        [ "$(find "$fr" -maxdepth 1 -name 'rank*.json' -newer "$fr/request" | wc -l)" -ge "$n" ] &&
        break
    done
    for f in $(find "$fr" -maxdepth 1 -name 'rank*.json' -newer "$fr/request"); do
      echo "@@runbook fr ${f##*/}"
      head -c 1000000 "$f"
      printf '\n@@exit 0\n'
    done
  fi
  wait
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    echo "@@runbook stack ${f##*/}"
    cat "$f"
  done
  rm -rf "$d"
fi
"""

CAPTURE_SCRIPT = (
    r"""
tmo=$1; spy=$2; sudo=$3; shift 3
run() { $sudo "$@"; }
"""
    + gpu_health.PROBE_SCRIPT
    + STACKS_SCRIPT
)


def capture_argv(job_id: str, probes, hang, since_epoch: str) -> list[str]:
    """argv of the one command run on a node: the probe's sections, then the stacks.
    `probes` is the site's [probes] section, `hang` its [hang] section."""
    kernel = [a.replace("{since_epoch}", since_epoch) for a in probes.kernel_log]
    return [
        "sh",
        "-c",
        CAPTURE_SCRIPT,
        "runbook-capture",
        str(int(hang.py_spy_timeout_s)),
        hang.py_spy,
        "sudo -n" if hang.sudo else "",
        str(job_id),
        probes.nvidia_smi,
        probes.compute_apps,
        *kernel,
    ]


@record(frozen=True)
class Frame:
    function: str
    file: str
    line: int | None

    def text(self) -> str:
        return f"{self.function} ({self.file}:{self.line if self.line is not None else '?'})"


@record
class Thread:
    name: str
    ident: str
    state: str  # idle | active | active+gil ...
    frames: list[Frame] = field(default_factory=list)  # innermost first, as py-spy prints


@record
class PyStack:
    """One process as `py-spy dump` printed it."""

    pid: int | None
    command: str = ""
    python: str = ""
    threads: list[Thread] = field(default_factory=list)
    error: str = ""  # py-spy could not read the process (not Python, gone, no permission)

    def main_thread(self) -> Thread | None:
        named = [t for t in self.threads if t.name == "MainThread"]
        return named[0] if named else (self.threads[0] if self.threads else None)


_PROCESS = re.compile(r"^Process (\d{1,10}): ?(.*)$")
_PYTHON = re.compile(r"^Python (v\S+.*)$")
_THREAD = re.compile(r'^Thread (\S+) \(([^)]*)\)(?:: "(.*)")?\s*$')
# "    func (path/file.py:123)"; a native frame may print no line ("func (libc.so.6)").
_FRAME = re.compile(r"^ {4}(\S.*?) \((.*?)(?::(\d{1,9}))?\)\s*$")
_ERROR = re.compile(r"^(Error: .*|Permission Denied: .*)$")


def parse_pyspy(text: str) -> PyStack:
    """One `py-spy dump` (text) of one process. Lines indented deeper than a frame are
    `--locals` output and are skipped; an error message is kept as the reason."""
    st = PyStack(pid=None)
    thread: Thread | None = None
    for line in text.splitlines():
        if m := _PROCESS.match(line):
            st.pid, st.command = int(m.group(1)), m.group(2)[:500]
        elif m := _PYTHON.match(line):
            st.python = m.group(1)[:200]
        elif m := _THREAD.match(line):
            thread = Thread(name=m.group(3) or "", ident=m.group(1), state=m.group(2))
            st.threads.append(thread)
        elif thread is not None and (m := _FRAME.match(line)):
            thread.frames.append(Frame(m.group(1), m.group(2), small_int(m.group(3))))
        elif not st.error and (m := _ERROR.match(line.strip())):
            st.error = m.group(1)[:300]
    if not st.threads and not st.error and text.strip():
        st.error = text.strip().splitlines()[0][:300]
    return st


@record(frozen=True)
class StepProc:
    pid: int
    step: str
    local_id: int | None
    global_id: int | None


def parse_listpids(text: str) -> dict[int, StepProc]:
    """`scontrol listpids JOB`: "PID JOBID STEPID LOCALID GLOBALID" per process; "-" where a
    process is not a task itself (a launcher's child, a dataloader worker). Only a task of a
    numbered step (an srun) is a rank: the batch step's script is "task 0" of no world."""
    out: dict[int, StepProc] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or not parts[0].isdigit() or len(parts[0]) > 10:
            continue
        ranked = parts[2].isdigit()
        out[int(parts[0])] = StepProc(
            int(parts[0]),
            parts[2],
            small_int(parts[3]) if ranked else None,
            small_int(parts[4]) if ranked else None,
        )
    return out


@record
class RankStack:
    """One training process on one node, with its rank when the node says it."""

    node: str
    pid: int
    rank: int | None
    step: str
    stack: PyStack
    parent: int | None = None


@record(frozen=True)
class FlightRecord:
    """One rank's flight recorder, as far as who-is-behind needs it: the last collective it
    entered (its sequence number and name) per process group, and that entry's state."""

    rank: int
    last_seq: int | None
    last_op: str = ""
    state: str = ""
    error: str = ""


def parse_flight_record(rank: int, text: str) -> FlightRecord:
    """PyTorch's flight recorder as JSON (`_dump_fr_trace_json`): entries with collective_seq_id,
    profiling_name, state, pg_id. Written by the job: read as data, bounded, never trusted to
    name anything but its own rank."""
    import json

    try:
        doc = json.loads(text)
    except ValueError as e:
        return FlightRecord(rank, None, error=f"not JSON: {e}"[:200])
    if not isinstance(doc, dict):
        return FlightRecord(rank, None, error="not a flight recorder dump")
    if "error" in doc and "entries" not in doc:
        return FlightRecord(rank, None, error=str(doc["error"])[:200])
    entries = [e for e in doc.get("entries") or [] if isinstance(e, dict)]
    # The default process group (pg_id 0) is the one every rank shares.
    main = [e for e in entries if e.get("pg_id", 0) == 0 and not e.get("is_p2p")]
    seqs = [e for e in main if isinstance(e.get("collective_seq_id"), int)]
    if not seqs:
        return FlightRecord(rank, None, error="no collective recorded")
    last = max(seqs, key=lambda e: e["collective_seq_id"])
    return FlightRecord(
        rank,
        last["collective_seq_id"],
        str(last.get("profiling_name", ""))[:100],
        str(last.get("state", ""))[:40],
    )


@record
class NodeCapture:
    node: str
    error: str | None = None  # the node could not be reached at all
    ranks: list[RankStack] = field(default_factory=list)
    flight: dict[int, FlightRecord] = field(default_factory=dict)
    health: gpu_health.NodeHealth | None = None
    unavailable: dict[str, str] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)


_PROC = re.compile(r"^proc (\d{1,10}) (\d{1,10}|-) (.*)$")
_LAUNCHER = re.compile(
    r"torchrun|torch\.distributed\.(?:run|launch)|accelerate(?:\.commands)?[ /]launch|"
    r"deepspeed(?:\.launcher)?|\blaunch\.py\b"
)


def _fix_for(error: str) -> str:
    """What to do about a py-spy that could not read a rank, in the words of its error."""
    low = error.lower()
    if "not found" in low and "process" not in low:
        return " (py-spy is not on the node: pip install py-spy there, or set [hang] py_spy)"
    if "permission denied" in low:
        return " (reading another user's process needs root: [hang] sudo = true and the sudo rule in docs/hang.md)"
    if "sudo:" in low or "password is required" in low:
        return (
            " (sudo refused: grant the rule in docs/hang.md for py-spy dump to runbook's account)"
        )
    return ""


def capture_from_sections(node: str, sections: dict, *, since=None) -> NodeCapture:
    """The node's capture from the sections of its one exec."""
    cap = NodeCapture(node=node, raw={k: v[0] for k, v in sections.items()})
    cap.health = gpu_health.health_from_sections(node, sections, since=since)
    for name, (text, _) in sections.items():
        if m := re.fullmatch(r"fr rank(\d{1,7})\.json", name):
            cap.flight[int(m.group(1))] = parse_flight_record(int(m.group(1)), text)
    text, code = sections.get("step_pids", ("", None))
    if code != 0:
        cap.unavailable["step_pids"] = (
            f"scontrol listpids exited {code}: {text.strip()[:200] or 'no output'}"
            if code is not None
            else "scontrol listpids: no output (cut short?)"
        )
        return cap
    tasks = parse_listpids(text)
    parents: dict[int, int | None] = {}
    for line in sections.get("procs", ("", 0))[0].splitlines():
        if m := _PROC.match(line.strip()):
            parents[int(m.group(1))] = small_int(m.group(2))
    stacks = {
        int(name.split()[1]): parse_pyspy(t)
        for name, (t, _) in sections.items()
        if name.startswith("stack ") and name.split()[1].isdigit()
    }
    for pid, st in sorted(stacks.items()):
        task = tasks.get(pid)
        if not st.threads:
            # Not Python (a shell, a compiled launcher): nothing to read there, nothing unknown.
            not_python = "Failed to find python version" in st.error
            if task is not None and task.global_id is not None and st.error and not not_python:
                cap.unavailable[f"pid {pid}"] = f"py-spy: {st.error}{_fix_for(st.error)}"
            continue
        if _LAUNCHER.search(st.command):
            continue  # the launcher's own stack says nothing about the collective
        parent = parents.get(pid)
        rank = task.global_id if task is not None else None
        # A dataloader worker is a child of a rank: its parent is a process we dumped too.
        if rank is None and parent in stacks and stacks[parent].threads:
            pst = stacks[parent]
            if not _LAUNCHER.search(pst.command):
                continue
        cap.ranks.append(RankStack(node, pid, rank, task.step if task else "?", st, parent=parent))
    return cap


def capture_node(transport, job_id: str, probes, hang, since) -> NodeCapture:
    """One node: one exec on its connection. A node that cannot be reached yields its error."""
    from runbook.errors import RunbookError

    epoch = str(int(since.timestamp())) if since else "0"
    try:
        r = transport.run(
            capture_argv(job_id, probes, hang, epoch),
            timeout=max(probes.timeout_s, hang.py_spy_timeout_s + 10),
        )
    except RunbookError as e:
        return NodeCapture(node=transport.host, error=str(e))
    cap = capture_from_sections(transport.host, gpu_health.split_sections(r.stdout), since=since)
    if cap.health is not None:
        cap.health.execs = 1
    if r.truncated:
        cap.unavailable["output"] = f"capture output over the cap: {r.stdout_dropped} bytes cut"
    return cap


def capture_nodes(hosts, nodes: list[str], job_id: str, probes, hang, since, max_parallel=16):
    """Every node at once (bounded): {node: NodeCapture}."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(nodes) or 1))) as pool:
        futures = {
            n: pool.submit(capture_node, hosts[n], job_id, probes, hang, since) for n in nodes
        }
        return {n: f.result() for n, f in futures.items()}
