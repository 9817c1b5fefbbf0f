"""torchrun / torch.distributed.elastic: the `ChildFailedError` report (Root Cause and Failures
entries, `stderr: ` prefixed, several agents' reports in one file, copied from a rendered page
with field names and values on separate lines) and the older one-line `failed (exitcode: N)
local_rank: N (pid: P) of binary`."""

from __future__ import annotations

from runbook.evidence.events import EXIT, SIGNAL, SIGNALS, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_ENTRY = lazy(r"^\s*\[(\d{1,18}(?!\d))\]:\s*$", needs="]:")
_NAMES = r"(time|host|rank|exitcode|error_file|traceback)"
_FIELD = lazy(r"^\s*" + _NAMES + r"\s*:\s*(.*?)\s*$")
_RANK = lazy(r"(\d{1,18}(?!\d))\s*\(local[_ ]rank:\s*(\d{1,18}(?!\d))\)", needs="rank:")
# A summary copied from a rendered page loses its layout: field names alone on their lines, their
# values on the lines after them, in order ("time" / "host" / "2023-09-14 01:45:50" / "node-1").
_BARE_FIELD = lazy(r"^\s*" + _NAMES + r"\s*:?\s*$")
_EXIT = lazy(r"(-?\d{1,18}(?!\d))\s*\(pid:\s*(\d{1,18}(?!\d))\)", needs="(pid:")
_SIGNAL = lazy(r"Signal\s+(\d{1,18}(?!\d))\s+\((SIG\w+)\)", needs="Signal")
_ROOT = lazy(r"Root Cause \(first observed failure\)", needs="Root Cause")
_RULE = lazy(r"^\s*(?:={10,}|-{10,})\s*$")
ONE_LINE = lazy(
    r"failed \(exitcode: (-?\d{1,18}(?!\d))\) local_rank: (\d{1,18}(?!\d)) \(pid: (\d{1,18}(?!\d))\)(?: of binary)?",
    needs="failed (exitcode: ",
)


def _one_line(ln: Line) -> list[RankEvent] | None:
    if not (m := ONE_LINE.search(ln.text)):
        return None
    code = int(m.group(1))
    return [
        RankEvent(
            kind=SIGNAL if code < 0 else EXIT,
            line=ln.i,
            local_rank=int(m.group(2)),
            time=ln.when,
            exit_code=code,
            detail=f"exitcode {code} (pid {m.group(3)})",
            signal=SIGNALS.get(-code) if code < 0 else None,
        )
    ]


def entries(stripped: list[str], raw: list[str]) -> list[RankEvent]:
    """The report's entries ("[0]:" then time, host, rank, exitcode, error_file, traceback)."""
    events: list[RankEvent] = []
    cur: dict | None = None
    root_next = False

    def close():
        nonlocal cur
        if cur and cur.get("exitcode") is not None:
            events.append(_entry_event(cur))
        cur = None

    for i, text in enumerate(stripped):
        if _ROOT.search(text):
            close()
            root_next = True
            continue
        if _ENTRY.match(text):
            close()
            cur = {"line": i, "root": root_next}
            root_next = False
            continue
        m = _FIELD.match(text)
        if m:
            if cur is None:  # an excerpt that starts inside an entry
                cur = {"line": i, "root": False}
            cur[m.group(1)] = m.group(2)
            continue
        if _RULE.match(text) or text.strip().startswith("Failures:"):
            close()
            continue
        if cur is not None:
            _loose_field(cur, text)
    close()
    return events


def _loose_field(entry: dict, text: str) -> None:
    """A line of an entry that is not `name : value`: a field name alone (its value comes on a
    later line), a value for the oldest name still waiting, or fields glued on one line
    ("rank2 (local rank: 2)exitcode: -9 (pid: 36071)"), each taken only where still unset."""
    if m := _BARE_FIELD.match(text):
        entry.setdefault("waiting", []).append(m.group(1))
        return
    glued = False
    if _RANK.search(text):
        entry.setdefault("rank", text)
        glued = True
    if "exitcode" in text and _EXIT.search(text):
        entry.setdefault("exitcode", text)
        glued = True
    waiting = entry.get("waiting")
    if not glued and waiting and text.strip():
        entry.setdefault(waiting.pop(0), text.strip())


def _entry_event(entry: dict) -> RankEvent:
    rank = local = None
    if m := _RANK.search(entry.get("rank", "")):
        rank, local = int(m.group(1)), int(m.group(2))
    code = None
    if m := _EXIT.search(entry.get("exitcode", "")):
        code = int(m.group(1))
    sig = None
    if m := _SIGNAL.search(entry.get("traceback", "")):
        sig = m.group(2)
    elif code is not None and code < 0:
        sig = SIGNALS.get(-code, f"signal {-code}")
    # A rank killed by SIGABRT is the NCCL watchdog tearing it down (a consequence) unless nothing
    # else failed; SIGKILL is usually the kernel's OOM killer or the launcher.
    kind = SIGNAL if sig else EXIT
    host = entry.get("host")
    return RankEvent(
        kind=kind,
        line=entry["line"],
        rank=rank,
        local_rank=local,
        node=host if host and host != "<N/A>" else None,
        time=entry.get("time"),
        detail=("root cause " if entry.get("root") else "")
        + f"exitcode {code}"
        + (f" ({sig})" if sig else ""),
        consequence=sig == "SIGABRT",
        signal=sig,
        exit_code=code,
    )


RECOGNIZER = Recognizer(
    name="torchrun",
    # "(pid: " is in both the entries' exitcode lines and the one-line form.
    gates=("(pid: ", "(local_rank: ", "Root Cause", "Failures:"),
    readers=(_one_line,),
    order=20,
    entries=entries,
    rejoin=((lazy(r"failed \(exitcode: ", needs="failed (exitcode: "), ONE_LINE),),
)
