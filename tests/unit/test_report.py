"""The incident report: golden Markdown and JSON (re-record with RUNBOOK_RERECORD=1), secrets
masked, and a report that says where a run stopped."""

from __future__ import annotations

import json
from pathlib import Path

from runbook.diagnosis import Evidence, classify
from runbook.evidence.launcher_log import scan
from runbook.playbook import load
from runbook.report.model import Incident, Step, mask
from runbook.report.render import memory_svg, render_all
from tests.conftest import corpus_records
from tests.golden import check_golden

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "report"
T0 = 1795000000.0  # fixed clock: goldens must not depend on when the test runs


def incident() -> Incident:
    msg = next(r for r in corpus_records("oom_messages.jsonl") if r["id"] == "oom-032")["text"]
    launch = scan("[rank3]: " + msg, nodes=["gpu-01", "gpu-02"], tasks_per_node=2)
    d = classify(Evidence(launch=launch), load().thresholds)
    inc = Incident(
        id="20261121-000000-42",
        job_id="42",
        source="cli",
        actor="runbook oom",
        site="golden",
        started=T0,
        finished=T0 + 2.5,
    )
    inc.job = {
        "name": "llama-sft",
        "user": "alice",
        "state": "RUNNING",
        "exit_code": "0:0",
        "node_expr": "gpu-[01-02]",
    }
    inc.timeline = [
        Step(n, T0 + i * 0.25, T0 + i * 0.25 + 0.2, "ok", f"{n} done")
        for i, n in enumerate(
            ["job", "logs", "cancel", "node health", "diagnosis", "plan", "actions"]
        )
    ]
    inc.diagnosis = d.contract()
    inc.evidence = {
        "first_failure": inc.diagnosis["first_failure"],
        "timed_out_ranks": [0, 1, 2],
        "node_health": {},
        "notes": [],
    }
    inc.plan = {
        "rung": "expandable_segments",
        "rung_what": "set both allocator variables",
        "why": "first rung of the fragmentation ladder not yet tried",
        "tried": [],
        "passed_over": [],
        "checkpoint": {
            "path": "/w/checkpoints/step_4.pt",
            "step": 4,
            "reason": "zip directory intact",
        },
        "checkpoints_skipped": [],
        "changes": ["allocator: expandable_segments:True"],
        "checks": ["bash -n: the patched script parses"],
        "diff": "--- a/job.sbatch\n+++ b/job.sbatch\n@@ -1 +1,2 @@\n #!/bin/bash\n"
        "+export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n",
    }
    inc.actions = [
        {
            "kind": "submit",
            "target": "/s/job.sbatch",
            "status": "applied",
            "dry_run": False,
            "exit_code": 0,
            "duration_s": 0.01,
            "message": "done",
            "argv": ["env", "HF_TOKEN=hf_secretvalue", "sbatch", "--parsable", "job"],
        }
    ]
    inc.new_job_id, inc.exit_code, inc.status = "43", 0, "complete"
    inc.summary = "fragmentation: job 42, rank 3 on gpu-02; cancelled 42; resubmitted as 43"
    inc.next_steps = ["Check the rerun later: `runbook verify --incident 20261121-000000-42`."]
    return inc


def _check(name: str, text: str) -> None:
    check_golden(GOLDEN / name, text, __file__)


def test_golden_markdown_and_json():
    out = render_all(incident().to_json())
    _check("golden.report.md", out["report.md"])
    _check("golden.report.json", out["report.json"])


def test_secrets_are_masked_everywhere():
    data = incident().to_json()
    text = json.dumps(data) + "".join(render_all(data).values())
    assert "hf_secretvalue" not in text and "HF_TOKEN=***" in text
    assert mask({"api_key": "k", "x": "PASSWORD=p q"}) == {"api_key": "***", "x": "PASSWORD=*** q"}


def test_schema_is_versioned_and_numbers_are_there():
    data = incident().to_json()
    assert data["schema"] == "runbook.incident/1"
    oom = data["diagnosis"]["oom"]
    md = render_all(data)["report.md"]
    assert f"{oom['tried_mib']:.2f}" in md and "reserved but unallocated" in md
    assert data["diagnosis"]["verdict"] == "fragmentation"


def test_stopped_run_still_renders_and_says_where():
    inc = incident()
    inc.status, inc.stopped_at = "stopped", "node health"
    inc.errors = ["node health: cannot connect to gpu-02"]
    md = render_all(inc.to_json())["report.md"]
    assert "stopped at step **node health**" in md and "cannot connect to gpu-02" in md


def test_memory_svg_marks_every_part_and_the_request():
    svg = memory_svg(incident().to_json()["diagnosis"]["oom"])
    for label in ("allocated by PyTorch", "reserved but unallocated", "free", "failed request"):
        assert label in svg


def test_a_read_back_job_size_reads_as_words_not_a_python_dict():
    from runbook.report.render import world_text

    assert world_text({"nodes": 2, "tasks": 4, "gpus": 4}) == "2 nodes, 4 tasks, 4 GPUs"
    assert world_text({"nodes": 1, "tasks": 1, "gpus": None}) == "1 node, 1 task, GPUs unknown"
    assert world_text(None) == "unknown"


def test_the_resume_checkpoint_is_said_once_and_an_array_task_names_its_array():
    inc = incident()
    inc.plan["changes"] = [
        "micro_batch 8 -> 4",
        "resume from /w/checkpoints/step_4.pt (RUNBOOK_RESUME_FROM)",
    ]
    inc.job.update(array_job_id="40", array_task_id="2", raw_id="42")
    out = render_all(inc.to_json())
    for name in ("report.md", "report.html"):
        assert out[name].count("/w/checkpoints/step_4.pt") == 1, name
        assert "task 2 of job array 40" in out[name], name


def test_no_cost_label_runs_past_the_picture_s_edges():
    """Issue 32: labels centred on marks at the ends were cut ("etected", "resubmitted")."""
    import re

    from runbook.report.render import LABEL_CHAR_PX, cost_svg

    marks = [
        {"label": "failed", "at": 0.0},
        {"label": "detected", "at": 0.5},
        {"label": "diagnosed", "at": 30.0},
        {"label": "resubmitted", "at": 59.5},
        {"label": "rerun passed the step", "at": 60.0},
    ]
    svg = cost_svg({"marks": marks}, width=900)
    for x, anchor, label in re.findall(
        r'<text x="([\d.]+)" y="\d+" font-size="11" text-anchor="(\w+)">([^<]*)</text>', svg
    ):
        w = LABEL_CHAR_PX * len(label)
        left = {"start": 0, "middle": w / 2, "end": w}[anchor]
        assert float(x) - left >= 0 and float(x) - left + w <= 900, (label, anchor, x)


def test_a_forward_pass_fit_never_reads_as_predicted_under_the_card_when_it_is_not():
    """A real H200 OOM in GPT-2's forward pass (tests/data/gpu/families): the fit's choice is the
    halving, its prediction a range whose high end is over the limit; neither report says it is
    "predicted ... at most, under" the limit, and each candidate shows both ends."""
    import subprocess
    import sys

    log = Path(__file__).resolve().parents[1] / "data" / "gpu" / "families"
    argv = [sys.executable, "-m", "runbook", "diagnose", "--json", "--micro-batch", "62"]
    done = subprocess.run(
        [*argv, "--log", str(log / "fit-gpt2_medium-m62.log")], capture_output=True
    )
    fit = json.loads(done.stdout)["fit"]
    assert fit["halved"] and fit["step_factor"] == 2.0 and fit["micro_batch"] == 31
    assert fit["predicted_peak_mib"] > fit["limit_mib"]
    data = incident().to_json()
    data["plan"] = {"fit": fit}
    out = render_all(data)
    for name in ("report.md", "report.html"):
        text = out[name]
        assert "at most, under" not in text, name
        assert "micro-batch 31, from 62, is the ladder's default, the halving" in text, name
        assert "whose numbers are a lower bound" in text and "may fit" in text, name
