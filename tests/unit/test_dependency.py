"""Slurm's dependency text (slurm.dependency), data in, data out, on the strings squeue and
scontrol print (Slurm 22.05 on the test cluster: `afterok:2219(unfulfilled)` while the job
runs, `afterok:2219(failed)` once it was cancelled, `(null)` for none)."""

from __future__ import annotations

from runbook.slurm.dependency import (
    SET_OFF_BY_CANCEL,
    dependants_in,
    parse_queue,
    repointed,
    types_on,
)


def test_the_types_that_name_a_job():
    assert types_on("afterok:2219(unfulfilled)", "2219") == {"afterok"}
    assert types_on("afterok:2219(failed),afterany:2219:2300(unfulfilled)", "2219") == {
        "afterok",
        "afterany",
    }
    assert types_on("afterok:22190(unfulfilled)", "2219") == set()  # another job's id
    assert types_on("(null)", "2219") == types_on("", "2219") == set()
    assert types_on("singleton", "2219") == set()
    assert types_on("afterany:2219_3(unfulfilled)", "2219_3") == {"afterany"}


def test_only_afterany_and_afternotok_start_when_a_job_is_cancelled():
    assert "afterok" not in SET_OFF_BY_CANCEL and "after" not in SET_OFF_BY_CANCEL
    assert {"afterany", "afternotok"} <= SET_OFF_BY_CANCEL


def test_the_same_dependency_pointed_at_the_rerun():
    assert repointed("afterok:2219(failed)", "2219", "2250") == "afterok:2250"
    # Other jobs and types kept; a delay kept with its id; `?` (any) kept as the joiner.
    assert (
        repointed("afterok:2219+5:2300(unfulfilled)?afternotok:2301", "2219", "2250")
        == "afterok:2250+5:2300?afternotok:2301"
    )
    assert repointed("afterok:2219,singleton", "2219", "2250") == "afterok:2250,singleton"
    assert repointed("afterok:2300(unfulfilled)", "2219", "2250") is None  # names no 2219
    assert repointed("afterok:$(reboot)", "2219", "2250") is None  # not Slurm's text: left


def waiting(text: str, job_ids: list[str]):
    """The pending jobs on `job_ids` in squeue lines as runbook asks for them (`%i %u %T %E %k`,
    each field after a unit separator), written here with `|` for reading."""
    return dependants_in(parse_queue(text.replace("|", "\x1f"), "\x1f"), job_ids)


def test_squeue_lines_give_the_jobs_waiting_on_one_job():
    text = (
        "2220|alice|PENDING|afterok:2219(unfulfilled)|\n"
        "2221|bob|PENDING|afterany:2219(unfulfilled)|\n"
        "2222|alice|PENDING|(null)|\n"
        "2223|alice|PENDING|afterok:2300(unfulfilled)|\n"
        "garbage line\n"
    )
    found = waiting(text, ["2219"])
    assert [(d.job_id, d.user) for d in found] == [("2220", "alice"), ("2221", "bob")]


def test_a_task_of_an_array_is_waited_on_by_its_task_id_or_its_raw_id():
    # `sbatch --dependency=afterok:2572_1`: squeue shows the task id (test cluster, 22.05);
    # task 2572_1's raw id is another number, which a dependency may name too.
    text = (
        "2573|alice|PENDING|afterok:2572_1(unfulfilled)|\n"
        "2575|alice|PENDING|afterany:2574(unfulfilled)|\n"
    )
    found = waiting(text, ["2572_1", "2574"])
    assert [(d.job_id, d.on) for d in found] == [("2573", "2572_1"), ("2575", "2574")]
    assert repointed(found[0].dependency, found[0].on, "2600_1") == "afterok:2600_1"


def test_another_user_s_dependant_and_a_chain_without_rerun_go_to_a_person():
    from types import SimpleNamespace

    from runbook.actions import chain
    from runbook.slurm.dependency import Dependant

    class NoActions:  # nothing here may change Slurm
        dry_run = False
        incident = "i"

        def run(self, a):
            raise AssertionError(f"no action expected, got {a.kind}")

    job = SimpleNamespace(job_id="2219", raw="2219", user="alice")
    bob = Dependant("2221", "bob", "afterany:2219(unfulfilled)", "2219")
    mine = Dependant("2220", "alice", "afterok:2219(failed)", "2219")
    assert chain.hold_before_cancel(NoActions(), None, [bob], job) == set()
    rows, person = chain.repoint(NoActions(), None, [bob, mine], job, None, set())
    assert [r["now"] for r in rows] == [None, None]
    assert "bob's, not alice's" in rows[0]["status"]
    assert "point job 2221 at the rerun by hand" in person
    assert "job 2220 waits on 2219, which has no rerun: cancel it or point it elsewhere" in person
