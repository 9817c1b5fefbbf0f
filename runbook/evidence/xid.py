"""NVIDIA Xid events from a kernel log: pure functions of text, and the catalog as data.

Reads `NVRM: Xid (PCI:dddd:bb:dd): N, ...` in every framing the kernel log comes in (raw dmesg,
`dmesg -T`, `dmesg --time-format=iso`, syslog, journald, Talos' kmsg), the MIG form
`(PCI:... GPU-I:05)`, the oldest form without `PCI:`, `pid='<unknown>'`, the `caused by previous Xid
N` trailer, Xid 154's recovery action, NVSwitch `SXid` lines, and "GPU has fallen off the bus" with
no Xid number (treated as Xid 79). `NVRM: GPU at PCI:...: GPU-<uuid>` lines map PCI ids to UUIDs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import field
from datetime import datetime
from pathlib import Path

from runbook.datafiles import packaged_dir, read_yaml
from runbook.errors import ConfigError
from runbook.evidence.framing import plain, terminal_width, unwrap
from runbook.lazyre import lazy
from runbook.record import record

_PCI = r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
# The device in parentheses is matched by shape, not by content: logs pasted into tickets redact it
# ("PCI:...", "PCI:xxxx", "0000:XX:00"); the PCI id and a MIG instance are read out of it after.
_DEV = r"\((?P<dev>[^()\n]{0,80})\)"
_XID = lazy(r"NVRM: Xid " + _DEV + r":\s*(?P<xid>\d{1,18}(?!\d))\b(?:,\s*(?P<rest>.*))?")
# NVSwitch errors (the Fabric Manager guide's "SXid"): fabric errors, kept apart from GPU Xids.
_SXID = lazy(r"\bSXid " + _DEV + r":\s*(?P<xid>\d{1,18}(?!\d))\b(?:,\s*(?P<rest>.*))?")
_PCI_IN = lazy(r"(?:PCI:)?(?P<pci>" + _PCI + r")(?![0-9a-fA-F:])")
_GI = lazy(r"GPU-I:\s*(?P<gi>\d{1,18}(?!\d))")
_SEVERITY = lazy(r"^\s*(Fatal|Non-fatal|Nonfatal)\b", re.IGNORECASE)
_FELL_OFF = lazy(r"NVRM: GPU (?:at )?(?P<pci>\S+?):? (?:GPU )?has fallen off the bus")
# 570-era drivers say it over three lines: "NVRM: The NVIDIA GPU 0000:b3:00.0" / "NVRM: (PCI ID:
# 10de:26b5) installed in this system has" / "NVRM: fallen off the bus and is not responding".
_FELL_OFF_HEAD = lazy(r"NVRM: The NVIDIA GPU (?P<pci>\S+)\s*$")
_FELL_OFF_TAIL = lazy(r"NVRM:.*\bfallen off the bus")
# GSP-era drivers print a banner instead of the usual line for some Xids (119: GSP timeout).
_GSP_BANNER = lazy(r"NVRM: _kgspLogXid(?P<xid>\d{1,18}(?!\d)):")
_UUID = lazy(r"NVRM: GPU at (?:PCI:)?(?P<pci>" + _PCI + r"): (?P<uuid>GPU-[0-9a-fA-F-]{36})")
# "Kernel Module  535.161.07  Sat Feb ..." and "Open Kernel Module for x86_64  595.71.05  Release"
_DRIVER = lazy(
    r"NVRM: loading NVIDIA .*?Kernel Module\b.*?\s(?P<ver>\d{3}\.\d{1,18}(?:\.\d{1,12})?(?!\d))\b"
)
_PID = lazy(r"\bpid=(?:'?<unknown>'?|(?P<pid>\d{1,18}(?!\d)))")
_NAME = lazy(r"\bname=(?P<name><unknown>|[^,]+?)(?:,|$)")
_CAUSED_BY = lazy(r"caused by previous Xid (\d{1,18}(?!\d))")
_RECOVERY = lazy(
    r"GPU recovery action changed from 0x[0-9a-fA-F]+ \([^)]*\) to 0x[0-9a-fA-F]+"
    r"(?: \((?P<action>[^)]*)\))?"
)
_LINK = lazy(r"\b[Ll]ink (-?\d{1,18}(?!\d))")

# Time stamps as kernel logs print them.
_T_ISO = lazy(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[.,]\d{1,9})?(Z|[+-]\d\d:?\d\d)?")
_T_HUMAN = lazy(r"\[(?:\w{3} )?(\w{3}) +(\d{1,2}) (\d\d:\d\d:\d\d) (\d{4})\]")
_T_SYSLOG = lazy(r"^(?:<\d{1,18}(?!\d)>)?(\w{3}) +(\d{1,2}) (\d\d:\d\d:\d\d)\b")
_T_MONO = lazy(r"\[\s*(\d{1,12}\.\d{1,9})\]")
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}


@record(frozen=True)
class CatalogEntry:
    xid: str
    meaning: str
    category: str  # hardware | app | unknown
    action: str
    nvidia_bucket: str
    caps_memory: bool
    source: str | None


@functools.cache
def catalog(path: str | None = None) -> dict[str, CatalogEntry]:
    """NVIDIA's Xid meanings, as data shipped with runbook (reference data, not site
    configuration: cached per path for the life of the process)."""
    p = Path(path) if path else Path(packaged_dir()) / "xid_catalog.yaml"
    data = read_yaml(p, "Xid catalog", "reinstall runbook: the catalog ships inside the package")
    try:
        rows = data["xids"]
        return {
            str(r["xid"]): CatalogEntry(
                xid=str(r["xid"]),
                meaning=r["meaning"],
                category=r["category"],
                action=r["action"],
                nvidia_bucket=r["nvidia_bucket"],
                caps_memory=bool(r["caps_memory"]),
                source=r.get("source"),
            )
            for r in rows
        }
    except (KeyError, TypeError) as e:
        raise ConfigError(
            f"Xid catalog {p} is malformed: {e}",
            hint="reinstall runbook: the catalog ships inside the package",
        ) from None


def lookup(xid: int | str) -> CatalogEntry | None:
    return catalog().get(str(xid))


@record
class XidEvent:
    xid: int
    pci: str | None  # None: the banner form names no device
    line: int
    text: str
    pid: int | None = None
    process_name: str | None = None
    mig_gpu_instance: int | None = None
    caused_by_xid: int | None = None
    recovery_action: str | None = None
    nvlink_link: int | None = None
    time: str | None = None  # as printed
    when: datetime | None = None  # absolute, when the framing gives one
    # xid | sxid | gsp (banner, no device) | fell_off (no Xid number printed: treated as 79)
    source: str = "xid"
    severity: str | None = None  # SXid only: fatal | non-fatal, as printed
    host: str | None = None  # output of several nodes (pdsh, clush, dshbak): whose kernel log

    @property
    def is_gpu(self) -> bool:
        """A GPU's own event; an NVSwitch SXid is a fabric error, not the GPU's."""
        return self.source != "sxid"

    @property
    def category(self) -> str:
        """hardware | app | unknown, from the catalog; an app-class Xid caused by a hardware one
        (Xid 45 after 145/149) is hardware; 154 follows its recovery action."""
        if self.source == "sxid":
            return "hardware"
        if self.xid == 154:
            none = (self.recovery_action or "").strip().lower() in {"", "none"}
            return "unknown" if none else "hardware"
        own = lookup(self.xid)
        cat = own.category if own else "unknown"
        if self.caused_by_xid is not None and cat != "hardware":
            cause = lookup(self.caused_by_xid)
            if cause and cause.category == "hardware":
                return "hardware"
        return cat

    def contract(self) -> dict:
        if not self.is_gpu:  # the NVSwitch fabric's: a category of its own, never a GPU's
            return {
                "sxid": self.xid,
                "pci": self.pci,
                "severity": self.severity,
                "time": self.time,
                "category": "fabric",
            }
        return {
            "xid": self.xid,
            "pci": self.pci,
            "pid": self.pid,
            "time": self.time,
            "category": self.category,
        }


@record
class KernelLog:
    events: list[XidEvent] = field(default_factory=list)
    gpu_uuids: dict[str, str] = field(default_factory=dict)  # pci -> GPU-uuid
    driver: str | None = None
    stale_dropped: int = 0  # events older than the window, dropped by `since`

    @property
    def xids(self) -> list[int]:
        """Xid numbers as printed (a fallen-off-the-bus line without a number is not one)."""
        return [e.xid for e in self.events if e.source in ("xid", "gsp")]

    @property
    def sxids(self) -> list[int]:
        """NVSwitch SXid numbers, apart from the GPUs' Xids."""
        return [e.xid for e in self.events if e.source == "sxid"]

    def gpu_events(self) -> list[XidEvent]:
        return [e for e in self.events if e.is_gpu]

    def fabric(self) -> list[XidEvent]:
        return [e for e in self.events if not e.is_gpu]

    def category(self) -> str | None:
        """One word for the GPUs' events: per GPU, hardware beats app beats unknown; GPUs that
        disagree between hardware and app make it `mixed`. NVSwitch SXids are not counted with
        them: a log of SXids alone is `fabric`."""
        events = self.gpu_events()
        if not events:
            return "fabric" if self.fabric() else None
        per_gpu: dict[str, set[str]] = {}
        for e in events:
            per_gpu.setdefault(_pci_key(e.pci), set()).add(e.category)
        cats = {next(c for c in ("hardware", "app", "unknown") if c in s) for s in per_gpu.values()}
        if len(cats) == 1:
            return cats.pop()
        if "hardware" in cats and "app" in cats:
            return "mixed"
        return "hardware" if "hardware" in cats else "app"

    def hardware(self) -> list[XidEvent]:
        """The GPUs' hardware-class events (NVSwitch SXids are in `fabric`)."""
        return [e for e in self.gpu_events() if e.category == "hardware"]


def _pci_key(pci: str | None) -> str:
    """0000:01:00, 00000000:01:00.0 and 0000:01:00.0 name the same device."""
    if pci is None:
        return "?"
    parts = pci.lower().split(":")
    if len(parts) == 3:
        dom, bus, dev = parts
        return f"{int(dom, 16):04x}:{bus}:{dev.split('.')[0]}"
    return pci.lower()


def _time(line: str, year_hint: int | None) -> tuple[str | None, datetime | None]:
    if m := _T_ISO.search(line):
        raw = m.group(0)
        try:
            stamp = m.group(1) + (m.group(2) or "")
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            return raw, when.replace(tzinfo=None) if when.tzinfo is None else when
        except ValueError:
            return raw, None
    if m := _T_HUMAN.search(line):
        mon, day, hms, year = m.groups()
        try:
            when = datetime.strptime(
                f"{year}-{_MONTHS[mon]:02d}-{int(day):02d} {hms}", "%Y-%m-%d %H:%M:%S"
            )
            return m.group(0).strip("[]"), when
        except (KeyError, ValueError):
            return m.group(0).strip("[]"), None
    if m := _T_SYSLOG.search(line):
        mon, day, hms = m.groups()
        raw = m.group(0).lstrip("<0123456789>")
        if year_hint and mon in _MONTHS:
            try:
                return raw, datetime.strptime(
                    f"{year_hint}-{_MONTHS[mon]:02d}-{int(day):02d} {hms}", "%Y-%m-%d %H:%M:%S"
                )
            except ValueError:
                pass
        return raw, None
    if m := _T_MONO.search(line):
        return m.group(1), None  # seconds since boot: no absolute time
    return None, None


def _fell_off(device: str, i: int, line: str, year_hint: int | None) -> XidEvent:
    """A GPU lost from the bus, printed without an Xid number: Xid 79's meaning."""
    dev = _PCI_IN.search(device)
    ev = XidEvent(
        xid=79, pci=dev.group("pci") if dev else None, line=i, text=line.strip(), source="fell_off"
    )
    ev.time, ev.when = _time(line, year_hint)
    return ev


# What a kernel log line starts with, in the framings parse() reads: an NVRM line anywhere, a
# dmesg "[  12.3]" or "[Thu Apr  4 ...]", a syslog "<6>" or "Mar 29 15:38:59", an ISO stamp, a
# "host: " or "kernel: " tag. A line that starts otherwise, after one of these, is its wrapped tail.
# `dmesg -x` puts the facility and level first: "kern  :err   : ".
_STAMP_START = (
    r"NVRM|^\s*(?:\[|<\d{1,3}>|\d{4}-\d\d-\d\d|\d\d?:\d\d:\d\d|[A-Z][a-z]{2}\s+\d{1,2}\s"
    r"|[a-z]{2,8}\s*:[a-z]{2,7}\s*:\s"
)
_LOG_LINE_SURE = lazy(_STAMP_START + ")")  # the group opened after "^\s*(?:"
_LOG_LINE_START = lazy(_STAMP_START + r"|[A-Za-z0-9][\w.-]*:\s)")


def _driver_line(line: str) -> bool:
    """Only the drivers' own lines take an editor's wrapped tail: the GPU driver's (NVRM) and
    the NVSwitch driver's (`nvidia-nvswitchN: SXid ...`)."""
    return "NVRM" in line or "nvidia-nvswitch" in line


def parse(text: str, *, year_hint: int | None = None) -> KernelLog:
    """Every Xid event in a kernel log, in order. `year_hint` dates syslog stamps (no year).

    A kernel log line wrapped by a terminal or an editor is read whole again (a UUID, a process
    name or a driver version cut at the line end is otherwise cut short). Where the lines look
    cut at one width, they are read both as cut and as an editor's wrap, and the reading that
    finds more is kept (an editor's wrap of lines sharing a prefix looks like a cut).

    Kernel logs of several nodes (pdsh/clush prefixes, dshbak or clush -b headers) are read host
    by host, and each event keeps its host: an Xid on one node is not another node's fault."""
    from runbook.evidence import multihost

    # The framing is found on the text without a paste's quote markers, colours and fences.
    parts = multihost.split(plain(text or ""))
    if all(host is None for host, _ in parts):
        return _parse_one(text or "", year_hint)
    out = KernelLog()
    for host, part in parts:
        log = _parse_one(part, year_hint)
        for e in log.events:
            e.host = host
        out.events.extend(log.events)
        for pci, uuid in log.gpu_uuids.items():
            out.gpu_uuids.setdefault(pci, uuid)
        out.driver = out.driver or log.driver
    return out


def _parse_one(text: str, year_hint: int | None) -> KernelLog:
    raw = text.splitlines()
    readings = [
        _parse_lines(
            unwrap(
                raw,
                _LOG_LINE_START.search,
                surely_starts=_LOG_LINE_SURE.search,
                cuts=cuts,
                min_cuts=2,
                opens=_driver_line,
            ),
            year_hint,
        )
        for cuts in ((True, False) if terminal_width(raw, 2) else (False,))
    ]
    return max(readings, key=_found)


def _found(log: KernelLog) -> tuple[int, int]:
    fields = sum(
        (e.pci is not None) + (e.pid is not None) + (e.process_name is not None) for e in log.events
    )
    return len(log.events), fields + len(log.gpu_uuids) + (log.driver is not None)


def _parse_lines(lines: list[str], year_hint: int | None) -> KernelLog:
    out = KernelLog()
    fell_off: list[XidEvent] = []
    for i, line in enumerate(lines):
        if len(line) > 65536:
            line = line[:65536]
        if (m := _FELL_OFF_HEAD.search(line)) and any(
            _FELL_OFF_TAIL.search(nxt[:65536]) for nxt in lines[i + 1 : i + 4]
        ):
            fell_off.append(_fell_off(m.group("pci"), i, line, year_hint))
            continue
        if m := _UUID.search(line):
            out.gpu_uuids[m.group("pci")] = m.group("uuid")
            continue
        if m := _DRIVER.search(line):
            out.driver = m.group("ver")
            continue
        m = _XID.search(line)
        source = "xid"
        if m is None and (m := _SXID.search(line)):
            source = "sxid"
        if m:
            rest = m.group("rest") or ""
            dev = _PCI_IN.search(m.group("dev"))
            ev = XidEvent(
                xid=int(m.group("xid")),
                pci=dev.group("pci") if dev else None,
                line=i,
                text=line.strip(),
                source=source,
            )
            if gi := _GI.search(m.group("dev")):
                ev.mig_gpu_instance = int(gi.group("gi"))
            if source == "sxid" and (sev := _SEVERITY.search(rest)):
                ev.severity = "fatal" if sev.group(1).lower() == "fatal" else "non-fatal"
            if p := _PID.search(rest):
                ev.pid = int(p.group("pid")) if p.group("pid") else None
            if n := _NAME.search(rest):
                name = n.group("name").strip()
                ev.process_name = None if name == "<unknown>" else name
            if c := _CAUSED_BY.search(rest):
                ev.caused_by_xid = int(c.group(1))
            if r := _RECOVERY.search(rest):
                ev.recovery_action = r.group("action") or "unknown"
            if ev.xid in (74, 144, 145, 146, 149) and (lk := _LINK.search(rest)):
                ev.nvlink_link = int(lk.group(1))
            ev.time, ev.when = _time(line, year_hint)
            out.events.append(ev)
            continue
        if m := _GSP_BANNER.search(line):
            xid = int(m.group("xid"))
            prev = out.events[-1] if out.events else None
            if not (prev and prev.source == "gsp" and prev.xid == xid and prev.line == i - 1):
                ev = XidEvent(xid=xid, pci=None, line=i, text=line.strip(), source="gsp")
                ev.time, ev.when = _time(line, year_hint)
                out.events.append(ev)
            else:
                prev.line = i  # one event per banner, however many lines it spans
            continue
        if m := _FELL_OFF.search(line):
            fell_off.append(_fell_off(m.group("pci") or "", i, line, year_hint))
    # A "fallen off the bus" line counts as Xid 79 only where no Xid 79 was printed for that GPU
    # (newer drivers print both), and once per GPU.
    seen = {_pci_key(e.pci) for e in out.events if e.xid == 79}
    for ev in fell_off:
        # An Xid 79 whose device was redacted ("?") may be this GPU's: not counted twice.
        if _pci_key(ev.pci) not in seen and "?" not in seen:
            seen.add(_pci_key(ev.pci))
            out.events.append(ev)
    out.events.sort(key=lambda e: e.line)
    return out


def since(log: KernelLog, start: datetime) -> KernelLog:
    """Only events at or after `start` (the job's start): last week's Xid on a node that has been
    reset since is not this job's fault. Events without an absolute time are kept."""
    kept, dropped = [], 0
    for e in log.events:
        when = e.when
        if when is not None and start is not None:
            a, b = when, start
            if (a.tzinfo is None) != (b.tzinfo is None):  # compare wall clocks as printed
                a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
            if a < b:
                dropped += 1
                continue
        kept.append(e)
    return KernelLog(
        events=kept,
        gpu_uuids=log.gpu_uuids,
        driver=log.driver,
        stale_dropped=log.stale_dropped + dropped,
    )
