"""Heterogeneous jobs as data: a real `scontrol show job` of one (tests/data/slurm/
scontrol-show-job-hetjob.txt) read as one job with its components, each component's options
for the rerun, the read-back compared component by component, and the refusals."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runbook.errors import UsageError
from runbook.planning import resources
from runbook.planning.ladder import Plan
from runbook.planning.plan import failing_component, het_groups
from runbook.slurm.cli_backend import _from_scontrol, with_components
from runbook.slurm.text import scontrol_records

TEXT = (
    Path(__file__).resolve().parents[1] / "data" / "slurm" / "scontrol-show-job-hetjob.txt"
).read_text()


def _job():
    return with_components("2272", [_from_scontrol(f) for f in scontrol_records(TEXT)])


def test_the_job_is_its_first_component_with_every_component_attached():
    job = _job()
    assert (job.job_id, job.het_offset) == ("2272", 0)
    assert [(c.job_id, c.het_offset) for c in job.components] == [("2272", 0), ("2273", 1)]
    assert job.components[1].resources["cpus_per_task"] == "2"
    assert job.components[1].resources["mem"] == "300M"
    with pytest.raises(UsageError, match="component 1 of a heterogeneous job"):
        with_components("2273", [_from_scontrol(f) for f in scontrol_records(TEXT)])


def test_each_later_component_gets_its_own_options():
    p = Plan("fragmentation", rung="set_expandable_segments")
    (group,) = het_groups(p, _job(), "")
    assert "--ntasks=1" in group and "--cpus-per-task=2" in group and "--mem=300M" in group
    assert not p.needs_human


def test_a_rung_that_changes_resources_is_refused_for_a_heterogeneous_job():
    p = Plan("host_oom", rung="raise_mem")
    assert het_groups(p, _job(), "") is None
    assert p.needs_human and "per component" in p.human_action


def test_components_slurm_no_longer_holds_are_refused_unless_the_script_states_them():
    bare = [dataclasses.replace(c, resources={}) for c in _job().components]
    job = dataclasses.replace(_job(), resources={}, components=bare)
    p = Plan("fragmentation", rung="set_expandable_segments")
    assert het_groups(p, job, "#!/bin/bash\n#SBATCH -n2\n#SBATCH hetjob\n#SBATCH -n1\n") == []
    assert het_groups(p, job, "#!/bin/bash\nsrun true\n") is None and p.needs_human


def test_the_read_back_compares_each_component_with_its_own():
    job = _job()
    same = resources.components(job, job)
    assert [c["mismatches"] for c in same] == [[], []]
    c1 = job.components[1]
    wrong = dataclasses.replace(c1, resources={**c1.resources, "mem": "400M", "nodes": "1-1"})
    new = dataclasses.replace(job, components=[job.components[0], wrong])
    assert [c["mismatches"] for c in resources.components(job, new)] == [
        [],
        ["component 1 mem: original 300M, new 400M"],
    ]  # a pending job's node range 1-1 is 1 node
    gone = dataclasses.replace(job, components=[job.components[0]])
    assert resources.components(job, gone)[1]["mismatches"] == [
        "component 1: missing from the new job"
    ]


def test_the_failing_component_is_named_by_its_node():
    job = _job()
    comps = [
        dataclasses.replace(c, nodes=[f"gpu-0{i + 1}"], node_expr=f"gpu-0{i + 1}")
        for i, c in enumerate(job.components)
    ]
    job = dataclasses.replace(job, components=comps)
    assert failing_component(job, "gpu-02") == "the failure is in component 1 (gpu-02)"
    assert "not known" in failing_component(job, None)
