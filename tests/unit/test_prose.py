"""What an on-call engineer reads, checked as text (tests/prose.py): `diagnose` over every corpus
record, and the report's Markdown and HTML text of several incidents. No Python repr, no unit
that contradicts its label, no sentence said twice."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.diagnose_snapshot import cases
from runbook.cli import cli
from runbook.report.render import render_all
from tests.prose import defects
from tests.unit.test_report import incident
from tests.unit.test_report_html import crowded_incident


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("then timed out in NCCL (consequences): ranks [0, 1, 2]", "a Python list"),
        ("values after: {'micro_batch': 8, 'grad_accum': 4}", "a Python dict"),
        ("- Row remap: pending False, failure False.", "a Python bool or None"),
        ("In MiB: the shortfall is 2.60 GiB (request - free).", "unit against its label"),
        (
            "Also possible: true_oom (its fix would cover it).\nAlso possible: true_oom (its fix "
            "would cover it).",
            "said twice",
        ),
        ("- First failure: **oom** on rank(s) 3 on gpu-02.", "a count with (s)"),
        ("- Health unknown: gpu_fault and co_tenant cannot be ruled out.", "an id in a sentence"),
    ],
)
def test_the_check_finds_what_round_4_shipped(text, found):
    assert any(d.startswith(found) for d in defects(text)), defects(text)


def test_quoted_log_text_and_settings_are_data_not_prose():
    ok = (
        "why: the log says `allow_unreachable=True` and `ranks [0, 1]`.\n"
        "next step: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the job's environment\n"
        "  train.py:12 in main: x = {'a': None}\n"
        "  train.py:12 in main: x = {'a': None}\n"
    )
    assert defects(ok) == []


def _diagnose_outputs():
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        for name, opts in cases():
            args = ["diagnose"]
            for i, (opt, value) in enumerate(opts):
                if opt in ("--micro-batch", "--grad-accum"):
                    args += [opt, value]
                    continue
                f = Path(tmp) / f"{i}.txt"
                f.write_text(value)
                args += [opt, str(f)]
            yield name, runner.invoke(cli, args).output


def test_diagnose_reads_as_prose_on_every_corpus_record():
    found = {}
    n = 0
    for name, out in _diagnose_outputs():
        n += 1
        if d := defects(out):
            found[name] = d[:3]
    assert n > 500, n  # every corpus record was read
    assert found == {}, dict(list(found.items())[:10])


def _html_text(html: str) -> str:
    html = re.sub(r"<(style|svg|script)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r"<pre>.*?</pre>|<code>.*?</code>", " ", html, flags=re.S)
    html = re.sub(r"<(?:li|p|tr|h\d|br)\b[^>]*>", "\n", html)
    text = re.sub(r"<[^>]+>", " ", html)
    return text.replace("&#39;", "'").replace("&quot;", '"').replace("&amp;", "&")


def _reports():
    stopped = incident()
    stopped.status, stopped.stopped_at = "stopped", "node health"
    stopped.evidence["node_health"] = {
        "gpu-02": {
            "error": None, "xids": [], "sxids": [], "unavailable": {}, "apps": [], "stale_dropped": 0,
            "row_remap": {"pending": False, "failure": False, "correctable": 0,
                          "uncorrectable": 0},
            "ecc": {"volatile_uncorrectable": 0, "aggregate_uncorrectable": None},
        }
    }  # fmt: skip
    return {
        "golden": incident().to_json(),
        "crowded": crowded_incident(),
        "stopped": stopped.to_json(),
    }


@pytest.mark.parametrize("name", ["golden", "crowded", "stopped"])
def test_the_report_reads_as_prose(name):
    out = render_all(_reports()[name])
    assert defects(out["report.md"]) == []
    assert defects(_html_text(out["report.html"])) == []


def test_counts_are_said_as_people_say_them_from_numbers_and_slurms_text():
    from runbook.report.render import component_text
    from runbook.words import count, ranks

    assert [count(1, "node"), count("1", "node"), count(3, "node"), count(None, "node")] == [
        "1 node",
        "1 node",
        "3 nodes",
        "? nodes",
    ]
    assert [ranks([3]), ranks([0, 1]), ranks([])] == ["rank 3", "ranks 0, 1", "rank ?"]
    assert ranks(range(20), shown=3) == "ranks 0, 1, 2 and 17 more"
    # Slurm's read-back of a component gives its figures as text.
    c = {"nodes": "1", "ntasks": "1", "cpus_per_task": "1", "mem": "300M", "gpus": 0}
    assert component_text(c) == "1 node, 1 task, 1 CPU per task, mem 300M, 0 GPUs"
