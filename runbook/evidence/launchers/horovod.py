"""horovodrun with its Gloo launcher (`horovodrun -np 4 -H host:4 python train.py`, horovod's
runner/gloo_run.py): each rank's output tagged `[2]<stderr>:` (the tag is a line prefix, read by
oom_message.strip_line), and for each process that exits non-zero `Process 2 exit with status
code 1.`, the process being the rank (its slot's rank). Since horovod 0.23 the first one is also
named once, `Terminating remaining workers after failure of Process 2.`, and the others are
stopped with SIGTERM: their `exit with status code 143` (the shell's 128 + 15) is that teardown, a
consequence."""

from __future__ import annotations

from runbook.evidence.events import EXIT, RankEvent, coded_exit
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_EXIT = lazy(
    r"\bProcess (\d{1,9}) exit with status code (-?\d{1,18}(?!\d))", needs="exit with status code"
)
_FIRST = lazy(
    r"Terminating remaining workers after failure of Process (\d{1,9})",
    needs="Terminating remaining workers",
)
_SHELL_SIGNAL = 128  # a shell reports a child killed by signal N as 128 + N


def _exited(ln: Line) -> list[RankEvent] | None:
    if not (m := _EXIT.search(ln.text)):
        return None
    code = int(m.group(2))
    if _SHELL_SIGNAL < code <= _SHELL_SIGNAL + 64:
        code = _SHELL_SIGNAL - code  # as a negative code: the signal that killed it
    return [
        coded_exit(
            ln.i,
            int(m.group(1)),
            code,
            ln.when,
            "horovod",
            f"horovodrun: process {m.group(1)} exited with status code {m.group(2)}",
            reactions=("SIGTERM",),  # horovodrun stopping the others after a failure
        )
    ]


def _first(ln: Line) -> list[RankEvent] | None:
    if not (m := _FIRST.search(ln.text)):
        return None
    return [
        RankEvent(
            kind=EXIT,
            line=ln.i,
            rank=int(m.group(1)),
            time=ln.when,
            detail=f"horovodrun: process {m.group(1)} failed first; the others were terminated",
            source="horovod",
        )
    ]


RECOGNIZER = Recognizer(
    name="horovod",
    gates=("exit with status code", "Terminating remaining workers"),
    readers=(_exited, _first),
    order=105,
)
