"""What each incident cost (issue 20, part 3), from its record: values in, values out; and
`runbook stats` over many incidents."""

from __future__ import annotations

import dataclasses
import json

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
    c = incident_cost(report(job={"end": 1_000_000.0, "start": None, "tres": "gres/gpu=16"}))
    assert c["detection_s"] == 600.0 and c["diagnosis_s"] == 30.0 and c["resubmission_s"] == 60.0
    # 16 GPUs from the checkpoint (990000) to the scancel (1000610): 10610 s
    assert c["gpus"] == 16 and c["lost_gpu_hours"] == round(16 * 10610 / 3600, 3)
    assert "failure: the job's end in Slurm" in c["basis"]
    assert "lost work: since the last valid checkpoint" in c["basis"]


def test_unknown_stays_unknown():
    c = incident_cost({"started": 5.0, "job": {}, "actions": [], "timeline": []})
    assert c["detection_s"] is None and c["gpus"] is None and c["lost_gpu_hours"] is None
    assert c["resubmission_s"] is None


def test_aggregate_by_verdict_rung_and_node():
    a = report(job={"end": 1_000_000.0, "tres": "gres/gpu=8"})
    b = report(
        job={"end": 1_000_000.0, "tres": "gres/gpu=8"},
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
        json.dumps(report(job={"end": 1_000_000.0, "tres": "gres/gpu=4"}))
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
