"""Before the OOM (issue 56): what the ranks declared, and whether runbook asks, as data in,
data out. The log lines are runbook.instrument's own format (memory_line, checkpoint_on,
checkpoint_written), labelled as `srun -l` labels them; the whole path on the test cluster is
tests/integration/test_prevent.py."""

from __future__ import annotations

import pytest

from runbook.evidence import handler, trend
from runbook.evidence.launcher_log import scan
from runbook.planning import fit as fitting
from runbook.planning.prevent import RUNG, decide
from runbook.report.cost import incident_cost
from runbook.slurm.client import JobInfo
from runbook.words import cost_sentence, fit_source

GIB = 2**30
CARD = int(81559 * 2**20)


def _mem(rank: int, step: int, peak_mib: float, retries: int) -> str:
    return (
        f"{rank}: RUNBOOK_INSTRUMENT mem rank={rank} step={step} allocated={30000 * 2**20} "
        f"peak={int(peak_mib * 2**20)} reserved={int(peak_mib * 2**20)} retries={retries} "
        f"inactive=0 total={CARD}"
    )


def _declared(rank: int, signal: str = "USR1", prevent: str = "yes") -> str:
    return (
        f"{rank}: RUNBOOK_INSTRUMENT checkpoint-signal rank={rank} signal={signal} "
        f"prevent={prevent} hold=120"
    )


def _log(declare=(0, 1, 2, 3), thrash_rank: int = 1, prevent: str = "yes", steps: int = 6) -> str:
    lines = [f"{r}: RUNBOOK_INSTRUMENT start rank={r} torch=2.13.0 cuda=False" for r in range(4)]
    lines += [_declared(r, prevent=prevent) for r in declare]
    for step in range(steps):
        for r in range(4):
            thrash = r == thrash_rank and step >= 1
            lines.append(_mem(r, step, 78000 if thrash else 68400, 5 * step if thrash else 0))
    return "\n".join(lines) + "\n"


def _read(text: str):
    launch = scan(text)
    seen_ranks = {m.rank for m in launch.instrument if m.kind == "start"}
    return launch, handler.read(launch.instrument, seen_ranks)


RUNNING = JobInfo(job_id="77", state="RUNNING")


def _decide(text: str, *, mode: str = "opted_in", person: bool = False, micro: int | None = 8):
    launch, declared = _read(text)
    seen = trend.watch(launch.trends, 0.10)
    f = (
        fitting.from_series(seen.trend, micro_batch=micro, grad_accum=2, margin=0.10)
        if seen
        else None
    )
    return decide(RUNNING, seen, declared, f, mode=mode, person=person)


def test_every_rank_declaring_the_signal_lets_runbook_ask_and_names_the_worst_rank():
    d = _decide(_log())
    assert d.decision == "prevent" and d.verdict == "thrashing" and d.rank == 1
    assert d.signal == "USR1" and d.fit.micro_batch == 4 and d.fit.from_micro_batch == 8
    assert "every rank (0, 1, 2, 3) handles SIGUSR1" in d.reasons[-1]
    assert RUNG == "halve_micro_batch"  # the rung that sets the fitted micro-batch


def test_a_rank_without_the_handler_would_die_of_the_signal_so_runbook_only_reports():
    launch, declared = _read(_log(declare=(0, 2, 3)))
    assert declared.signal is None and declared.missing == [1]
    assert "rank 1 declared no checkpoint handler" in declared.why
    d = _decide(_log(declare=(0, 2, 3)), person=True)
    assert d.decision == "report_only" and "cannot ask it to checkpoint" in d.reasons[-1]


def test_no_handler_at_all_is_reported_only_even_when_a_person_asks():
    d = _decide(_log(declare=()), person=True, mode="declared")
    assert d.decision == "report_only" and "no rank declared a checkpoint handler" in d.reasons[-1]


@pytest.mark.parametrize(
    "mode,prevent,person,decision",
    [
        ("opted_in", "yes", False, "prevent"),
        ("opted_in", "no", False, "report_only"),  # the owner did not opt in
        ("opted_in", "no", True, "prevent"),  # a person asked
        ("declared", "no", False, "prevent"),
        ("never", "yes", False, "report_only"),
        ("never", "yes", True, "prevent"),
    ],
)
def test_the_site_policy_and_the_owners_opt_in_decide_for_the_sweep(
    mode, prevent, person, decision
):
    d = _decide(_log(prevent=prevent), mode=mode, person=person)
    assert d.decision == decision, d.reasons


def test_no_micro_batch_known_means_no_fit_and_nothing_changed():
    d = _decide(_log(), person=True, micro=None)
    assert d.decision == "report_only" and "no micro-batch could be fitted" in d.reasons[-1]


def test_different_signals_on_different_ranks_are_not_sent():
    text = _log(declare=(0, 1, 2)) + _declared(3, signal="USR2") + "\n"
    _, declared = _read(text)
    assert declared.signal is None and "USR1, USR2" in declared.why


def test_a_job_that_is_not_running_or_shows_nothing_is_not_asked():
    launch, declared = _read(_log())
    done = JobInfo(job_id="77", state="COMPLETED")
    assert decide(done, None, declared, None, mode="declared", person=True).decision == (
        "not_running"
    )
    quiet = _decide(_log(thrash_rank=-1))
    assert quiet.decision == "nothing_seen" and "says nothing of a rank" in quiet.reasons[0]


def test_the_checkpoint_written_on_request_is_the_newest_at_or_after_the_step_asked():
    text = (
        "0: RUNBOOK_INSTRUMENT checkpoint rank=0 step=3 path=ckpt/step 3.pt\n"
        "0: RUNBOOK_INSTRUMENT checkpoint rank=0 step=9 path=ckpt/step_9.pt\n"
    )
    lines = scan(text).instrument
    assert handler.written(lines, 6) == (9, "ckpt/step_9.pt")
    assert handler.written(lines, 10) is None
    assert handler.written(lines, None) == (9, "ckpt/step_9.pt")


def test_a_prevented_incidents_cost_says_steps_lost_and_no_detection():
    report = {
        "started": 1000.0,
        "job": {
            "job_id": "77",
            "state": "RUNNING",
            "start": "1970-01-01T00:10:00",
            "tres": "gres/gpu=4",
        },
        "evidence": {
            "runbook": "prevent",
            "prevention": {"checkpoint_step": 5, "last_step_seen": 5, "steps_lost": 0},
        },
        "plan": {"checkpoint": {"mtime": 1001.0}},
        "actions": [{"kind": "cancel", "status": "applied", "value": None, "at": 1004.6}],
    }
    cost = incident_cost(report)
    assert cost["failure_at"] is None and cost["detection_s"] is None
    said = cost_sentence(cost)
    assert said.startswith("steps lost: 0 (the rerun resumes from the checkpoint the job wrote")
    assert "at step 5" in said and "after the failure" not in said
    assert "GPU-hours from that checkpoint to the cancel: 0.004 on 4 GPUs" in said


def test_a_fit_says_where_its_fixed_part_came_from():
    assert fit_source("oom_message+telemetry").startswith("from the job's own memory series")
    assert fit_source("oom_message+params") == "from the parameter count"
    assert fit_source("lineage") == "from the lineage's two attempts"
