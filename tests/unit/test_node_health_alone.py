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


# Issue 64 item 4, in the shapes its words give (written here): one event printed over two lines
# is said once, with its meaning.
SHAPES = {
    "xid13-ctime": (
        "--dmesg",
        "[Tue Dec  1 10:02:11 2026] NVRM: Xid (PCI:0000:3b:00): 13, pid=48211, name=python, "
        "Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address\n"
        "[Tue Dec  1 10:02:11 2026] NVRM: Xid (PCI:0000:3b:00): 13, pid=48211, name=python, "
        "Graphics Exception: ESR 0x525648=0x1000000e 0x525650=0x24\n",
        ["Xid 13 on 0000:3b:00 (pid 48211) at Tue Dec  1 10:02:11 2026", "category app"],
    ),
    "sxid-severity": (
        "--dmesg",
        "[Tue Dec  1 10:05:00 2026] nvidia-nvswitch2: SXid (PCI:0000:86:00.0): 12028, "
        "Non-fatal, Link 44 egress non-posted PRIV error (First)\n"
        "[Tue Dec  1 10:05:00 2026] nvidia-nvswitch2: SXid (PCI:0000:86:00.0): 12028, "
        "Severity 0 Engine instance 44 Sub-engine instance 00\n",
        ["NVSwitch SXid 12028 (non-fatal) on 0000:86:00.0", "not a GPU fault"],
    ),
    "apps-wrapper-csv": (
        "--compute-apps",
        "gpu-07: pid, process_name, used_gpu_memory [MiB]\n"
        "gpu-07: 48211, python, 79012 MiB\ngpu-07: 51002, /usr/bin/python3, 1200 MiB\n",
        ["2 on the GPUs: pid 48211 79012 MiB, pid 51002 1200 MiB"],
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_issue_shapes_read_with_exit_0_their_meaning_once(name, tmp_path):
    option, text, said = SHAPES[name]
    path = tmp_path / "input.txt"
    path.write_text(text)
    r = CliRunner().invoke(cli, ["diagnose", option, str(path)])
    assert r.exit_code == 0, r.output
    for words in said:
        assert r.output.count(words) == 1, r.output
