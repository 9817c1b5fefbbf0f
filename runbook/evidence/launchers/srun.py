"""srun's per-node verdict on its tasks: `srun: error: gpu-02: task 1: Exited with exit code 1`,
`... tasks 0-57,59-63: Terminated` (its teardown of the step), `task 3: Killed`, `task 0: Out Of
Memory` (the cgroup's OOM killer: host RAM). The task id is the global rank under srun. Whether a
Killed or Exited task is a cause or a consequence is decided with the rank's own lines
(launcher_log._srun_notices)."""

from __future__ import annotations

import re

from runbook.evidence.events import EXIT, HOST_OOM, SIGNAL, RankEvent, task_ranks
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

# The shape "error: NODE: task(s) LIST: WHAT" is srun's own, so a line whose "srun" tag was cut
# in the paste ("run: error: nid00018: tasks 0-23: Killed") still reads.
SRUN = lazy(
    r"(?:^|\s|\bs?run: )error: (?P<node>[^\s:]+): tasks? (?P<tasks>\d[\d,\- ]*): (?P<what>.*)$",
    needs="error: ",
)


def _verdict(ln: Line) -> list[RankEvent] | None:
    if not (m := SRUN.search(ln.text)):
        return None
    what = m.group("what").strip()
    kind, consequence = EXIT, False
    code: int | None = None
    sig: str | None = None
    if re.search(r"Out Of Memory", what, re.I):
        kind = HOST_OOM
    elif re.search(r"Terminated|Aborted", what):
        kind, consequence, sig = SIGNAL, True, "SIGTERM"  # srun tearing the step down
    elif re.search(r"Killed", what):
        kind, sig = SIGNAL, "SIGKILL"  # decided in _srun_notices: OOM killer or teardown
    if c := re.search(r"exit code (\d{1,18}(?!\d))", what):
        code = int(c.group(1))
    return [
        RankEvent(
            kind=kind,
            line=ln.i,
            rank=r,
            node=m.group("node"),
            time=ln.when,
            detail=what,
            consequence=consequence,
            exit_code=code,
            signal=sig,
            source="srun",
        )
        for r in task_ranks(m.group("tasks"))
    ]


RECOGNIZER = Recognizer(
    name="srun",
    # What srun says of a task: an exit, the OOM killer, or strsignal()'s name of the signal. Not
    # ": task" (every srun line has it): in GNU grep's multi-string search on the node it cost
    # 0.1 s a GiB of log more than these (bench/diagnose_local.py's file).
    gates=(
        "Exited with exit code",
        "Out Of Memory",
        "Terminated",
        "Killed",
        "Aborted",
        "Segmentation fault",
        "Bus error",
        "Illegal instruction",
        "Floating point exception",
        "Hangup",
        "User defined signal",
    ),
    readers=(_verdict,),
    order=40,
    rejoin=((lazy(r"\bs?run: error: ", needs="run: error: "), SRUN),),
)
