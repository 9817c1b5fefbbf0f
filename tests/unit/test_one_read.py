"""One incident, one read of each fact: the pure parts of reading Slurm and the state once
(issue 45), as data in, data out. The read counts themselves are measured on the test cluster
by bench/incident_cost.py; the integration tests check the outcomes in Slurm."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from runbook import state
from runbook.actions import steps
from runbook.actions.executor import Executor
from runbook.errors import SlurmError
from runbook.evidence import collect
from runbook.slurm.client import JobInfo, Submission
from runbook.slurm.dependency import dependants_in, parse_queue

SEP = "\x1f"


def row(*fields: str) -> str:
    return SEP.join(fields)


def test_the_queue_s_comment_keeps_its_separators_and_only_pending_jobs_are_dependants():
    text = "\n".join(
        [
            row("2220", "alice", "PENDING", "afterok:2219(unfulfilled)", "a\x1fcomment"),
            row("2221", "bob", "RUNNING", "afterany:2219(unfulfilled)", ""),
            row("2222", "alice", "PENDING", "(null)", "runbook:incident=x,parent=2219,rung=r"),
            "the second line of somebody's comment",
        ]
    )
    queue = parse_queue(text, SEP)
    assert [q.job_id for q in queue] == ["2220", "2221", "2222"]
    assert queue[0].comment == "a\x1fcomment"
    assert [d.job_id for d in dependants_in(queue, ["2219"])] == ["2220"]


def test_a_dependant_the_queue_listing_named_is_checked_in_slurmctld_s_record():
    """A comment can print a line that reads as a job waiting on the cancelled one: the hold
    and the re-point re-read the job and leave it alone unless slurmctld shows the dependency
    and the owner."""
    forged = JobInfo(job_id="77", user="alice", state="PENDING", dependency="(null)")
    other = JobInfo(job_id="78", user="mallory", state="PENDING", dependency="afterany:10")
    real = JobInfo(
        job_id="79", user="alice", state="PENDING", dependency="afterany:10(unfulfilled)"
    )
    assert "does not wait on 10" in steps.not_waiting(forged, "10", "alice")
    assert "mallory's, not alice's" in steps.not_waiting(other, "10", "alice")
    assert steps.not_waiting(real, "10", "alice") is None
    client = SimpleNamespace(job=lambda j: forged, hold_argv=lambda j: ["scontrol", "hold", j])
    hold = steps.hold(client, "77", "i", on="10", owner="alice")
    assert "does not wait on 10" in hold.check()


def test_accounting_is_searched_for_reruns_only_where_slurmctld_may_have_forgotten_them():
    submitted = datetime(2026, 11, 27, 10, 0)
    assert steps.lineage_window(JobInfo(job_id="5", source="scontrol", submit=submitted)) is None
    from_db = JobInfo(job_id="5", source="sacct", submit=submitted)
    assert steps.lineage_window(from_db) == submitted - timedelta(hours=1)
    unknown = steps.lineage_window(JobInfo(job_id="5", source="sacct"))
    assert unknown is not None and datetime.now() - unknown > timedelta(days=13)


def test_the_rerun_check_reads_the_incident_s_queue_not_a_new_one():
    asked: list = []

    class Slurm:
        def find_lineage(self, parent, rung, since, queue=None):
            asked.append((since, queue))
            return []

        def submit_argv(self, script, args, env, script_args=()):
            return ["sbatch", script]

    known = steps.Known(queue=["q"], since=None)
    a = steps.submit(Slurm(), "j.sbatch", [], {}, incident="i", parent="5", rung="r", known=known)
    assert a.check() is None and asked == [(None, ["q"])]


def test_the_cancel_s_check_uses_the_job_this_run_read_and_a_job_that_ended_meanwhile_is_done():
    reads: list = []
    running = JobInfo(job_id="5", state="RUNNING")
    ended = JobInfo(job_id="5", state="CANCELLED", end=datetime(2026, 11, 27, 10, 0))

    class Slurm:
        def job(self, job_id):
            reads.append(job_id)
            return ended

        def cancel(self, job_id):
            raise SlurmError("scancel: error: Job/step already completing or completed")

        def cancel_argv(self, job_id):
            return ["scancel", job_id]

    a = steps.cancel(Slurm(), "5", known=running)
    assert a.check() is None and reads == []
    out = a.apply()
    assert (
        out.exit_code == 0 and "ended by itself" in out.note and out.value == ended.end.isoformat()
    )
    with pytest.raises(SlurmError):  # without a job read moments ago: the failure stands
        steps.cancel(Slurm(), "5").apply()


def test_the_ledger_and_the_lock_are_one_read_and_a_lost_lock_refuses(tmp_path):
    db = state.open_db(tmp_path / "runbook.db")
    with state.job_lock(db, "5", "me") as lock:
        assert state.applied_and_holder(db, "k", lock) == (None, "me")
        ran: list = []
        action = steps.write_file(str(tmp_path / "a.txt"), "x")
        assert Executor(db, incident="i", actor="t", lock=lock, lock_holder="me").run(action).ok
        done, holder = state.applied_and_holder(db, action.key, lock)
        assert done is not None and done["incident"] == "i" and holder == "me"
        db.execute("UPDATE locks SET holder = 'them' WHERE name = ?", (lock,))
        other = steps.write_file(str(tmp_path / "b.txt"), "y")
        r = Executor(db, incident="i", actor="t", lock=lock, lock_holder="me").run(other)
        assert r.status == "failed" and "not held by this run" in r.message and not ran
        db.execute("UPDATE locks SET holder = 'me' WHERE name = ?", (lock,))
    assert not (tmp_path / "b.txt").exists()


def test_an_incident_is_opened_unless_the_job_was_handled_in_one_transaction(tmp_path):
    db = state.open_db(tmp_path / "runbook.db")
    assert state.start_incident(db, "inc-1", "5", "cli", "/f") is None
    status = db.execute("SELECT status FROM incidents WHERE id = 'inc-1'").fetchone()[0]
    assert status == "running"
    state.close_incident(
        db, "inc-1", exit_code=0, verdict="fragmentation", new_job_id="6", summary=""
    )
    done = state.start_incident(db, "inc-2", "5", "cli", "/f")
    assert done is not None and done["id"] == "inc-1" and done["new_job_id"] == "6"
    assert db.execute("SELECT count(*) FROM incidents").fetchone()[0] == 1
    assert state.start_incident(db, "inc-3", "5", "cli", "/f", force=True) is None


def accounting_lagging():
    """A Slurm whose accounting has the command line at first and the environment next: the
    client class, the `have` of each call, the answers."""
    calls: list = []
    answers = [Submission(line="sbatch x"), Submission(line="sbatch x", env={"A": "1"})]

    class Slurm:
        def submission(self, job_id, have=None):
            calls.append(have)
            return answers[len(calls) - 1]

    return Slurm, calls, answers


def test_accounting_is_asked_again_only_for_what_it_lacked_with_a_backoff():
    Slurm, calls, answers = accounting_lagging()

    slept: list = []
    young = JobInfo(job_id="7", start=datetime.now() - timedelta(seconds=2))
    got = collect.submission_of(Slurm(), young, sleep=slept.append, clock=lambda: 0.0)
    assert got.env == {"A": "1"} and calls == [None, answers[0]] and slept == [0.25]


def test_the_partition_is_read_only_when_a_rung_places_the_job_and_then_once():
    reads: list = []

    class Slurm:
        def partition_nodes(self, partition):
            reads.append(partition)
            return {"gpu-01": "idle", "gpu-02": "mixed", "gpu-03": "drained"}

    job = JobInfo(job_id="5", partition="gpu")
    later = collect.capacity_later(Slurm(), job, "gpu-01")
    assert reads == []
    assert later() == 1 and later() == 1 and reads == ["gpu"]


def test_the_job_stage_s_reads_run_together_and_a_missing_script_still_stops_it():
    class Slurm:
        name = "cli"

        def batch_script(self, job_id):
            raise SlurmError(f"job {job_id}: neither slurmctld nor accounting holds its script")

        def submission(self, job_id, have=None):
            return Submission(line="sbatch x", env={})

        def queue(self):
            return []

    with pytest.raises(SlurmError):
        collect.job_reads(Slurm(), JobInfo(job_id="5"), {})
    Slurm.batch_script = lambda self, job_id: "#!/bin/bash\n"  # type: ignore[method-assign]
    got = collect.job_reads(Slurm(), JobInfo(job_id="5"), {})
    assert got.script == "#!/bin/bash\n" and got.submission.line == "sbatch x" and got.queue == []


def test_a_stage_saves_the_json_and_the_run_s_end_renders_the_views_once(tmp_path):
    from runbook.report.model import Incident
    from runbook.report.recorder import Recorder

    rec = Recorder(
        tmp_path / "inc", Incident(id="inc", job_id="5", source="cli", actor="t", site="devcluster")
    )
    with rec.step("job", lambda _: None):
        pass
    assert (tmp_path / "inc" / "report.json").exists()
    assert not (tmp_path / "inc" / "report.md").exists()
    rec.save()
    md = (tmp_path / "inc" / "report.md").read_text()
    assert "5" in md and (tmp_path / "inc" / "report.html").exists()


def test_a_job_read_while_it_completes_keeps_the_nodes_it_ran_on():
    """slurmctld drops each node that finished its epilog from a completing job's NumNodes: a
    3-node job read a second after its scancel showed NumNodes=1 on the test cluster (a faster
    incident reads it then). The allocation, in its TRES, is what it ran on."""
    from runbook.slurm.cli_backend import _from_scontrol
    from runbook.slurm.text import scontrol_records

    text = (
        "JobId=3842 JobName=grow\n   UserId=root(0) GroupId=root(0)\n"
        "   JobState=COMPLETING Reason=None Dependency=(null)\n"
        "   NodeList=gpu-03\n   NumNodes=1 NumCPUs=6 NumTasks=6 CPUs/Task=1\n"
        "   TRES=cpu=6,node=3,billing=6,gres/gpu=6\n"
    )
    job = _from_scontrol(scontrol_records(text)[0])
    assert job.num_nodes == 3 and job.resources["nodes"] == "3"
    done = _from_scontrol(scontrol_records(text.replace("COMPLETING", "CANCELLED"))[0])
    assert done.num_nodes == 1  # a finished job's record is as Slurm shows it


def test_the_job_stage_waits_for_the_command_line_only_and_the_plan_for_the_environment():
    Slurm, calls, answers = accounting_lagging()

    young = JobInfo(job_id="7", start=datetime.now() - timedelta(seconds=2))
    first = collect.submission_of(Slurm(), young, need_env=False, sleep=calls.append)
    assert first.line == "sbatch x" and first.env is None and calls == [None]
    later = collect.submission_of(Slurm(), young, have=first, sleep=calls.append)
    assert later.env == {"A": "1"} and calls == [None, first]
    assert collect.submission_of(Slurm(), young, have=later) is later and len(calls) == 2


def test_a_warmed_connection_that_failed_answers_the_stage_once_without_trying_again():
    """SshHosts.warm opens the logs stage's connection during the job stage; when it fails (here:
    nothing listens on the port), the stage gets that failure at once instead of spending the
    retries a second time, and a later call connects anew."""
    import socket
    import time

    from runbook.errors import TransportError
    from runbook.transport.ssh import SshHosts, SshSettings

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = SshSettings(port=port, connect_timeout_s=1.0, connect_retries=0)
    hosts = SshHosts(settings)
    hosts.warm("127.0.0.1")
    hosts._warming[0].join(10)
    t = hosts["127.0.0.1"]
    assert t.warm_failed is not None and t.connects == 0
    start = time.monotonic()
    with pytest.raises(TransportError) as e:
        t.connect()
    assert e.value is not None and time.monotonic() - start < 0.5 and t.warm_failed is None
    with pytest.raises(TransportError):  # asked again: it tries again
        t.connect()
    hosts.close()
