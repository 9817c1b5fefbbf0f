"""Node health on the real test cluster's sshd: two nodes probed in parallel, one replaying a
recorded row-remap-pending nvidia-smi and a recorded Xid 79 (no GPU here: recorded real outputs
served through the real path), one a recorded healthy H100; one exec per node; refusals."""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime
from pathlib import Path

import pytest

from runbook.evidence.gpu_health import probe_nodes
from runbook.site import load_site
from runbook.transport.ssh import SshHosts, SshSettings
from tests.cluster.scenario import calls, node_health
from tests.conftest import corpus_records

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


def record(rel: str, rid: str) -> str:
    return next(r for r in corpus_records(rel) if r["id"] == rid)["text"]


@pytest.fixture
def two_nodes(cluster):
    state = Path(cluster["RUNBOOK_CLUSTER_STATE"])
    site = load_site("devcluster", environ={})
    sick = node_health(
        state,
        "gpu-01",
        site.probes,
        kernel=record("ops/xid_dmesg.jsonl", "xid-akash-209-79-dmesgT"),
        ecc=record("ops/nvidia_smi_remap_ecc.jsonl", "remap-gpud-80-uncorrectable-pending"),
        apps=record("ops/nvidia_smi_apps.jsonl", "apps-nvitop-152-table-gi-ci-mixed-types"),
        source="corpus: xid-akash-209, remap-gpud-80, apps-nvitop-152",
    )
    healthy = node_health(
        state,
        "gpu-02",
        site.probes,
        kernel="",
        ecc=(DATA / "gpud-535.161.08-h100x8-first2.q.txt").read_text(),
        apps=record("ops/nvidia_smi_apps.jsonl", "apps-gpud-550-h100x8-no-processes"),
        source="tests/data/nvidia-smi (gpud testdata), corpus apps-gpud-550",
    )
    sick.write()
    healthy.write()
    yield site, state
    sick.clear()
    healthy.clear()


def test_probe_two_nodes_one_exec_each(two_nodes):
    site, state = two_nodes
    before = {n: len(calls(state, n)) for n in ("gpu-01", "gpu-02")}
    with SshHosts(SshSettings.from_site(site)) as hosts:
        health = probe_nodes(hosts, ["gpu-01", "gpu-02"], "999999", site.probes, since=None)
        assert all(hosts[n].execs == 1 and hosts[n].connects == 1 for n in ("gpu-01", "gpu-02"))
    sick, ok = health["gpu-01"], health["gpu-02"]
    assert sick.error is None and ok.error is None
    assert [e.xid for e in sick.kernel.events] == [79]
    assert sick.memory.row_remap()["pending"] is True
    assert [a.pid for a in sick.apps] == [10734, 58661, 10734, 18243, 22720]
    reasons = sick.gpu_fault_reasons()
    assert any("Xid 79" in r for r in reasons) and any("row remap pending" in r for r in reasons)
    assert ok.gpu_fault_reasons() == [] and ok.apps == [] and ok.kernel.events == []
    assert ok.memory.row_remap() == {
        "pending": False,
        "failure": False,
        "correctable": 0,
        "uncorrectable": 0,
    }
    # No job 999999 on the node: that part is unavailable, in Slurm's words; the rest stands.
    assert "job_pids" in sick.unavailable
    # Every stand-in call was one the scenario expected.
    for n in ("gpu-01", "gpu-02"):
        made = calls(state, n)[before[n] :]
        assert len(made) == 3 and all(c["matched"] for c in made), made


def test_stale_xid_outside_the_job_window_is_dropped(two_nodes):
    site, _ = two_nodes
    with SshHosts(SshSettings.from_site(site)) as hosts:
        health = probe_nodes(hosts, ["gpu-01"], "1", site.probes, since=datetime(2026, 1, 1))
    sick = health["gpu-01"]
    assert sick.kernel.events == [] and sick.kernel.stale_dropped == 1
    assert [r for r in sick.gpu_fault_reasons() if "row remap" in r]  # the remap state has no age


def test_missing_tool_marks_that_part_unavailable(two_nodes):
    site, _ = two_nodes
    probes = dataclasses.replace(site.probes, nvidia_smi="/opt/nowhere/nvidia-smi")
    with SshHosts(SshSettings.from_site(site)) as hosts:
        h = probe_nodes(hosts, ["gpu-02"], "1", probes, since=None)["gpu-02"]
    assert h.error is None and h.kernel is not None
    assert "exited 127" in h.unavailable["ecc"] and "exited 127" in h.unavailable["apps"]


def test_unreachable_node_is_an_error_in_the_evidence_bounded_in_time(two_nodes):
    site, _ = two_nodes
    settings = dataclasses.replace(
        SshSettings.from_site(site),
        connect_timeout_s=1.0,
        connect_retries=1,
        addresses=(("gpu-01", "198.18.0.11"), ("gpu-09", "198.18.0.99")),
    )
    start = time.monotonic()
    with SshHosts(settings) as hosts:
        health = probe_nodes(hosts, ["gpu-09", "gpu-01"], "1", site.probes, since=None)
    assert time.monotonic() - start < 8
    assert "cannot connect to gpu-09" in health["gpu-09"].error
    assert health["gpu-01"].error is None  # the others are still probed


def test_changed_host_key_refuses_the_probe(two_nodes, tmp_path, cluster):
    site, _ = two_nodes
    import paramiko

    other = paramiko.Ed25519Key.from_private_key_file(cluster["RUNBOOK_CLUSTER_SSH_KEY"])
    kh = tmp_path / "known_hosts"
    kh.write_text(f"gpu-01,198.18.0.11 {other.get_name()} {other.get_base64()}\n")
    settings = dataclasses.replace(SshSettings.from_site(site), known_hosts=str(kh))
    with SshHosts(settings) as hosts:
        h = probe_nodes(hosts, ["gpu-01"], "1", site.probes, since=None)["gpu-01"]
    assert "CHANGED" in h.error and h.kernel is None
