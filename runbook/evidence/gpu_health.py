"""Node health in one SSH round trip per node: Xid lines since the job started, ECC / row remap
state, the compute processes on the GPUs and which of them belong to the job.

The remote script is a constant; the job id, the nvidia-smi path and the kernel-log command are
positional arguments, quoted by the transport. Each probe prints its own section with its exit
status, so a node where one tool is missing or fails still yields the others, with that part
marked unavailable and why. Parsing happens here, on pure functions of the sections.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import field
from datetime import datetime

from runbook import words
from runbook.errors import RunbookError
from runbook.evidence import nvsmi, xid
from runbook.evidence.units import small_int
from runbook.record import record

# Sections: "@@runbook NAME" starts one, "@@exit N" ends it with the tool's exit status; the
# marker always starts a line of its own (a tool's output need not end with a newline).
PROBE_SCRIPT = r"""
job=$1; smi=$2; mode=$3; shift 3
echo "@@runbook kernel_log"
{ "$@" 2>&1; printf '\n@@exit %s\n' "$?"; } | grep -a -E 'NVRM|SXid|nvidia-nvswitch|^@@exit'
echo "@@runbook ecc"
"$smi" -q -d ROW_REMAPPER,ECC 2>&1; printf '\n@@exit %s\n' "$?"
echo "@@runbook apps"
if [ "$mode" = table ]; then apps=$("$smi" 2>&1); rc=$?
else apps=$("$smi" --query-compute-apps=pid,used_memory,gpu_uuid --format=csv 2>&1); rc=$?; fi
printf '%s\n@@exit %s\n' "$apps" "$rc"
pids=$(printf '%s\n' "$apps" | awk '
  /^ *[0-9]+ *,/ { sub(/^ */, ""); split($0, a, / *, */); print a[1]; next }
  /^\|/ { for (i = 2; i <= NF; i++)
            if ($i ~ /^(C|G|M|C\+G)$/ && $(i-1) ~ /^[0-9]+$/) { print $(i-1); break } }
' | sort -u)
echo "@@runbook job_pids"
scontrol listpids "$job" 2>&1; printf '\n@@exit %s\n' "$?"
echo "@@runbook owners"
if [ -n "$pids" ]; then
  ps -o pid=,user= -p "$(echo $pids | tr ' ' ,)" 2>/dev/null | sed 's/^ */user /'
  for p in $pids; do echo "/proc/$p/cgroup"; done | xargs grep -aHo 'job_[0-9]*' 2>/dev/null \
    | sed -n 's|^/proc/\([0-9]*\)/cgroup:|cgroup \1 |p'
fi
echo "@@exit 0"
"""


def probe_argv(job_id: str, probes, since: datetime | None) -> list[str]:
    """argv of the one command run on a node. `probes` is the site's [probes] section."""
    epoch = str(int(since.timestamp())) if since else "0"
    kernel = [a.replace("{since_epoch}", epoch) for a in probes.kernel_log]
    return [
        "sh",
        "-c",
        PROBE_SCRIPT,
        "runbook-probe",
        str(job_id),
        probes.nvidia_smi,
        probes.compute_apps,
        *kernel,
    ]


def split_sections(stdout: str) -> dict[str, tuple[str, int | None]]:
    """{name: (text, exit status)}; a section cut short (capped output) has status None."""
    out: dict[str, tuple[str, int | None]] = {}
    name: str | None = None
    lines: list[str] = []
    for line in stdout.splitlines():
        if line.startswith("@@runbook "):
            if name is not None:
                out[name] = ("\n".join(lines), None)
            name, lines = line.split(" ", 1)[1].strip(), []
        elif line.startswith("@@exit ") and name is not None:
            code = line.split(" ", 1)[1].strip()
            out[name] = ("\n".join(lines), small_int(code))
            name, lines = None, []
        elif name is not None:
            lines.append(line)
    if name is not None:
        out[name] = ("\n".join(lines), None)
    return out


@record
class Owner:
    pid: int
    user: str | None
    job: str | None  # the Slurm job whose cgroup holds the process, when cgroups say


@record
class NodeHealth:
    node: str
    error: str | None = None  # the node could not be probed at all
    kernel: xid.KernelLog | None = None
    memory: nvsmi.MemoryHealth | None = None
    apps: list[nvsmi.ComputeApp] | None = None
    job_pids: set[int] | None = None
    owners: dict[int, Owner] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)  # part -> why
    raw: dict[str, str] = field(default_factory=dict)  # section -> text, for the incident folder
    execs: int = 0
    # part -> (the nodes its text is framed as, {node: what pdsh/clush said of it}), for output
    # of several nodes given by hand (`diagnose --dmesg`, `--compute-apps`).
    framing: dict[str, tuple[list[str], dict[str, str]]] = field(default_factory=dict)

    def foreign_apps(self, job_id: str | None) -> list[nvsmi.ComputeApp]:
        """Processes on the node's GPUs that are not the job's. A process is the job's when Slurm
        lists it (scontrol listpids) or its cgroup names the job."""
        out = []
        for app in self.apps or []:
            if app.pid is None or not self._on_this_node(app):
                continue
            owner = self.owners.get(app.pid)
            if job_id and owner and owner.job == f"job_{job_id}":
                continue
            if self.job_pids and app.pid in self.job_pids:
                continue
            out.append(app)
        return out

    def _on_this_node(self, item: nvsmi.ComputeApp | xid.XidEvent) -> bool:
        """Output of several nodes (pdsh, clush, dshbak): only this node's processes and kernel
        events count. With the failing node unknown, output of one node counts (it is taken to
        be that node's), output of several counts for none: another node's process or Xid is no
        evidence about the GPU that ran out."""
        if not item.host:
            return True
        if not self.node:
            return len(self.framed_hosts()) <= 1
        return self._names_this_node(item.host)

    def framed_hosts(self) -> list[str]:
        """The hosts that output of several nodes names, apps and kernel events together."""
        items: list[nvsmi.ComputeApp | xid.XidEvent] = [*(self.apps or [])]
        items += self.kernel.events if self.kernel else []
        return sorted({i.host for i in items if i.host})

    def _names_this_node(self, host: str) -> bool:
        """A folded set (`gpu-[01,03]`, from `clush -b` or `dshbak -c`) names each of its nodes;
        a parallel shell may give the full name where Slurm gives the short one."""
        from runbook.slurm.hostlist import expand

        try:
            names = expand(host)
        except RunbookError:
            names = [host]
        return _short(self.node) in {_short(n) for n in names}

    def _events(self, events: list[xid.XidEvent]) -> list[xid.XidEvent]:
        return [e for e in events if self._on_this_node(e)]

    def other_hosts(self) -> list[str]:
        """Hosts that output of several nodes also named, whose lines were set aside."""
        items: list[nvsmi.ComputeApp | xid.XidEvent] = [*(self.apps or [])]
        items += self.kernel.events if self.kernel else []
        return sorted({i.host for i in items if i.host and not self._on_this_node(i)})

    def unknowns(self) -> list[str]:
        """What could not be read on this node, one phrase each: a probe that failed (a refused
        host key, an unreachable node, a tool that exited non-zero) is health unknown, never
        healthy."""
        if self.error:
            return [f"not probed: {self.error.splitlines()[0]}"]
        names = {
            "kernel_log": "Xid (kernel log)",
            "ecc": "ECC/row remapping (nvidia-smi -q)",
            "apps": "GPU processes (nvidia-smi)",
            "output": "probe output",
        }
        out = [f"{names.get(k, k)}: {why}" for k, why in self.unavailable.items() if k in names]
        for part, (hosts, said) in self.framing.items():
            if not self.node and len(hosts) > 1 and part not in self.unavailable:
                out.append(
                    f"{names.get(part, part)}: the output given is of several nodes "
                    f"({', '.join(hosts)}) and the failing node is not known: none of it counts"
                )
                continue
            if part in self.unavailable or not self.node or not (hosts or said):
                continue
            if why := next((w for h, w in said.items() if self._names_this_node(h)), None):
                out.append(f"{names.get(part, part)}: the parallel shell said `{self.node}: {why}`")
            elif not any(self._names_this_node(h) for h in hosts):
                out.append(
                    f"{names.get(part, part)}: the output given is of {', '.join(hosts)}, "
                    f"not of {self.node}"
                )
        return out

    def gpu_fault_reasons(self) -> list[str]:
        """Why this node's GPUs must be drained, one sentence each; empty when healthy."""
        reasons = []
        if self.kernel:
            # One sentence per Xid and recovery action, naming each GPU once with its count:
            # a driver repeats an Xid on every retry, and a reader needs the pattern.
            groups: dict[tuple, list] = {}
            for e in self._events(self.kernel.hardware()):
                groups.setdefault((e.xid, e.recovery_action), []).append(e)
            for (code, action), events in groups.items():
                entry = xid.lookup(code)
                what = entry.meaning.split(";")[0].split(":")[0] if entry else "unknown Xid"
                extra = f", recovery action: {action}" if action else ""
                gpus: dict[str, int] = {}
                for e in events:
                    gpus[e.pci or "a GPU"] = gpus.get(e.pci or "a GPU", 0) + 1
                on = ", ".join(f"{g} ({n} times)" if n > 1 else g for g, n in gpus.items())
                first = next((e.time for e in events if e.time), None)
                reasons.append(
                    f"Xid {code} on {on}"
                    + (f", first at {first}" if first and len(events) > 1 else "")
                    + (f" at {first}" if first and len(events) == 1 else "")
                    + f" ({what}{extra}; category hardware per NVIDIA's catalog)"
                )
        if self.memory:
            remap, ecc = self.memory.row_remap(), self.memory.ecc()
            if remap["pending"]:
                reasons.append(
                    f"row remap pending ({remap['uncorrectable']} uncorrectable-error remaps): the "
                    "GPU needs a reset for it to take effect"
                )
            if remap["failure"]:
                reasons.append("row remapping failure occurred: NVIDIA's RMA criterion")
            if ecc["volatile_uncorrectable"]:
                reasons.append(
                    f"{words.count(ecc['volatile_uncorrectable'], 'volatile uncorrectable ECC error')} "
                    "since the last driver load"
                )
        return reasons

    def read_sentences(self) -> list[str]:
        """What was read of this node, in words, for input that names no job failure (a kernel
        log, `nvidia-smi -q`, a process list given alone): each part read says what it shows,
        the healthy as healthy; a part not given is not mentioned."""
        out: list[str] = []
        if self.kernel is not None:
            events = _one_per_event(self._events(self.kernel.gpu_events()))
            if not events:
                out.append("The kernel log shows no Xid of a GPU")
            for e in events[:5]:
                entry = xid.lookup(e.xid)
                what = entry.meaning.split(";")[0].split(":")[0] if entry else "not in the catalog"
                who = f" (pid {e.pid})" if e.pid is not None else ""
                at = f" at {e.time}" if e.time else ""
                out.append(
                    f"The kernel log shows Xid {e.xid} on {e.pci or 'a GPU'}{who}{at}: {what} "
                    f"(category {e.category} per NVIDIA's catalog)"
                )
            if len(events) > 5:
                out.append(f"and {words.count(len(events) - 5, 'more Xid line', 'more Xid lines')}")
        if self.memory is not None:
            remap, ecc = self.memory.row_remap(), self.memory.ecc()
            n = len(self.memory.gpus)
            remaps = (
                "row remapping not shown"
                if remap["pending"] is None and remap["failure"] is None
                else "a row remap pending"
                if remap["pending"]
                else "a row remapping failure"
                if remap["failure"]
                else f"no row remap pending or failed ({remap['uncorrectable'] or 0} rows remapped "
                "for uncorrectable errors)"
            )
            errors = (
                "ECC not shown (disabled or N/A)"
                if ecc["volatile_uncorrectable"] is None
                else f"{ecc['volatile_uncorrectable']} volatile uncorrectable ECC errors"
            )
            out.append(f"nvidia-smi -q shows {n} GPU{'s' if n != 1 else ''}: {remaps}; {errors}")
        if self.apps is not None:
            if not self.apps:
                out.append("The process list shows no process on the GPUs")
            else:
                shown = ", ".join(
                    f"pid {a.pid}" + (f" {a.used_mib:g} MiB" if a.used_mib is not None else "")
                    for a in self.apps[:8]
                )
                more = f" and {len(self.apps) - 8} more" if len(self.apps) > 8 else ""
                out.append(f"The process list shows {len(self.apps)} on the GPUs: {shown}{more}")
        return out

    def fabric_notes(self) -> list[str]:
        """NVSwitch SXid errors on this node: fabric, not a GPU fault; said, never drained for."""
        if not self.kernel:
            return []
        return [
            f"NVSwitch SXid {e.xid}"
            + (f" ({e.severity})" if e.severity else "")
            + f" on {e.pci or 'an NVSwitch'}"
            + (f" at {e.time}" if e.time else "")
            + ": an NVLink fabric error (Fabric Manager guide), not a GPU fault"
            for e in _one_per_event(self._events(self.kernel.fabric()))
        ]

    def contract(self) -> dict:
        """docs/design.md §4.1 `gpu_health`."""
        memory = self.memory
        return {
            "xids": [e.contract() for e in self._events(self.kernel.gpu_events())]
            if self.kernel
            else [],
            "sxids": [e.contract() for e in self._events(self.kernel.fabric())]
            if self.kernel
            else [],
            "row_remap": memory.row_remap()
            if memory
            else {"pending": None, "failure": None, "correctable": None, "uncorrectable": None},
            "ecc": memory.ecc()
            if memory
            else {"volatile_uncorrectable": None, "aggregate_uncorrectable": None},
        }


_OWNER_USER = re.compile(r"^user (\d{1,18}(?!\d))\s+(\S+)$")
_OWNER_JOB = re.compile(r"^cgroup (\d{1,18}(?!\d)) (job_\d{1,18}(?!\d))$")


def health_from_sections(
    node: str, sections: dict, *, since: datetime | None = None, year_hint: int | None = None
) -> NodeHealth:
    h = NodeHealth(node=node, raw={k: v[0] for k, v in sections.items()})

    def part(name: str, tool: str):
        if name not in sections:
            h.unavailable[name] = "not in the probe's output (cut short?)"
            return None
        text, code = sections[name]
        if code is None:
            h.unavailable[name] = f"{tool}: output cut short"
            return None
        if code != 0:
            tail = text.strip().splitlines()[-1:] or ["no output"]
            h.unavailable[name] = f"{tool} exited {code}: {tail[0][:200]}"
            return None
        return text

    if (text := part("kernel_log", "kernel log")) is not None:
        log = xid.parse(text, year_hint=year_hint or (since.year if since else None))
        h.kernel = xid.since(log, since) if since else log
    if (text := part("ecc", "nvidia-smi -q")) is not None:
        h.memory = nvsmi.parse_memory_health(text)
    if (text := part("apps", "nvidia-smi --query-compute-apps")) is not None:
        h.apps = nvsmi.parse_compute_apps(text)
    if "job_pids" in sections:
        text, code = sections["job_pids"]
        pids, why = parse_listpids(text, code)
        if pids is not None:
            h.job_pids = pids
        else:
            h.unavailable["job_pids"] = why
    for line in sections.get("owners", ("", 0))[0].splitlines():
        if m := _OWNER_USER.match(line.strip()):
            pid = int(m.group(1))
            h.owners.setdefault(pid, Owner(pid, None, None)).user = m.group(2)
        elif m := _OWNER_JOB.match(line.strip()):
            pid = int(m.group(1))
            h.owners.setdefault(pid, Owner(pid, None, None)).job = m.group(2)
    return h


def parse_listpids(text: str, code: int) -> tuple[set[int] | None, str]:
    """The job's PIDs on a node from `scontrol listpids`, or None and why. A job that has
    ended there ("does not exist on node") has no PIDs to know: unknown, never an empty list
    (which would make every process on the GPUs look foreign)."""
    if code != 0:
        return None, f"scontrol listpids exited {code}: {text.strip()[:200]}"
    if "does not exist" in text:
        return None, "the job's processes had ended on the node when it was probed"
    return {int(t) for t in re.findall(r"^\s*(\d{1,18}(?!\d))\b", text, re.M)}, ""


def job_pids(transport, job_id: str, timeout_s: float) -> set[int] | None:
    """The job's PIDs on one node, read while it still runs (before the cancel): the job's own
    ranks named in an OOM message ("Process N has X in use") are never co-tenants."""
    try:
        r = transport.run(["scontrol", "listpids", str(job_id)], timeout=timeout_s)
    except RunbookError:
        return None
    return parse_listpids(r.stdout, r.exit_code)[0]


def probe_node(transport, job_id: str, probes, since: datetime | None) -> NodeHealth:
    """Probe one node: one exec on its (already or newly) open connection."""
    try:
        result = transport.run(probe_argv(job_id, probes, since), timeout=probes.timeout_s)
    except RunbookError as e:
        return NodeHealth(node=transport.host, error=str(e))
    h = health_from_sections(transport.host, split_sections(result.stdout), since=since)
    h.execs = 1
    if result.truncated:
        h.unavailable["output"] = f"probe output over the cap: {result.stdout_dropped} bytes cut"
    return h


def probe_nodes(
    hosts, nodes: list[str], job_id: str, probes, since: datetime | None, max_parallel: int = 16
) -> dict[str, NodeHealth]:
    """Every node at once (bounded): a node that cannot be reached yields its error, never a
    hang beyond the transport's timeouts, and the others are still probed."""
    from concurrent.futures import ThreadPoolExecutor  # only the node probe needs threads

    with ThreadPoolExecutor(max_workers=max(1, min(max_parallel, len(nodes) or 1))) as pool:
        futures = {n: pool.submit(probe_node, hosts[n], job_id, probes, since) for n in nodes}
        return {n: f.result() for n, f in futures.items()}


def _short(host: str) -> str:
    return host.split(".", 1)[0].lower()


def _one_per_event(events: list[xid.XidEvent]) -> list[xid.XidEvent]:
    """One entry per event for the words a person reads: the driver prints one event over
    several lines (Xid 13's exception and its ESR registers, an SXid and its Severity line), each
    with the same number, device, process and time. The first line is kept, with a severity a
    later line of the event gave."""
    seen: dict[tuple, xid.XidEvent] = {}
    for e in events:
        key = (e.xid, e.pci, e.pid, e.time, e.host)
        if key not in seen:
            seen[key] = e
        elif e.severity and not seen[key].severity:
            seen[key] = dataclasses.replace(seen[key], severity=e.severity)
    return list(seen.values())
