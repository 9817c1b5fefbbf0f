"""NCCL's watchdog on a rank that waited for a collective (1.x `[E ProcessGroupNCCL.cpp:N]
[Rank N] Watchdog caught collective operation timeout`, 2.x `[rankN]:[E...] ... Work WorkNCCL(...)
ran for N milliseconds before timing out`). Always a consequence: the rank that timed out was
waiting for one that had already failed."""

from __future__ import annotations

from runbook.evidence.events import NCCL_TIMEOUT, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

WATCHDOG = lazy(
    r"\bRank (\d{1,18}(?!\d))\]\s*(?:Watchdog caught collective operation timeout|Work WorkNCCL.*timed out)"
    r".*?(?:SeqNum=(\d{1,18}(?!\d)))?(?:.*?OpType=(\w+))?",
    needs="Rank ",
)


def _timeout(ln: Line) -> list[RankEvent] | None:
    if not (m := WATCHDOG.search(ln.text)):
        return None
    return [
        RankEvent(
            kind=NCCL_TIMEOUT,
            line=ln.i,
            rank=int(m.group(1)),
            time=ln.when,
            node=ln.host(),
            detail=ln.text.strip()[:200],
            consequence=True,
        )
    ]


RECOGNIZER = Recognizer(
    name="nccl",
    gates=("Watchdog caught", "WorkNCCL"),
    readers=(_timeout,),
    order=10,
    rejoin=((lazy(r"\bRank \d{1,18}\]", needs="Rank "), WATCHDOG),),
)
