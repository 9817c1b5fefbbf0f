"""The fitted resubmission (issue 30) on the real cluster: the modelled job states its parameter
count (runbook.instrument's dump), so runbook solves the micro-batch from the failure's numbers.
Where halving is not enough, the first rerun takes the micro-batch that fits (a quarter here)
with the accumulation scaled so the global batch is kept, and passes the failing step; where
nothing fits, no micro-batch rerun is made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_oom_scenarios import act, runbook

pytestmark = pytest.mark.integration


def test_the_first_rerun_takes_the_fitted_micro_batch_and_passes(scenario):
    # Rank 3 at micro-batch 8 needs 20000 + 2 x 8 x 2000 x 4 MiB: halving (4) still needs
    # 84000 MiB of the 81559 MiB card; a quarter (2) needs 52000: the fit must say 2.
    s = scenario("fitted", long_factor=4.0, extra_args="--report-params")
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    out = act(job)
    assert out["verdict"] == "true_oom" and out["new_job_id"], out
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    fit = report["diagnosis"]["fit"]
    assert fit["micro_batch"] == 2 and fit["range"] is False, fit
    # Within 5% of the modelled peak at micro-batch 2 (52000 MiB).
    assert abs(fit["predicted_peak_mib"] - 52000) / 52000 < 0.05, fit
    plan = report["plan"]
    assert plan["rung"] == "halve_micro_batch"
    assert "micro_batch 8 -> 2" in plan["changes"] and "grad_accum 2 -> 8" in plan["changes"]
    log = s.wait_done(out["new_job_id"])
    assert "micro-batch 2 x grad-accum 8" in log and "training finished at step 10" in log


def test_where_nothing_fits_no_micro_batch_rerun_is_made(scenario):
    # Weights, gradients and optimizer state alone take 72000 MiB of the card: even micro-batch
    # 1 is predicted over its 90% (73403 MiB), so the next rung (checkpointing) is taken.
    s = scenario(
        "nofit",
        param_mib=72000,
        act_mib_per_sample=500,
        long_factor=2.0,
        extra_args="--report-params",
    )
    job = s.submit()
    s.wait_failure(job, "Tried to allocate")
    code, out = runbook("oom", "--job", job, "--yes", "--json")
    report = json.loads((Path(out["folder"]) / "report.json").read_text())
    assert report["diagnosis"]["fit"]["micro_batch"] is None, report["diagnosis"]["fit"]
    plan = report["plan"]
    assert plan["rung"] == "activation_checkpointing", plan
    assert any(r == "halve_micro_batch" for r, _ in plan["passed_over"]), plan["passed_over"]
