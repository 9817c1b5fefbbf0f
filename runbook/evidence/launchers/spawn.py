"""torch.multiprocessing.spawn (mp.spawn) names the process by its spawn index, which is the
rank within the node (the global rank on one node): `-- Process 0 terminated with the following
error:` heads that process's own traceback; `process 0 terminated with exit code 1` / `... with
signal SIGKILL` is ProcessExitedException's message."""

from __future__ import annotations

from runbook.evidence.events import EXIT, SIGNAL, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_RAISED = lazy(
    r"^\s*-- Process (\d{1,18}(?!\d)) terminated with the following error", needs="terminated with"
)
EXITED = lazy(
    r"\bprocess (\d{1,18}(?!\d)) terminated with (?:exit code (-?\d{1,18}(?!\d))|signal (SIG[A-Z]+))",
    needs="terminated with",
)


def _ended(ln: Line) -> list[RankEvent] | None:
    raised = _RAISED.search(ln.text)
    if not (m := (raised or EXITED.search(ln.text))):
        return None
    status = int(m.group(2)) if not raised and m.group(2) else None
    sig = None if raised else m.group(3)
    how = "raised" if raised else f"terminated with {sig}" if sig else f"exit code {status}"
    return [
        RankEvent(
            kind=SIGNAL if sig else EXIT,
            line=ln.i,
            rank=int(m.group(1)),
            local_rank=int(m.group(1)),
            time=ln.when,
            exit_code=status,
            signal=sig,
            detail=f"torch.multiprocessing.spawn: process {m.group(1)} (spawn index) {how}",
            source="spawn",
        )
    ]


def heads(raw: list[str]) -> list[tuple[int, int]]:
    """(line, spawn index) of each `-- Process N terminated with the following error:`: an OOM
    message below one, without a rank of its own, is that process's."""
    return [(i, int(m.group(1))) for i, s in enumerate(raw) if (m := _RAISED.search(s))]


RECOGNIZER = Recognizer(
    name="spawn",
    gates=(
        "terminated with the following error",
        "terminated with exit code",
        "terminated with signal",
    ),
    readers=(_ended,),
    order=80,
    rejoin=((lazy(r"\bprocess \d{1,18} terminated\b", needs=" terminated"), EXITED),),
    heads=heads,
)
