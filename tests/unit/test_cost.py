"""What each incident cost (issue 20, part 3), from its record: values in, values out; and
`runbook stats` over many incidents."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

from click.testing import CliRunner

from runbook import state
from runbook.cli import cli
from runbook.report.cost import aggregate, incident_cost
from runbook.site import SiteConfig


def report(**over) -> dict:
    base = {
        "started": 1_000_600.0,  # the incident began 10 min after the job ended
        "job": {"start": "1970-01-12T13:33:20", "end": None, "tres": "cpu=32,gres/gpu=16,node=2"},
        "evidence": {"first_failure": {"node": "gpu-07", "time": None}},
        "diagnosis": {"verdict": "true_oom"},
        "plan": {"rung": "halve_micro_batch", "checkpoint": {"mtime": 990_000.0}},
        "timeline": [{"name": "diagnosis", "finished": 1_000_630.0}],
        "actions": [
            {"kind": "cancel", "status": "applied", "at": 1_000_610.0},
            {"kind": "submit", "status": "applied", "at": 1_000_660.0},
        ],
        "verification": {"state": "passed"},
    }
    base.update(over)
    return base


def test_cost_from_the_record():
    c = incident_cost(
        report(job={"end": 1_000_000.0, "state": "FAILED", "start": None, "tres": "gres/gpu=16"})
    )
    assert c["detection_s"] == 600.0 and c["diagnosis_s"] == 30.0 and c["resubmission_s"] == 60.0
    # 16 GPUs from the checkpoint (990000) to the scancel (1000610): 10610 s
    assert c["gpus"] == 16 and c["lost_gpu_hours"] == round(16 * 10610 / 3600, 3)
    assert "failure: the job's end in Slurm (FAILED)" in c["basis"]
    assert "lost work: since the last valid checkpoint" in c["basis"]


def wedged(**over) -> dict:
    """A job still RUNNING when the incident began (ranks hung in NCCL after one ran out), with
    a 30-minute limit: Slurm's EndTime is its projected end, start + limit, 30 minutes ahead."""
    started = 1_000_600.0
    return report(
        started=started,
        job={
            "state": "RUNNING",
            "start": 1_000_000.0,
            "end": started + 1795.0,
            "tres": "gres/gpu=4",
        },
        plan={"rung": "halve_micro_batch"},
        **over,
    )


def test_a_running_jobs_projected_end_is_never_its_failure():
    """Round 4's field report: `detected -1794.8 s after the failure` from a wedged job with a
    time limit. A running job's failure is its logs' own stamp, or unknown; never negative."""
    c = incident_cost(wedged())
    assert c["failure_at"] is None and c["detection_s"] is None
    assert any(b.startswith("failure: unknown (the job was RUNNING") for b in c["basis"])
    stamped = wedged(evidence={"first_failure": {"node": "gpu-07", "time": 1_000_450.0}})
    assert incident_cost(stamped)["detection_s"] == 150.0
    # A log stamped after the incident began (a node's clock ahead): unknown, not negative.
    ahead = wedged(evidence={"first_failure": {"node": "gpu-07", "time": 1_000_700.0}})
    c = incident_cost(ahead)
    assert c["detection_s"] is None and any(
        "clocks" in b or "after the incident" in b for b in c["basis"]
    )


def test_gpu_hours_end_when_slurm_recorded_the_cancel():
    """The cancel's read-back carries the end Slurm recorded: the GPUs are freed then, whatever
    the job's limit. Without it, the time runbook saw the cancel take effect."""
    # scontrol's EndTime, local time as the read-back records it.
    end = datetime.fromtimestamp(1_000_610).isoformat()
    cancel = {"kind": "cancel", "status": "applied", "at": 1_000_612.4, "value": end}
    c = incident_cost(wedged(actions=[cancel]))
    # 4 GPUs from the start (no checkpoint) to Slurm's end of the cancelled job: 610 s.
    assert c["lost_gpu_hours"] == round(4 * 610 / 3600, 3)
    assert "GPUs freed: the cancelled job's end as Slurm recorded it" in c["basis"]
    c = incident_cost(wedged(actions=[{**cancel, "value": None}]))
    assert c["lost_gpu_hours"] == round(4 * 612.4 / 3600, 3)


def test_a_job_not_stopped_has_an_unknown_loss_not_its_limit():
    """A 365-day limit, the job not cancelled (dry run, or policy): its projected end would be
    35,040 GPU-hours on 4 GPUs. It still holds its GPUs: unknown, and `stats` says how many are
    unknown instead of summing a projection."""
    year = wedged()
    year["job"]["end"] = year["started"] + 365 * 86400
    year["actions"] = [{"kind": "cancel", "status": "dry_run", "at": 1_000_610.0}]
    c = incident_cost(year)
    assert c["lost_gpu_hours"] is None
    assert any(b.startswith("GPUs freed: unknown") for b in c["basis"])
    # Stored before this rule, with the projected figure: stats recomputes from the record.
    year["cost"] = {"lost_gpu_hours": 35040.207}
    doc = aggregate(
        [year, report(job={"end": 1_000_000.0, "state": "FAILED", "tres": "gres/gpu=1"})]
    )
    assert doc["lost_unknown"] == 1 and doc["lost_gpu_hours"] < 10


def test_unknown_stays_unknown():
    c = incident_cost({"started": 5.0, "job": {}, "actions": [], "timeline": []})
    assert c["detection_s"] is None and c["gpus"] is None and c["lost_gpu_hours"] is None
    assert c["resubmission_s"] is None


def test_aggregate_by_verdict_rung_and_node():
    a = report(job={"end": 1_000_000.0, "state": "FAILED", "tres": "gres/gpu=8"})
    b = report(
        job={"end": 1_000_000.0, "state": "FAILED", "tres": "gres/gpu=8"},
        diagnosis={"verdict": "co_tenant"},
        plan={"rung": "exclude_node"},
        verification={"state": "failed"},
    )
    doc = aggregate([a, b])
    assert doc["incidents"] == 2
    assert set(doc["by_verdict"]) == {"true_oom", "co_tenant"}
    assert doc["by_rung"]["halve_micro_batch"]["passed"] == 1
    assert doc["by_rung"]["exclude_node"]["failed"] == 1
    assert doc["by_node"]["gpu-07"]["incidents"] == 2
    assert doc["lost_gpu_hours"] == round(
        doc["by_verdict"]["true_oom"]["lost_gpu_hours"]
        + doc["by_verdict"]["co_tenant"]["lost_gpu_hours"],
        3,
    )


def test_stats_verb_reads_the_incident_folders(tmp_path, monkeypatch):
    s = SiteConfig()
    site = dataclasses.replace(s, state=dataclasses.replace(s.state, dir=str(tmp_path)))
    conn = state.site_db(site)
    folder = tmp_path / "incidents" / "i1"
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(
        json.dumps(report(job={"end": 1_000_000.0, "state": "FAILED", "tres": "gres/gpu=4"}))
    )
    state.open_incident(conn, "i1", "41", "cli", str(folder))
    state.open_incident(conn, "i2", "42", "cli", str(tmp_path / "gone"))  # no report: skipped
    monkeypatch.setattr("runbook.cli.AppContext.site", lambda self: site)
    r = CliRunner().invoke(cli, ["stats", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["incidents"] == 1 and doc["by_verdict"]["true_oom"]["incidents"] == 1
    assert doc["lost_gpu_hours"] > 0


def test_the_cost_picture_places_each_moment_on_one_axis():
    from runbook.report.render import cost_svg

    svg = cost_svg(
        {
            "marks": [
                {"label": "failure", "at": 100.0},
                {"label": "detected", "at": 160.0},
                {"label": "resubmitted", "at": 175.0},
            ]
        }
    )
    assert svg.startswith("<svg") and svg.count("<circle") == 3
    assert "detected (+60 s)" in svg and "resubmitted (+75 s)" in svg
    assert cost_svg({"marks": [{"label": "failure", "at": 1.0}]}) == ""  # nothing to place
    assert cost_svg(None) == ""


def test_a_loss_under_a_thousandth_of_a_gpu_hour_is_not_rounded_to_nothing():
    from runbook.report.cost import _gpu_hours

    assert _gpu_hours(4 * 0.42 / 3600) == 0.00047
    assert _gpu_hours(4 * 612.4 / 3600) == round(4 * 612.4 / 3600, 3) and _gpu_hours(0) == 0


def test_a_rerun_resumed_from_an_older_jobs_checkpoint_is_charged_from_its_own_start():
    """Issue 55: a rerun of 10 minutes on 8 GPUs that resumed from a checkpoint written 2.5 hours
    before it started, and ran out before writing its own, lost 8 x 10 min = 1.333 GPU-hours,
    not 8 x 2h40 = 21.3; and `runbook stats` over the parent's incident and the rerun's counts
    each loss once."""
    t0 = 2_000_000.0
    parent = report(
        job={"start": t0 - 4 * 3600, "end": t0, "state": "FAILED", "tres": "gres/gpu=8"},
        plan={"rung": "halve_micro_batch", "checkpoint": {"mtime": t0 - 2.5 * 3600}},
        started=t0 + 60,
        actions=[],
    )
    rerun_start = t0 + 120
    rerun = report(
        job={
            "start": rerun_start,
            "end": rerun_start + 600,
            "state": "FAILED",
            "tres": "gres/gpu=8",
        },
        plan={"rung": "max_split_size", "checkpoint": {"mtime": t0 - 2.5 * 3600}},
        started=rerun_start + 660,
        actions=[],
    )
    pc, rc = incident_cost(parent), incident_cost(rerun)
    assert pc["lost_gpu_hours"] == 20.0  # 8 GPUs x 2.5 h, from its checkpoint to its end
    assert rc["lost_gpu_hours"] == 1.333, rc
    assert any("written before it began" in b for b in rc["basis"]), rc["basis"]
    total = aggregate([{**parent, "cost": pc}, {**rerun, "cost": rc}])
    assert abs(total["lost_gpu_hours"] - 21.333) < 0.01, total


def test_the_failure_time_from_runbooks_own_dump_and_only_the_jobs_own():
    """The demo's job is wedged (RUNNING: Slurm's end is a projection) and its log carries no
    stamp: runbook.instrument's dump of the failing rank says when it ran out. A dump of another
    job, or from outside the job's run, is not this failure's."""
    job = {
        "job_id": "42",
        "start": 1_000_000.0,
        "end": None,
        "state": "RUNNING",
        "tres": "gres/gpu=4",
    }
    base = dict(job_id="42", job=job, started=1_000_600.0)
    c = incident_cost(report(**base, evidence={"dump": {"time": 1_000_590.0, "job_id": "42"}}))
    assert c["failure_at"] == 1_000_590.0 and c["detection_s"] == 10.0, c
    assert any("dump" in b for b in c["basis"])
    for dump in ({"time": 1_000_590.0, "job_id": "41"}, {"time": 900_000.0, "job_id": "42"}):
        c = incident_cost(report(**base, evidence={"dump": dump}))
        assert c["failure_at"] is None and c["detection_s"] is None, (dump, c)
        # Nothing is drawn at a time the report calls unknown.
        assert "detected" not in [m["label"] for m in c["marks"]], c["marks"]


def test_durations_read_as_people_write_them():
    from runbook.words import seconds

    assert [seconds(x) for x in (4.25, 42, 1800, 725, 7200, 10920, None)] == [
        "4.2 s",
        "42 s",
        "30 min",
        "12 min 5 s",
        "2 h",
        "3 h 2 min",
        "unknown",
    ]


def test_an_exit_code_of_0_is_shown_as_0_not_unknown():
    """The report's job row said `exit ?` for a job that exited 0 (`0 or "?"`)."""
    from pathlib import Path

    from runbook.report.render import render_all

    golden = Path(__file__).parents[1] / "data" / "report" / "golden.report.json"
    doc = json.loads(golden.read_text())
    doc["job"]["state"] = "FAILED"
    for code, shown in ((0, "exit 0)"), (None, "exit ?)"), ("1:0", "exit 1:0)")):
        doc["job"]["exit_code"] = code
        assert shown in render_all(doc)["report.md"], code
    # A job that still runs has no exit code yet (Slurm shows 0:0): none is shown.
    doc["job"]["state"] = "RUNNING"
    assert "state RUNNING)" in render_all(doc)["report.md"]
