"""Job arrays as Slurm 22.05 shows them (real records, tests/data/slurm/array, replayed through
the real CLI backend): a task is named A_T everywhere runbook acts, its raw id is kept for what
the node sees, and an id that names a whole array is refused with its tasks listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.errors import ArrayJobError
from runbook.slurm.cli_backend import SACCT_FIELDS, CliSlurm
from runbook.slurm.recorded import as_pattern
from runbook.transport.base import CommandResult

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm" / "array"


class Replay:
    """A transport that answers each Slurm command with a recorded real output."""

    def __init__(self, answers: dict[tuple[str, ...], str]):
        self.answers = answers
        self.calls: list[list[str]] = []

    def run(self, argv, timeout=None):
        self.calls.append(list(argv))
        for head, out in self.answers.items():
            if tuple(argv[: len(head)]) == head and (argv[-1] == head[-1] or len(head) > 3):
                return CommandResult("login", tuple(argv), 0, out, "", 0.0)
        return CommandResult(
            "login", tuple(argv), 1, "", "slurm_load_jobs error: Invalid job id", 0.0
        )


def _text(name: str) -> str:
    return (DATA / name).read_text()


def test_a_task_by_its_id_is_named_a_t_and_keeps_its_raw_id():
    client = CliSlurm(
        Replay({("scontrol", "show", "job", "8_0"): _text("scontrol-show-job-array-task.txt")})
    )
    job = client.job("8_0")
    assert (job.job_id, job.raw, job.array_task) == ("8_0", "9", "0")
    assert client.cancel_argv(job.job_id) == ["scancel", "8_0"]
    # The rerun's log pattern: the array's id becomes %A, the task index stays as written.
    assert job.resources["output"] == "/var/tmp/runbook-devcluster/jobs/arr-%A_0.out"


def test_the_array_s_own_id_names_every_task_and_is_refused_with_the_tasks():
    client = CliSlurm(
        Replay({("scontrol", "show", "job", "8"): _text("scontrol-show-job-array.txt")})
    )
    with pytest.raises(ArrayJobError) as e:
        client.job("8")
    msg = e.value.message
    assert "job 8 is a job array" in msg and "8_0" in msg and "8_2" in msg
    assert e.value.exit_code == 2


def test_a_held_array_not_yet_split_is_a_whole_array():
    client = CliSlurm(
        Replay({("scontrol", "show", "job", "11"): _text("scontrol-show-job-array-pending.txt")})
    )
    with pytest.raises(ArrayJobError):
        client.job("11")


def test_accounting_names_tasks_a_t_and_refuses_the_whole_array():
    """After slurmctld forgot the array: sacct lists each task with its raw id apart."""
    client = CliSlurm(Replay({("sacct", "-X", "-P", "-n"): _text("sacct-array.txt")}))
    with pytest.raises(ArrayJobError) as e:
        client.job("8")
    assert "8_0 CANCELLED, 8_1 CANCELLED, 8_2 CANCELLED" in e.value.message
    assert "runbook oom --job 8_0" in (e.value.hint or "")
    jobs = client._sacct(["-j", "8"])
    assert [(j.job_id, j.raw) for j in jobs] == [("8_0", "9"), ("8_1", "10"), ("8_2", "8")]
    assert client.job("8_2").raw == "8"  # by its task id: the one task, never the array


def test_a_pending_array_row_keeps_its_raw_id():
    client = CliSlurm(Replay({("sacct", "-X", "-P", "-n"): _text("sacct-array-pending.txt")}))
    (job,) = client._sacct(["-j", "11"])
    assert job.job_id == "11" and job.array_task is None and job.array_job_id == "11"


def test_sacct_fields_are_the_recorded_columns():
    first = _text("sacct-array.txt").splitlines()[0]
    assert len(first.split("\x1f")) == len(SACCT_FIELDS)
    client = CliSlurm(Replay({("sacct", "-X", "-P", "-n"): _text("sacct-array.txt")}))
    (job,) = [j for j in client._sacct(["-j", "8"]) if j.job_id == "8_1"]
    assert job.submit_line == "sbatch --parsable --array=0-2 -p debug arr.sh"


def test_a_newline_in_a_comment_or_submit_line_stays_in_its_row():
    from runbook.slurm.cli_backend import sacct_rows

    sep = "\x1f"
    row = sep.join(["7", "7", "j", "u", "FAILED", "1:0", "gpu-01", *["x"] * 6, "1"])
    out = f"{row}{sep}a\ncomment{sep}sbatch --wrap 'echo\nhi'\n{row}{sep}{sep}sbatch j.sh\n"
    rows = sacct_rows(out)
    assert len(rows) == 2 and rows[0].endswith("sbatch --wrap 'echo\nhi'")


@pytest.mark.parametrize(
    ("path", "raw", "array", "want"),
    [
        ("/d/arr-8_2.out", "8", "8", "/d/arr-%A_2.out"),  # the task holding the array's id
        ("/d/arr-8_0.out", "9", "8", "/d/arr-%A_0.out"),
        ("/d/train-9.log", "9", "8", "/d/train-%j.log"),  # %j: the task's raw id
        ("/d/x-9-8_0.out", "9", "8", "/d/x-%j-%A_0.out"),
        ("/d/job-123.out", "123", None, "/d/job-%j.out"),
        ("/d/run-18/train.out", "18", None, "/d/run-18/train.out"),  # folders stay
    ],
)
def test_resolved_log_paths_back_to_patterns(path, raw, array, want):
    assert as_pattern(path, raw, array) == want
