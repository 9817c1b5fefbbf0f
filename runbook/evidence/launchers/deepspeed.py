"""DeepSpeed's launcher (`deepspeed train.py`, launch.py's sigkill_handler): `[launch.py:N:
sigkill_handler] [...'--local_rank=3'...] exits with return code = -9`, and `Killing subprocess
P` for the processes it then tears down (consequences)."""

from __future__ import annotations

from runbook.evidence.events import EXIT, SIGNAL, SIGNALS, RankEvent
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

RETURN = lazy(
    r"sigkill_handler\].*exits with return code = (-?\d{1,18}(?!\d))", needs="sigkill_handler]"
)
_LOCAL_RANK = lazy(r"--local_rank=(\d{1,18}(?!\d))", needs="--local_rank=")
_KILLING = lazy(r"Killing subprocess (\d{1,18}(?!\d))", needs="Killing subprocess")


def _returned(ln: Line) -> list[RankEvent] | None:
    if not (m := RETURN.search(ln.text)):
        return None
    code = int(m.group(1))
    lr = _LOCAL_RANK.search(ln.text)
    return [
        RankEvent(
            kind=SIGNAL if code < 0 else EXIT,
            line=ln.i,
            time=ln.when,
            local_rank=int(lr.group(1)) if lr else None,
            exit_code=code,
            signal=SIGNALS.get(-code) if code < 0 else None,
            detail=f"deepspeed launcher: return code {code}",
        )
    ]


def _killing(ln: Line) -> list[RankEvent] | None:
    if not (m := _KILLING.search(ln.text)):
        return None
    return [
        RankEvent(
            kind=SIGNAL,
            line=ln.i,
            time=ln.when,
            consequence=True,
            detail=f"launcher killed pid {m.group(1)}",
        )
    ]


RECOGNIZER = Recognizer(
    name="deepspeed",
    # Not "sigkill_handler]": with it GNU grep's multi-string search on the node took 0.05 s a
    # GiB longer (bench/diagnose_local.py's file); the return line always says this.
    gates=("exits with return code", "Killing subprocess"),
    readers=(_returned, _killing),
    order=30,
    rejoin=((lazy(r"sigkill_handler\]", needs="sigkill_handler]"), RETURN),),
)
