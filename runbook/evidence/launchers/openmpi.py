"""Open MPI (mpirun / mpiexec; prterun in 5.x): the summary of the first process to exit
non-zero (`Process name: [[6341,1],0]`, 4.x [[job,step],rank]; 5.x [prterun-host-123@1,0]; then
`Exit code:    1`), a process that ended without MPI_Finalize (`mpirun has exited due to process
rank 1 with PID 4017 on` / `node clsockeyev1 exiting improperly`), and the first process it saw
die by a signal (`mpirun noticed that process rank 18596 with PID 1035144 on node b3168 exited on
signal 9 (Killed).`). The rank is the MPI rank, the node the host it ran on."""

from __future__ import annotations

from runbook.evidence.events import EXIT, SIGNAL, RankEvent, next_lines, signal_name
from runbook.evidence.launchers import Line, Recognizer
from runbook.lazyre import lazy

_PROCESS = lazy(
    r"Process name:\s*\[(?:\[[^\]]*\]|[^\[\],\s]+),(\d{1,18}(?!\d))\]", needs="Process name:"
)
_EXIT = lazy(r"Exit code:\s*(-?\d{1,18}(?!\d))", needs="Exit code:")
_IMPROPER = lazy(
    r"\b(?:mpirun|mpiexec|orterun|prterun) has exited due to process rank (\d{1,18}(?!\d)) with "
    r"PID (\d{1,18}(?!\d)) on(?:\s+node (\S+))?",
    needs="has exited due to process rank",
)
_IMPROPER_NODE = lazy(r"^\s*node (\S+) exiting improperly", needs="exiting improperly")
NOTICED = lazy(
    r"\b(?:mpirun|mpiexec|orterun|prterun) noticed that process rank (\d{1,18}(?!\d)) with PID "
    r"(\d{1,18}(?!\d)) on node (\S+?) exited on signal (\d{1,3})(?: \(([^)]*)\))?",
    needs="noticed that process rank",
)


def _first_nonzero(ln: Line) -> list[RankEvent] | None:
    if not (m := _PROCESS.search(ln.text)):
        return None
    ex = next_lines(ln.stripped, ln.i, _EXIT)
    status = int(ex.group(1)) if ex else None
    return [
        RankEvent(
            kind=EXIT,
            line=ln.i,
            rank=int(m.group(1)),
            time=ln.when,
            exit_code=status,
            detail="Open MPI: the first process to exit non-zero"
            + (f" (exit code {status})" if status is not None else ""),
            source="mpirun",
        )
    ]


def _improper(ln: Line) -> list[RankEvent] | None:
    if not (m := _IMPROPER.search(ln.text)):
        return None
    nx = None if m.group(3) else next_lines(ln.stripped, ln.i, _IMPROPER_NODE, reach=1)
    node = m.group(3) or (nx.group(1) if nx else None)
    return [
        RankEvent(
            kind=EXIT,
            line=ln.i,
            rank=int(m.group(1)),
            node=node,
            time=ln.when,
            detail=f"Open MPI: rank {m.group(1)} (pid {m.group(2)}) exited improperly",
            source="mpirun",
        )
    ]


def _noticed(ln: Line) -> list[RankEvent] | None:
    if not (m := NOTICED.search(ln.text)):
        return None
    signum = int(m.group(4))
    return [
        RankEvent(
            kind=SIGNAL,
            line=ln.i,
            rank=int(m.group(1)),
            node=m.group(3),
            time=ln.when,
            signal=signal_name(signum),
            detail=f"Open MPI: rank {m.group(1)} (pid {m.group(2)}) exited on signal "
            f"{signum}" + (f" ({m.group(5)})" if m.group(5) else ""),
            source="mpirun",
        )
    ]


RECOGNIZER = Recognizer(
    name="openmpi",
    gates=(
        "Process name:",
        "Exit code:",
        "has exited due to process rank",
        "exiting improperly",
        "noticed that process rank",
    ),
    readers=(_first_nonzero, _improper, _noticed),
    order=70,
    rejoin=((lazy(r"noticed that process", needs="noticed that process"), NOTICED),),
)
