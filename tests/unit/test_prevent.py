"""Before the OOM: what the ranks declared, counted against the world size their launcher set
and Slurm's own figures, their answers to a request, and whether runbook asks, as data in, data
out. The log lines are runbook.instrument's own format (memory_line, checkpoint_on,
checkpoint_written), labelled as `srun -l` labels them; the instrument's side runs for real in
tests/unit/test_instrument_checkpoint.py, the whole path on the test cluster in
tests/integration/test_prevent.py (torchrun, a shell wrapper, srun)."""

from __future__ import annotations

from datetime import datetime

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
REQ = "/scratch/alice/run/.runbook-checkpoint-77"


def _mem(rank: int, step: int, peak_mib: float, retries: int) -> str:
    return (
        f"{rank}: RUNBOOK_INSTRUMENT mem rank={rank} step={step} allocated={30000 * 2**20} "
        f"peak={int(peak_mib * 2**20)} reserved={int(peak_mib * 2**20)} retries={retries} "
        f"inactive=0 total={CARD}"
    )


def _declared(
    rank: int,
    prevent: str = "yes",
    *,
    world: int = 4,
    launcher: str = "torchrun",
    local_world: str = "2",
    nodes: int = 2,
    request: str = REQ,
    hold: float = 900,
) -> str:
    host = f"gpu-0{1 + rank // 2}"
    tasks = 2 if launcher == "torchrun" else world
    return (
        f"{rank}: RUNBOOK_INSTRUMENT checkpoint-request rank={rank} world={world} "
        f"local_rank={rank % 2} local_world={local_world} slurm_ntasks={tasks} "
        f"slurm_nnodes={nodes} launcher={launcher} host={host} pid={1000 + rank} "
        f"prevent={prevent} hold={hold:g} request={request}"
    )


def _log(
    declare=(0, 1, 2, 3), thrash_rank: int = 1, prevent: str = "yes", steps: int = 6, **kw
) -> str:
    lines = [f"{r}: RUNBOOK_INSTRUMENT start rank={r} torch=2.13.0 cuda=False" for r in range(4)]
    lines += [_declared(r, prevent=prevent, **kw) for r in declare]
    for step in range(steps):
        for r in range(4):
            thrash = r == thrash_rank and step >= 1
            lines.append(_mem(r, step, 78000 if thrash else 68400, 5 * step if thrash else 0))
    return "\n".join(lines) + "\n"


# Slurm's record of a 2-node job: 2 tasks (a torchrun agent per node), or 4 (srun, a task a rank).
TORCHRUN_JOB = JobInfo(
    job_id="77", state="RUNNING", num_nodes=2, num_tasks=2, nodes=["gpu-01", "gpu-02"]
)
SRUN_JOB = JobInfo(
    job_id="77", state="RUNNING", num_nodes=2, num_tasks=4, nodes=["gpu-01", "gpu-02"]
)


def _read(text: str, job=TORCHRUN_JOB):
    launch = scan(text)
    return launch, handler.read(launch.instrument, job, handler.seen_ranks(launch))


def _decide(
    text: str,
    *,
    mode: str = "opted_in",
    person: bool = False,
    micro: int | None = 8,
    job=TORCHRUN_JOB,
    convention=None,
):
    launch, declared = _read(text, job)
    seen = trend.watch(launch.trends, 0.10)
    f = (
        fitting.from_series(seen.trend, micro_batch=micro, grad_accum=2, margin=0.10)
        if seen
        else None
    )
    return decide(
        job, seen, declared, f, mode=mode, person=person, wait_s=300, convention=convention
    )


def test_every_rank_of_the_world_declaring_lets_runbook_ask_and_names_the_worst_rank():
    d = _decide(_log())
    assert d.decision == "prevent" and d.verdict == "thrashing" and d.rank == 1
    assert d.request == REQ and d.world == 4
    assert d.fit.micro_batch == 4 and d.fit.from_micro_batch == 8
    assert "every rank of the 4 (torchrun: Slurm's 2 node(s) x 2 per node)" in d.reasons[-1]
    assert "submitted held" in d.reasons[-1]
    assert RUNG == "halve_micro_batch"  # the rung that sets the fitted micro-batch


def test_under_srun_slurms_task_count_is_the_world():
    text = _log(launcher="srun", local_world="-")
    assert _read(text, SRUN_JOB)[1].confirmed_by == "srun: Slurm's 4 task(s) are the 4 ranks"
    # The same lines, but Slurm runs 2 tasks of this job: not this run's world.
    _, h = _read(text, TORCHRUN_JOB)
    assert h.request is None and "Slurm runs 2 task(s)" in h.why


def test_a_rank_that_did_not_declare_is_counted_against_the_world_not_the_log():
    # Rank 3 prints nothing to this log (its output goes elsewhere): the log shows 0-2 only.
    text = "\n".join(ln for ln in _log(declare=(0, 1, 2)).splitlines() if not ln.startswith("3:"))
    _, declared = _read(text)
    assert declared.request is None and declared.missing == [3] and declared.world == 4
    assert "rank 3 of the job's 4 did not declare" in declared.why
    d = _decide(text, person=True)
    assert d.decision == "report_only" and "cannot ask it to checkpoint" in d.reasons[-1]


@pytest.mark.parametrize(
    "kw,job,why",
    [
        ({"local_world": "-"}, TORCHRUN_JOB, "states no single number of ranks per node"),
        ({"world": 2}, TORCHRUN_JOB, "beyond the world of 2"),
        ({"world": 6, "local_world": "3"}, TORCHRUN_JOB, "ranks 4, 5 of the job's 6"),
        ({"nodes": 3}, TORCHRUN_JOB, "Slurm says 2: the declarations are not this run's"),
        ({"request": "/home/alice/.bashrc"}, TORCHRUN_JOB, "runbook writes no other name"),
        ({"request": "run/.runbook-checkpoint-77"}, TORCHRUN_JOB, "not an absolute path"),
        ({"request": "/x/../.runbook-checkpoint-77"}, TORCHRUN_JOB, "not an absolute path"),
    ],
)
def test_what_slurm_and_the_launcher_do_not_confirm_is_not_asked(kw, job, why):
    _, h = _read(_log(**kw), job)
    assert h.request is None and why in h.why, h.why


def test_a_rank_from_a_host_outside_the_job_is_not_counted():
    job = JobInfo(
        job_id="77", state="RUNNING", num_nodes=2, num_tasks=2, nodes=["gpu-01", "gpu-03"]
    )
    _, h = _read(_log(), job)
    assert h.request is None and "gpu-02, not a node of job 77" in h.why


def test_no_declaration_at_all_is_reported_only_even_when_a_person_asks():
    d = _decide(_log(declare=()), person=True, mode="declared")
    assert d.decision == "report_only" and "no rank declared" in d.reasons[-1]


def test_slurms_own_requeue_convention_is_left_alone_saying_why():
    script = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --signal=SIGUSR1@90\nsrun python train.py\n"
    said = handler.requeue_convention(script, "INFO: SLURM auto-requeueing enabled. Setting ...")
    assert said == ["#SBATCH --signal", "Lightning's SLURMEnvironment auto_requeue"]
    assert handler.requeue_convention("srun python -u -m submitit.core._submit /x") == ["submitit"]
    assert handler.requeue_convention("#SBATCH --signal=TERM@60\n") == []
    d = _decide(_log(declare=()), person=True, convention=said)
    assert d.decision == "report_only" and "requeues itself on SIGUSR1" in d.reasons[-1]
    # A job of that convention that also declared runbook's request is asked through its file.
    assert _decide(_log(), convention=said).decision == "prevent"


def test_a_job_that_holds_less_than_runbook_may_need_is_not_asked():
    d = _decide(_log(hold=120), person=True)
    assert d.decision == "report_only" and "holds 120 s after its checkpoint" in d.reasons[-1]


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


def test_a_job_that_is_not_running_or_shows_nothing_is_not_asked():
    launch, declared = _read(_log())
    done = JobInfo(job_id="77", state="COMPLETED")
    assert decide(done, None, declared, None, mode="declared", person=True).decision == (
        "not_running"
    )
    quiet = _decide(_log(thrash_rank=-1))
    assert quiet.decision == "nothing_seen" and "says nothing of a rank" in quiet.reasons[0]


def _answer(kind: str, rank: int, rest: str) -> str:
    return f"{rank}: RUNBOOK_INSTRUMENT {kind} rank={rank} {rest}"


@pytest.mark.parametrize(
    "said,world,step",
    [
        ({0: 7, 1: 7, 2: 7, 3: 7}, 4, 7),  # every rank paused after step 7: save it
        ({0: 7, 1: 7}, 4, 8),  # the others blocked in step 8's collective: save after 8
        ({0: 7, 1: 8, 2: 8, 3: 8}, 4, 8),  # one rank a step behind: it runs step 8 first
        ({}, 4, None),  # nobody answered: no step
        ({0: None, 1: None, 2: None, 3: None}, 4, None),  # a loop that gives no step
    ],
)
def test_the_step_every_rank_saves_at_comes_from_the_steps_they_said(said, world, step):
    text = "\n".join(
        _answer("checkpoint-seen", r, f"id=inc-1 step={'-' if k is None else k}")
        for r, k in said.items()
    )
    a = handler.answers(scan(text + "\n").instrument, "inc-1")
    assert handler.step_to_save(a, world) == step


def test_answers_are_read_for_this_request_only():
    text = "\n".join(
        [
            _answer("checkpoint-seen", 0, "id=old step=3"),
            _answer("checkpoint-seen", 0, "id=inc-1 step=7"),
            _answer("checkpoint-missed", 2, "id=inc-1 step=9 asked=8"),
            _answer("checkpoint", 0, "step=8 id=inc-1 path=ckpt/step 8.pt"),
            _answer("checkpoint", 1, "step=4 path=ckpt/step_4.pt"),  # a routine one
        ]
    )
    a = handler.answers(scan(text + "\n").instrument, "inc-1")
    assert a.seen == {0: 7} and a.missed == {2: 9} and a.written == {0: (8, "ckpt/step 8.pt")}


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


END = "2026-12-02T01:08:50"  # as Slurm records an end: whole seconds, local time


def test_a_cancel_within_the_checkpoints_second_costs_nothing_not_unknown():
    # Slurm's end (whole seconds) reads 0.45 s before the checkpoint's mtime: the job held at it.
    report = {
        "started": 1000.0,
        "job": {"job_id": "77", "state": "RUNNING", "tres": "gres/gpu=4"},
        "evidence": {"runbook": "prevent", "prevention": {"checkpoint_step": 8, "steps_lost": 0}},
        "plan": {"checkpoint": {"mtime": datetime.fromisoformat(END).timestamp() + 0.45}},
        "actions": [
            {"kind": "submit", "status": "applied", "value": "22", "at": 1796173730.93},
            {"kind": "cancel", "status": "applied", "value": END, "at": 0},
        ],
    }
    cost = incident_cost(report)
    assert cost["lost_gpu_hours"] == 0.0


def test_a_running_job_without_memory_lines_is_watched_through_its_own_metrics_file(tmp_path):
    """The real H100 leak (tests/data/gpu/SOURCES.md: Lightning's DeviceStatsMonitor in a
    CSVLogger, every 10 steps): the watch of running jobs reads it where the log has no series,
    and says nothing of a job that writes neither."""
    import shutil
    from datetime import timedelta
    from pathlib import Path

    from runbook.evidence import job_metrics

    folder = tmp_path / "lightning_logs" / "version_0"
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).parents[1] / "data" / "gpu" / "lightning_metrics.csv", folder)
    (folder / "lightning_metrics.csv").rename(folder / "metrics.csv")
    job = JobInfo(
        job_id="77",
        state="RUNNING",
        work_dir=str(tmp_path),
        start=datetime.now() - timedelta(hours=1),
    )
    (series,) = job_metrics.running_series(job, scan(""))
    seen = trend.watch([series], 0.10)
    assert seen is not None and seen.kind == "leak" and series.series == "lightning"
    assert "lightning_logs/version_0/metrics.csv: step 579" in series.evidence[-1]
    # The log's own series, every rank's, come first; a job with neither says nothing.
    launch = scan(_log())
    assert job_metrics.running_series(job, launch) == launch.trends
    empty = JobInfo(job_id="78", state="RUNNING", work_dir=str(tmp_path / "x"), start=job.start)
    assert job_metrics.running_series(empty, scan("")) == []


def test_two_ranks_lines_run_together_are_both_read():
    """As the test cluster's log had it under torchrun (ranks 2 and 3 share gpu-02's stderr
    pipe; the instrument then wrote a line's text and its newline apart): both answers count."""
    glued = (
        "1: RUNBOOK_INSTRUMENT checkpoint rank=2 step=11 id=20261202-014744-193 "
        "path=checkpoints/step_11.ptRUNBOOK_INSTRUMENT checkpoint rank=3 step=11 "
        "id=20261202-014744-193 path=checkpoints/step_11.pt\n"
    )
    a = handler.answers(scan(glued).instrument, "20261202-014744-193")
    assert a.written == {2: (11, "checkpoints/step_11.pt"), 3: (11, "checkpoints/step_11.pt")}


def test_each_marker_line_is_one_write(monkeypatch):
    """One write() per line: a pipe never splits it, so ranks sharing one cannot glue lines."""
    import io
    import sys

    from runbook import instrument

    writes = []

    class Raw(io.StringIO):
        def write(self, text):
            writes.append(text)
            return len(text)

    monkeypatch.setattr(sys, "stderr", Raw())
    monkeypatch.setenv("SLURM_PROCID", "3")
    instrument.memory_line(7, allocated=1, peak=2, reserved=3)
    assert writes == [
        "RUNBOOK_INSTRUMENT mem rank=3 step=7 allocated=1 peak=2 reserved=3 retries=0 inactive=0\n"
    ]


def test_declarations_of_one_length_are_never_taken_for_a_terminals_cut():
    """Recorded on the test cluster (tests/data/logs/SOURCES.md): four ranks' declarations of
    one length read as cut at that width, and the line after rank 3's was joined to it."""
    from pathlib import Path

    text = Path(__file__).parents[1] / "data" / "logs" / "torchrun-declarations-equal-length.out"
    job = JobInfo(
        job_id="264", state="RUNNING", num_nodes=2, num_tasks=2, nodes=["gpu-01", "gpu-02"]
    )
    _, h = _read(text.read_text(), job)
    assert h.ranks == [0, 1, 2, 3] and h.request is not None, h.why
    assert h.request.endswith("/prevent-torchrun-8nxxno29/.runbook-checkpoint-264")


def test_under_deepspeeds_launcher_its_ranks_per_node_confirm_the_world():
    _, h = _read(_log(launcher="deepspeed"), TORCHRUN_JOB)
    assert h.request == REQ and h.confirmed_by == "deepspeed: Slurm's 2 node(s) x 2 per node"
