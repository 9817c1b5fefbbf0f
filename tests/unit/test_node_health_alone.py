"""Node-health inputs given alone to `runbook diagnose` (issue 55): every real record of the
corpus (../shared/corpus/ops: kernel logs with Xid lines, `nvidia-smi -q` ECC and remap
sections, process lists) is a result, exit 0, whose sentence says what the document shows and
never denies it; 3 is kept for input that cannot be read."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from runbook.cli import cli
from tests.conftest import corpus_records

CASES = [
    ("--dmesg", "ops/xid_dmesg.jsonl"),
    ("--gpu-health", "ops/nvidia_smi_remap_ecc.jsonl"),
    ("--compute-apps", "ops/nvidia_smi_apps.jsonl"),
]
RECORDS = [(opt, r) for opt, f in CASES for r in corpus_records(f)]


@pytest.mark.parametrize(("option", "record"), RECORDS, ids=[r["id"] for _, r in RECORDS])
def test_a_node_health_record_alone_is_a_result_said_as_read(option, record, tmp_path):
    path = tmp_path / "input.txt"
    path.write_text(record["text"])
    r = CliRunner().invoke(cli, ["diagnose", option, str(path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout if hasattr(r, "stdout") else r.output)
    said = " ".join(doc["reasons"])
    assert "Nothing in the input" not in said, said
    if option == "--dmesg":
        for n in (record["answer"].get("xids") or [])[:5]:
            assert f"Xid {n}" in said or f"SXid {n}" in said or doc["verdict"] == "gpu_fault", (
                n,
                said,
            )
    if option == "--gpu-health" and record["answer"]["summary"].get("pending"):
        assert "pending" in said, said


def test_input_that_is_no_kernel_log_is_exit_3(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("remember to buy milk\n")
    r = CliRunner().invoke(cli, ["diagnose", "--dmesg", str(path)])
    assert r.exit_code == 3 and "no kernel log line found" in r.output
