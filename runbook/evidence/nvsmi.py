"""nvidia-smi outputs: pure functions of text.

- `nvidia-smi -q [-d ROW_REMAPPER,ECC]`: read as an indentation tree (`Key : Value` leaves under
  section headings), per GPU (`GPU 00000000:01:00.0`) or one headless block, across driver
  generations: `ECC Mode`/`Ecc Mode`; ECC counters as Single/Double Bit (pre-Ampere, with a Total),
  SRAM/DRAM (Ampere+), SRAM Uncorrectable Parity/SEC-DED (535+); Retired Pages; Remapped Rows, also
  `Remapped Rows : N/A`. N/A and not-shown stay None, never 0.
- compute processes: `--query-compute-apps` CSV (any columns, with or without header and units),
  the default table's Processes section (classic and MIG GI/CI layouts, "No running processes
  found"), the `-q` Processes block, and torch's `list_gpu_processes()` text.
"""

from __future__ import annotations

import re
from dataclasses import field

from runbook.evidence.framing import plain
from runbook.evidence.units import SIZE_RE, small_int, to_mib
from runbook.record import record


@record
class _Node:
    key: str
    value: str | None
    indent: int
    children: list[_Node] = field(default_factory=list)

    def find(self, *names: str) -> _Node | None:
        """The first descendant path matching `names` (case-insensitive, each a regex)."""
        node: _Node | None = self
        for name in names:
            pattern = re.compile(name, re.IGNORECASE)
            assert node is not None  # the loop returns as soon as a step finds nothing
            node = next((c for c in node.children if pattern.fullmatch(c.key)), None)
            if node is None:
                return None
        return node

    def leaves(self) -> dict[str, str | None]:
        return {c.key.lower(): c.value for c in self.children}


_GPU_HEADER = re.compile(r"GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")


def split_kv(body: str) -> tuple[str, str] | None:
    """`Key    : value` -> (key, value). nvidia-smi pads keys and separates them with " : ";
    values hold colons (bus ids, times), so the separator is the first colon with space before
    it and space or the end after it; else (other tools) the first colon. Plain string scanning:
    a regex with lazy groups and trailing spaces is quadratic on a line of 40k spaces."""
    start = 0
    while (i := body.find(":", start)) >= 0:
        if (
            i
            and body[i - 1] in " \t"
            and body[:i].strip()
            and (i + 1 == len(body) or body[i + 1] in " \t")
        ):
            return body[:i].strip(), body[i + 1 :].strip()
        start = i + 1
    i = body.find(":")
    if i > 0:
        return body[:i].strip(), body[i + 1 :].strip()
    return None


def _tree(text: str) -> _Node:
    root = _Node("root", None, -1)
    stack = [root]
    for raw in text.replace("\t", "    ").splitlines():
        if not raw.strip() or raw.lstrip().startswith(("=", "#", "+", "|")):
            continue
        indent = len(raw) - len(raw.lstrip())
        body = raw.strip()
        if _GPU_HEADER.fullmatch(body):
            key, value = body, None
        elif kv := split_kv(body):
            key, value = kv
        else:
            key, value = body, None  # a section heading
        node = _Node(key.strip(), value if value else None, indent)
        while stack[-1].indent >= indent:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
    return root


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    v = value.strip()
    return small_int(v)


def _flag(value: str | None) -> bool | None:
    v = (value or "").strip().lower()
    return {"yes": True, "no": False}.get(v)


def _sum(values) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@record
class GpuMemoryHealth:
    bus_id: str | None = None
    host: str | None = None  # output of several nodes (pdsh, clush, headers): whose GPU
    ecc_mode: str | None = None
    volatile_correctable: int | None = None
    volatile_uncorrectable: int | None = None
    aggregate_correctable: int | None = None
    aggregate_uncorrectable: int | None = None
    retired_single_bit: int | None = None
    retired_double_bit: int | None = None
    retired_pending: bool | None = None
    remap_correctable: int | None = None
    remap_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None


@record
class MemoryHealth:
    gpus: list[GpuMemoryHealth] = field(default_factory=list)
    driver: str | None = None

    def row_remap(self) -> dict:
        """docs/design.md §4.1 `row_remap`: any pending/failure, counts summed; None where not shown."""

        def any_flag(values):
            known = [v for v in values if v is not None]
            return any(known) if known else None

        return {
            "pending": any_flag(g.remap_pending for g in self.gpus),
            "failure": any_flag(g.remap_failure for g in self.gpus),
            "correctable": _sum(g.remap_correctable for g in self.gpus),
            "uncorrectable": _sum(g.remap_uncorrectable for g in self.gpus),
        }

    def ecc(self) -> dict:
        return {
            "volatile_uncorrectable": _sum(g.volatile_uncorrectable for g in self.gpus),
            "aggregate_uncorrectable": _sum(g.aggregate_uncorrectable for g in self.gpus),
        }

    def summary(self) -> dict:
        """The corpus's answer-key shape, for tests and reports."""
        r = self.row_remap()
        return {
            "pending": r["pending"],
            "failure": r["failure"],
            "remapped_correctable": r["correctable"],
            "remapped_uncorrectable": r["uncorrectable"],
            "ecc_volatile_correctable": _sum(g.volatile_correctable for g in self.gpus),
            "ecc_volatile_uncorrectable": _sum(g.volatile_uncorrectable for g in self.gpus),
            "ecc_aggregate_uncorrectable": _sum(g.aggregate_uncorrectable for g in self.gpus),
        }


def _ecc_counts(block: _Node | None) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) of a Volatile/Aggregate block in any driver's layout."""
    if block is None:
        return None, None
    corr: list[int | None] = []
    unc: list[int | None] = []
    seen_corr = seen_unc = False
    for c in block.children:
        k = c.key.lower()
        if k in ("single bit", "double bit"):  # pre-Ampere: a Total per kind
            total = next((g.value for g in c.children if g.key.lower() == "total"), None)
            (corr if k == "single bit" else unc).append(_count(total))
            seen_corr |= k == "single bit"
            seen_unc |= k == "double bit"
        elif "uncorrectable" in k:  # SRAM/DRAM Uncorrectable [Parity|SEC-DED]
            unc.append(_count(c.value))
            seen_unc = True
        elif "correctable" in k:
            corr.append(_count(c.value))
            seen_corr = True
    return (_sum(corr) if seen_corr else None, _sum(unc) if seen_unc else None)


def _gpu_health(node: _Node, bus_id: str | None) -> GpuMemoryHealth:
    g = GpuMemoryHealth(bus_id=bus_id)
    if mode := node.find(r"ecc mode"):
        g.ecc_mode = mode.leaves().get("current") or mode.value or None
    errors = node.find(r"ecc errors")
    if errors is not None:
        g.volatile_correctable, g.volatile_uncorrectable = _ecc_counts(errors.find("volatile"))
        g.aggregate_correctable, g.aggregate_uncorrectable = _ecc_counts(errors.find("aggregate"))
    if pages := node.find(r"retired pages"):
        for c in pages.children:
            k = c.key.lower()
            if k.startswith("single bit"):
                g.retired_single_bit = (
                    _count(c.value)
                    if c.value
                    else _count((c.find("count") or _Node("", None, 0)).value)
                )
            elif k.startswith("double bit"):
                g.retired_double_bit = (
                    _count(c.value)
                    if c.value
                    else _count((c.find("count") or _Node("", None, 0)).value)
                )
            elif k.startswith("pending"):
                g.retired_pending = _flag(c.value)
    remap = node.find(r"remapped rows")
    if remap is not None and not (remap.value or "").strip():
        leaves = remap.leaves()
        g.remap_correctable = _count(leaves.get("correctable error"))
        g.remap_uncorrectable = _count(leaves.get("uncorrectable error"))
        g.remap_pending = _flag(leaves.get("pending"))
        g.remap_failure = _flag(leaves.get("remapping failure occurred"))
    return g


def parse_memory_health(text: str) -> MemoryHealth:
    """`nvidia-smi -q` (whole, `-d ROW_REMAPPER,ECC`, or a pasted section); output of several
    nodes (pdsh/clush prefixes, per-host headers) is read host by host."""
    from runbook.evidence import multihost

    out = MemoryHealth()
    for host, part in multihost.split(plain(text)):
        root = _tree(part)
        if out.driver is None and (d := root.find(r"driver version")):
            out.driver = d.value
        gpus = [(c, m.group(1)) for c in root.children if (m := _GPU_HEADER.fullmatch(c.key))]
        if gpus:
            found = [_gpu_health(node, bus) for node, bus in gpus]
        elif any(
            root.find(k) for k in (r"ecc errors", r"remapped rows", r"retired pages", r"ecc mode")
        ):
            found = [_gpu_health(root, None)]
        else:
            found = []
        for g in found:
            g.host = host
        out.gpus += found
    return out


# -- compute processes --------------------------------------------------------------------------
@record
class ComputeApp:
    pid: int | None
    used_mib: float | None
    gpu: str | None = None  # index, UUID or bus id, as the source gives it
    type: str | None = None  # C compute, G graphics, C+G
    name: str | None = None
    host: str | None = None  # where output of several nodes was given (pdsh, clush, headers)

    def contract(self) -> dict:
        return {"pid": self.pid, "used_mib": self.used_mib, "gpu": self.gpu}


_TABLE_ROW = re.compile(
    r"^\|\s*(?P<gpu>\d{1,18}(?!\d))\s+(?:(?P<gi>N/A|\d{1,18}(?!\d))\s+(?P<ci>N/A|\d{1,18}(?!\d))\s+)?(?P<pid>\d{1,18}(?!\d))\s+"
    r"(?P<type>C\+G|[CGM])\s+(?P<name>.*?)\s+(?P<mem>N/A|\d{1,18}(?!\d)\s*MiB)\s*\|$"
)
_TORCH_GPU = re.compile(r"^GPU:(\d{1,18}(?!\d))\s*$")
_TORCH_PROC = re.compile(
    r"^process\s+(\d{1,18}(?!\d))\s+uses\s+(\d{1,18}(?:\.\d{1,12})?(?!\d))\s+MB GPU memory"
)
_NA = {"[n/a]", "n/a", "[not supported]", "[insufficient permissions]", ""}


def _mem(value: str) -> float | None:
    v = value.strip()
    if v.lower() in _NA:
        return None
    if m := SIZE_RE.search(v):
        return to_mib(m.group(1), m.group(2))
    return (
        float(v) if re.fullmatch(r"\d{1,18}(?:\.\d{1,12})?(?!\d)", v) else None
    )  # csv,nounits: MiB


def _csv(lines: list[str]) -> list[ComputeApp] | None:
    rows = [[c.strip() for c in ln.split(",")] for ln in lines]
    head = [c.lower() for c in rows[0]]
    names = {
        "pid": "pid",
        "used_gpu_memory": "mem",
        "used_memory": "mem",
        "gpu_uuid": "gpu",
        "gpu_bus_id": "gpu",
        "gpu_serial": "gpu",
        "process_name": "name",
        "name": "name",
    }
    cols = [names.get(re.sub(r"\s*\[.*\]$", "", h)) for h in head]
    if any(cols):
        # Outputs concatenated without framing repeat the header: not a process.
        body = [r for r in rows[1:] if [c.lower() for c in r] != head]
    else:  # noheader: columns by content
        body = rows
        cols = []
        for i in range(len(rows[0])):
            col = [r[i] for r in rows if i < len(r)]
            if all(re.fullmatch(r"\d{1,18}(?!\d)", v) for v in col) and "pid" not in cols:
                cols.append("pid")
            elif all(
                re.fullmatch(r"GPU-[0-9a-fA-F-]+|[0-9A-Fa-f]{8}:[0-9A-Fa-f:.]+", v) for v in col
            ):
                cols.append("gpu")
            elif all(_mem(v) is not None or v.lower() in _NA for v in col):
                cols.append("mem")
            else:
                cols.append("name")
    if "pid" not in cols and "mem" not in cols and "gpu" not in cols:
        return None
    out = []
    for r in body:
        d = {c: v for c, v in zip(cols, r, strict=False) if c}
        pid = d.get("pid")
        out.append(
            ComputeApp(
                pid=small_int(pid),
                used_mib=_mem(d["mem"]) if "mem" in d else None,
                gpu=d.get("gpu"),
                name=d.get("name"),
            )
        )
    return out


def parse_compute_apps(text: str) -> list[ComputeApp]:
    """Processes on the GPUs, from whichever nvidia-smi (or torch) output was given; output of
    several nodes (pdsh/clush prefixes, per-host headers) is read host by host."""
    from runbook.evidence import multihost

    text = plain(text)
    parts = multihost.split(text)
    if len(parts) == 1 and parts[0][0] is None:
        return _compute_apps_one(text)
    out = []
    for host, part in parts:
        for app in _compute_apps_one(part):
            app.host = host
            out.append(app)
    return out


def _compute_apps_one(text: str) -> list[ComputeApp]:
    lines = [ln.rstrip() for ln in (text or "").splitlines()]
    if any(_TABLE_ROW.match(ln.strip()) for ln in lines) or any(
        "No running processes found" in ln for ln in lines
    ):
        out = []
        for ln in lines:
            if m := _TABLE_ROW.match(ln.strip()):
                out.append(
                    ComputeApp(
                        pid=int(m.group("pid")),
                        used_mib=_mem(m.group("mem")),
                        gpu=m.group("gpu"),
                        type=m.group("type"),
                        name=m.group("name").strip() or None,
                    )
                )
        return out
    if any(re.match(r"^\s*Process ID\s*:", ln) for ln in lines):
        return _q_processes(lines)
    if any(_TORCH_PROC.match(ln.strip()) for ln in lines):
        out, gpu = [], None
        for ln in lines:
            if m := _TORCH_GPU.match(ln.strip()):
                gpu = m.group(1)
            elif m := _TORCH_PROC.match(ln.strip()):
                out.append(ComputeApp(pid=int(m.group(1)), used_mib=float(m.group(2)), gpu=gpu))
        return out
    data = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(("#", "$"))]
    if data and all("," in ln for ln in data):
        return _csv(data) or []
    if data and all(
        re.fullmatch(r"\s*\d{1,18}(?!\d)\s*", ln) for ln in data
    ):  # --query-compute-apps=pid
        return [ComputeApp(pid=small_int(ln), used_mib=None) for ln in data]
    return []


def _q_processes(lines: list[str]) -> list[ComputeApp]:
    out: list[ComputeApp] = []
    gpu = None
    cur: ComputeApp | None = None
    for ln in lines:
        if m := _GPU_HEADER.fullmatch(ln.strip()):
            gpu = m.group(1)
            continue
        key, _, value = ln.strip().partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "process id":
            cur = ComputeApp(pid=small_int(value), used_mib=None, gpu=gpu)
            out.append(cur)
        elif cur is not None and key == "type":
            cur.type = value
        elif cur is not None and key == "name":
            cur.name = value
        elif cur is not None and key == "used gpu memory":
            cur.used_mib = _mem(value)
    return out
