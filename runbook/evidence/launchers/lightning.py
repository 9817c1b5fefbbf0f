"""Lightning's subprocess launcher (Trainer/Fabric with strategy ddp) watches the processes it
started and, on the first it finds exited non-zero, logs `[rank: 1] Child process with PID 2977
terminated with code 4. Forcefully terminating all other processes to avoid zombies` and kills
the rest, itself included (the shell's "Killed" after it is that teardown). The rank is the
child's index + 1: its local rank on the node (rank 0 is the launching process itself)."""

from __future__ import annotations

from runbook.evidence.events import RankEvent, coded_exit
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_CHILD = lazy(
    r"\[rank: (\d{1,9})\] Child process with PID (\d{1,18}(?!\d)) terminated with code "
    r"(-?\d{1,18}(?!\d))",
    needs="Child process with PID",
)


def _child(ln: Line) -> list[RankEvent] | None:
    if not (m := _CHILD.search(ln.printed)):  # the rank is in the prefix strip_line drops
        return None
    code = int(m.group(3))
    return [
        coded_exit(
            ln.i,
            int(m.group(1)),
            code,
            ln.when,
            "lightning",
            f"Lightning launcher: local rank {m.group(1)} (pid {m.group(2)}) "
            f"terminated with code {code}",
            local=True,
            reactions=("SIGABRT",),  # the NCCL watchdog's abort, as elsewhere
        )
    ]


RECOGNIZER = Recognizer(
    name="lightning",
    gates=("Child process with PID",),
    readers=(_child,),
    order=100,
)
