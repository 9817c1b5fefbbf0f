"""MPICH's Hydra (mpiexec) prints a block per process that ended badly: `=   RANK 6 PID 2447372
RUNNING AT node0009` (RANK is absent in some versions), then `=   KILLED BY SIGNAL: 9 (Killed)`
or `=   EXIT CODE: 9`."""

from __future__ import annotations

from runbook.evidence.events import EXIT, SIGNAL, RankEvent, next_lines, signal_name
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_AT = lazy(
    r"^[=\s]*(?:RANK (\d{1,18}(?!\d)) )?PID (\d{1,18}(?!\d)) RUNNING AT (\S+)", needs="RUNNING AT"
)
_END = lazy(
    r"^[=\s]*(?:KILLED BY SIGNAL: (\d{1,3})(?: \(([^)]*)\))?|EXIT CODE: (-?\d{1,18}(?!\d)))",
)  # no gate: it only runs on the two lines after a RUNNING AT line


def _ended(ln: Line) -> list[RankEvent] | None:
    if not (m := _AT.search(ln.text)):
        return None
    end = next_lines(ln.stripped, ln.i, _END)
    signum = int(end.group(1)) if end and end.group(1) else None
    status = int(end.group(3)) if end and end.group(3) else None
    return [
        RankEvent(
            kind=SIGNAL if signum is not None else EXIT,
            line=ln.i,
            rank=int(m.group(1)) if m.group(1) else None,
            node=m.group(3),
            time=ln.when,
            signal=signal_name(signum) if signum is not None else None,
            exit_code=status,
            detail=f"MPICH Hydra: pid {m.group(2)} on {m.group(3)} ended badly"
            + (f" (signal {signum})" if signum is not None else "")
            + (f" (exit code {status})" if status is not None else ""),
            source="mpiexec",
        )
    ]


RECOGNIZER = Recognizer(
    name="hydra",
    # The block's second line is read with its first; the filter keeps it too.
    gates=("RUNNING AT", "KILLED BY SIGNAL", "EXIT CODE:"),
    readers=(_ended,),
    order=60,
)
