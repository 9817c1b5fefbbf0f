"""Ray's memory monitor kills a worker when the node's host memory passes its threshold: the
task's error or an actor's exit detail (`Task was killed due to the node running low on
memory.`), the detail line (`Memory on the node (IP: ip, ID: ...) where the task ... was running
was A / B`), the raylet's summary (`N Workers (tasks / actors) killed due to memory pressure
(OOM) ... at node (ID: ..., IP: ip)`), and Ray 2.0's `System memory low at node with IP ip`.
Host RAM, not the GPU. The node is named by IP, often on the next line of a wrapped terminal."""

from __future__ import annotations

from runbook.evidence.events import HOST_OOM, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

HOST_OOM_TEXT = lazy(
    r"Task was killed due to the node running low on memory|Memory on the node \(IP|"
    r"killed due to memory pressure \(OOM\)"
    r"|System memory low at node",
    needs="emory",
)
_IP = lazy(r"(?:\bIP:? |\bip=)([0-9A-Fa-f][0-9A-Fa-f.:]*[0-9A-Fa-f])")


def _killed(ln: Line) -> list[RankEvent] | None:
    if not HOST_OOM_TEXT.search(ln.text):
        return None
    raw, i = ln.raw, ln.i
    ip = _IP.search(ln.text) or (i + 1 < len(raw) and _IP.search(raw[i + 1]))
    return [
        RankEvent(
            kind=HOST_OOM,
            line=i,
            time=ln.when,
            node=ip.group(1) if ip else None,
            detail="Ray's memory monitor killed a worker (node host memory)",
            source="ray",
        )
    ]


RECOGNIZER = Recognizer(
    name="ray",
    gates=("Task was killed", "Memory on the node", "(OOM)", "System memory low"),
    readers=(_killed,),
    order=110,
    rejoin=((lazy(r"Workers \(tasks / actors\) killed", needs="Workers (tasks"), HOST_OOM_TEXT),),
)
