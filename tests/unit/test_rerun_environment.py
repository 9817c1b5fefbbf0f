"""The rerun's environment (issue 34 item 4), as data in, data out: the job's own as accounting
recorded it, its --export setting kept, the rung's variables added, runbook's never. The
semantics of --export with --export-file were measured on the test cluster (Slurm 22.05), see
runbook/planning/environment.py; the integration test reads the rerun's environment in the job."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from runbook.planning import ladder
from runbook.planning.environment import (
    env_file_text,
    export_option,
    rerun_environment,
    scrub,
)
from runbook.planning.plan import pinned_nodes

OWN = {
    "PATH": "/usr/bin",
    "HOME": "/root",
    "RUNBOOK_HOOK_TOKEN": "t0ps3cret",
    "RUNBOOK_STATE_URL": "postgresql://runbook:pw@db/runbook",
    "PGPASSWORD": "pw",
    "GITHUB_TOKEN": "x",
    "AWS_SECRET_ACCESS_KEY": "y",
    "SSH_AUTH_SOCK": "/tmp/agent",
}


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("sbatch --parsable --array=0-2 --export=ALL,FOO=baz -w gpu-01 arr.sh", "ALL,FOO=baz"),
        ("sbatch --export NONE job.sh", "NONE"),
        ("sbatch job.sh --export=NOT_MINE", None),  # the script's own argument
        ("sbatch -p debug job.sh", None),
        ("sbatch --export=A=1 --export=B=2 job.sh", "B=2"),  # the last one wins, as in sbatch
        ('sbatch --export="ALL,X=a b" job.sh', "ALL,X=a b"),
        ("sbatch --export='unbalanced job.sh", None),
        ("", None),
    ],
)
def test_the_export_option_of_a_submit_line(line, want):
    assert export_option(line) == want


def test_runbooks_own_variables_and_credentials_are_scrubbed():
    kept, dropped = scrub(OWN)
    assert kept == {"PATH": "/usr/bin", "HOME": "/root"}
    assert set(dropped) == set(OWN) - {"PATH", "HOME"}


def test_a_recorded_environment_is_replayed_with_the_rung_s_variables():
    recorded = {"PATH": "/opt/conda/bin", "WANDB_PROJECT": "llm", "BAR": "1"}
    r = rerun_environment(
        "sbatch --export=ALL,BAR=1 t.sh", recorded, {"RUNBOOK_RESUME_FROM": "/c/step_8.pt"}, OWN
    )
    assert r.export == "ALL"  # the recorded environment holds BAR already
    assert r.file_env == {**recorded, "RUNBOOK_RESUME_FROM": "/c/step_8.pt"}
    assert r.sbatch_env == {}


def test_no_recorded_environment_stands_in_runbook_s_less_its_own_and_says_so():
    r = rerun_environment("sbatch t.sh", None, {}, OWN)
    assert r.export == "ALL" and r.file_env == {"PATH": "/usr/bin", "HOME": "/root"}
    assert "RUNBOOK_HOOK_TOKEN" in r.notes[0] and "job_env" in r.notes[0]
    assert "t0ps3cret" not in " ".join(r.notes)


def test_export_none_is_kept_and_the_rung_s_variables_join_by_name():
    r = rerun_environment("sbatch --export=NONE t.sh", None, {"ALLOC": "a:1,b:2"}, OWN)
    assert (r.export, r.file_env, r.sbatch_env) == ("ALLOC", None, {"ALLOC": "a:1,b:2"})
    r = rerun_environment("sbatch --export=NONE t.sh", None, {}, OWN)
    assert (r.export, r.file_env, r.sbatch_env) == ("NONE", None, {})


def test_an_export_list_is_kept_as_the_user_gave_it():
    r = rerun_environment("sbatch --export=FOO=1,HOME t.sh", None, {"R": "x"}, OWN)
    assert r.export == "FOO=1,HOME,R" and r.file_env is None and r.sbatch_env == {"R": "x"}


def test_the_export_file_is_nul_separated_and_keeps_newlines():
    assert env_file_text({"A": "1", "F": "() { echo\n}"}) == "A=1\0F=() { echo\n}\0"


def _job(nodelist: str | None, nodes: int = 2):
    return SimpleNamespace(resources={"nodelist": nodelist} if nodelist else {}, num_nodes=nodes)


def test_a_pinned_node_list_loses_the_excluded_node_only():
    p = ladder.Plan(verdict="gpu_fault", rung="exclude_node")
    assert pinned_nodes(p, _job("gpu-[01-02]"), "", ["gpu-01"]) == ["gpu-02"]
    assert pinned_nodes(p, _job(None), "", ["gpu-01"]) == []
    assert not p.needs_human


def test_a_script_that_pins_only_the_excluded_node_is_refused_before_sbatch():
    p = ladder.Plan(verdict="gpu_fault", rung="exclude_node")
    script = "#!/bin/bash\n#SBATCH --nodelist=gpu-01\nsrun x\n"
    assert pinned_nodes(p, _job("gpu-01", 1), script, ["gpu-01"]) is None
    assert p.needs_human and "#SBATCH --nodelist=gpu-01" in p.human_action


def test_a_command_line_pin_on_the_excluded_node_is_lifted():
    p = ladder.Plan(verdict="gpu_fault", rung="exclude_node")
    assert pinned_nodes(p, _job("gpu-01", 1), "#!/bin/bash\nsrun x\n", ["gpu-01"]) == []
    assert not p.needs_human


def test_a_shrunk_rerun_is_pinned_to_no_more_nodes_than_it_runs_on():
    p = ladder.Plan(verdict="gpu_fault", rung="shrink_world", world=(3, 2))
    assert pinned_nodes(p, _job("gpu-[01-03]", 3), "", ["gpu-01"]) == ["gpu-02", "gpu-03"]
    p = ladder.Plan(verdict="gpu_fault", rung="shrink_world", world=(3, 1))
    assert pinned_nodes(p, _job("gpu-[01-03]", 3), "", ["gpu-01"]) == ["gpu-02"]


def test_a_young_job_s_submission_is_asked_again_until_accounting_has_it():
    """slurmdbd stores the start record a moment after the start: a job that failed seconds
    after starting is asked again (bounded); an old job, or one with it recorded, once."""
    from datetime import datetime, timedelta

    from runbook.evidence.collect import submission_of
    from runbook.slurm.client import JobInfo, Submission

    answers = [Submission(), Submission(), Submission(line="sbatch x", env={"A": "1"})]

    class Client:
        calls = 0

        def submission(self, job_id, have=None):
            Client.calls += 1
            return answers[min(Client.calls - 1, 2)]

    slept = []
    young = JobInfo(job_id="7", start=datetime.now() - timedelta(seconds=3))
    got = submission_of(Client(), young, sleep=slept.append, clock=lambda: 0.0)
    assert got.env == {"A": "1"} and Client.calls == 3 and slept == [0.25, 0.5]
    Client.calls = 0
    old = JobInfo(job_id="7", start=datetime.now() - timedelta(hours=2))
    assert submission_of(Client(), old, sleep=slept.append).env is None and Client.calls == 1
