"""Nodes that keep failing (issue 20, part 2): each node's history across incidents from recorded
real outputs (the corpus's Xid lines and nvidia-smi sections), each event counted once, the boot
window left out, and the site threshold that turns "exclude" into "drain"."""

from __future__ import annotations

import dataclasses
import json
import time
from types import SimpleNamespace

from click.testing import CliRunner

from runbook import state
from runbook.cli import cli
from runbook.evidence import nvsmi, xid
from runbook.evidence.gpu_health import NodeHealth
from runbook.evidence.node_history import events_of, record
from runbook.site import SiteConfig
from tests.conftest import corpus_records

XIDS = {r["id"]: r for r in corpus_records("ops/xid_dmesg.jsonl")}
REMAP = {r["id"]: r for r in corpus_records("ops/nvidia_smi_remap_ecc.jsonl")}


def health(kernel_text: str = "", memory_text: str = "") -> NodeHealth:
    h = NodeHealth(node="gpu-02")
    h.kernel = xid.parse(kernel_text, year_hint=2024)
    h.memory = nvsmi.parse_memory_health(memory_text) if memory_text else None
    return h


def test_an_xid_burst_is_one_event_and_a_remap_is_keyed_by_gpu():
    rec = XIDS["xid-akash-209-79-dmesgT"]["text"]
    burst = rec + "\n" + rec  # the same lines printed twice (a burst, or two probes)
    remap = REMAP["remap-gpud-80-uncorrectable-pending"]["text"]
    ev = events_of("gpu-02", health(burst, remap), incident="i1", verdict="gpu_fault", now=1e9)
    keys = {e.key for e in ev}
    assert (
        len([e for e in ev if e.kind == "xid"]) == 2
        and len({k for k in keys if k.startswith("xid:")}) == 1
    )  # one key: counted once when recorded
    assert any(e.kind == "row_remap" and "pending" in e.detail for e in ev)
    assert any(e.kind == "oom" for e in ev)


def test_kernel_lines_of_the_boot_window_are_not_failures():
    early = "[   14.650646] NVRM: Xid (PCI:0000:01:00): 79, pid=0, GPU has fallen off the bus."
    late = "[ 4014.650646] NVRM: Xid (PCI:0000:01:00): 79, pid=0, GPU has fallen off the bus."
    assert events_of("n", health(early), incident="i", verdict=None, now=1e9) == []
    assert [e.kind for e in events_of("n", health(late), incident="i", verdict=None, now=1e9)] == [
        "xid"
    ]


def site(tmp_path, **nodes) -> SiteConfig:
    s = SiteConfig()
    return dataclasses.replace(
        s,
        state=dataclasses.replace(s.state, dir=str(tmp_path)),
        nodes=dataclasses.replace(s.nodes, **nodes),
    )


def test_history_counts_once_across_incidents_and_the_verb_lists_it(tmp_path, monkeypatch):
    st = site(tmp_path, drain_after_events=3)
    conn = state.site_db(st)
    rec = XIDS["xid-akash-209-79-dmesgT"]["text"]
    probed = SimpleNamespace(nodes={"gpu-02": health(rec)})
    now = time.time()
    n1 = record(conn, st, probed, "gpu-02", incident="i1", verdict="gpu_fault", job_id="1", now=now)
    n2 = record(conn, st, probed, "gpu-02", incident="i2", verdict="gpu_fault", job_id="2", now=now)
    # the same Xid lines seen by two incidents: one Xid event; two OOM events (one per incident)
    assert n2 == n1 + 1
    rows = state.node_events(conn, since=0, node="gpu-02")
    assert sorted(r["kind"] for r in rows).count("xid") == 1
    monkeypatch.setattr("runbook.cli.AppContext.site", lambda self: st)
    r = CliRunner().invoke(cli, ["nodes", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    (entry,) = doc["nodes"]
    assert entry["node"] == "gpu-02" and entry["events"] == n2
    assert entry["over_threshold"] is (n2 >= 3)
    bad = CliRunner().invoke(cli, ["nodes", "--since", "last week"])
    assert bad.exit_code == 2 and "30d or 12h" in bad.output


def test_threshold_turns_exclude_into_drain():
    from pathlib import Path

    from runbook.diagnosis import Diagnosis
    from runbook.evidence.collect import CheckpointEvidence, LineageEvidence
    from runbook.planning.plan import make_plan
    from runbook.playbook import load

    script = Path(__file__).resolve().parents[1] / "data" / "sbatch" / "hf_accelerate.sbatch"
    job = SimpleNamespace(
        job_id="9", work_dir="", excluded=[], resources={}, num_nodes=1, num_tasks=1
    )
    s = dataclasses.replace(
        SiteConfig(), nodes=dataclasses.replace(SiteConfig().nodes, drain_after_events=3)
    )
    args = dict(
        job=job,
        script=script.read_text(),
        run=LineageEvidence(),
        checkpoints=CheckpointEvidence(),
        node="gpu-02",
        failed_step=None,
    )
    quiet = make_plan(Diagnosis("co_tenant"), load(), s, node_events=2, **args)
    assert quiet.rung == "exclude_node" and quiet.drain is None
    noisy = make_plan(Diagnosis("co_tenant"), load(), s, node_events=3, **args)
    assert noisy.drain == "gpu-02" and "drain_after_events = 3" in noisy.why
    off = make_plan(Diagnosis("co_tenant"), load(), SiteConfig(), node_events=99, **args)
    assert off.drain is None  # 0: the site never drains on history
