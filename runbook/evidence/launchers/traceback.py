"""The catch-all, asked last: the exception line that ends a Python traceback
(`RuntimeError: ...`, `torch.distributed.DistBackendError: ...`, `KeyboardInterrupt`), the
failure of the rank its prefix names (or of a single-process job). c10's CPU allocator refusing
host memory (`DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes`, and the
Windows wording `not enough memory`) is host RAM, raised by the rank that asked. A line that
holds an OOM message is oom_message's, not this reader's."""

from __future__ import annotations

from runbook.evidence.events import EXIT, HOST_OOM, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.evidence.units import human_mib, to_mib
from runbook.lazyre import lazy

_EXCEPTION_LINE = lazy(r"^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit))(?::|$)")
# A survivor's exception, raised because another rank went away.
_CONSEQUENCE_TEXT = lazy(
    r"NCCL communicator was aborted|Watchdog|watchdog|timed out|Connection reset|"
    r"Socket Timeout|Broken pipe|ChildFailedError|ProcessGroupNCCL is aborted|"
    r"Connection closed by peer|recvValue failed|The server socket has failed",
)
_CPU_ALLOC = lazy(
    r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate "
    r"(\d{1,18}(?!\d)) bytes",
    needs="DefaultCPUAllocator",
)


def _raised(ln: Line) -> list[RankEvent] | None:
    if ln.i in ln.oom_lines or not (m := _EXCEPTION_LINE.match(ln.text.strip())):
        return None
    line = ln.text
    # Without a rank prefix it is still the failure of a single-process job (or of a rank the
    # log does not name).
    host = _CPU_ALLOC.search(line)
    refused = to_mib(host.group(1), "bytes") if host else None
    return [
        RankEvent(
            kind=HOST_OOM if host else EXIT,
            line=ln.i,
            rank=ln.rank,
            time=ln.when,
            node=ln.host(),
            detail=(
                f"the CPU allocator could not get {human_mib(refused)} of host memory "
                f"({m.group(1)})"
                if host
                else line.strip()[:200]
            ),
            consequence=not host and bool(_CONSEQUENCE_TEXT.search(line)),
            source="c10" if host else "log",
            request_mib=refused,
        )
    ]


RECOGNIZER = Recognizer(
    name="traceback",
    gates=("Error", "Exception", "Interrupt", "Exit"),
    readers=(_raised,),
    order=1000,
)
