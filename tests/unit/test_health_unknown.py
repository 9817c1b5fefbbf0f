"""A probe that failed is health unknown, never healthy: the diagnosis says gpu_fault and
co_tenant cannot be ruled out, and the report says unknown instead of "No Xid events"."""

from __future__ import annotations

from runbook.diagnosis import Evidence, classify
from runbook.evidence import launcher_log
from runbook.evidence.gpu_health import NodeHealth, health_from_sections
from runbook.playbook import load

OOM = (
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
    "has a total capacity of 79.15 GiB of which 1.00 GiB is free. Including non-PyTorch "
    "memory, this process has 78.10 GiB memory in use. Of the allocated memory 60.00 GiB is "
    "allocated by PyTorch, and 16.00 GiB is reserved by PyTorch but unallocated."
)


def diagnose(health: NodeHealth):
    ev = Evidence(launch=launcher_log.scan(OOM), node_health=health)
    return classify(ev, load().thresholds)


def test_unreachable_node_leaves_faults_open():
    d = diagnose(NodeHealth(node="gpu-02", error="host key of gpu-02 CHANGED: ..."))
    assert d.verdict == "fragmentation"
    assert any("gpu-02 is unknown" in r and "cannot be ruled out" in r for r in d.reasons)


def test_refused_tools_are_named():
    sections = {
        "kernel_log": ("stand-in: not told to expect `dmesg -T`", 97),
        "ecc": ("ECC Errors\n", 0),
        "apps": ("", 0),
    }
    h = health_from_sections("gpu-01", sections)
    assert h.unknowns() == [
        "Xid (kernel log): kernel log exited 97: stand-in: not told to expect `dmesg -T`"
    ]
    d = diagnose(h)
    assert any("Xid (kernel log)" in r and "cannot be ruled out" in r for r in d.reasons)


def test_a_healthy_probe_adds_no_such_reason():
    h = health_from_sections("gpu-01", {"kernel_log": ("", 0), "ecc": ("", 0), "apps": ("", 0)})
    assert h.unknowns() == []
    assert not any("unknown" in r for r in diagnose(h).reasons)


def test_report_says_unknown_not_no_xid_events():
    from runbook.report.render import render_all
    from runbook.report.views import health_view
    from tests.unit.test_report import incident

    refused = health_from_sections(
        "gpu-01", {"kernel_log": ("not told to expect dmesg", 97), "ecc": ("", 0), "apps": ("", 0)}
    )
    gone = NodeHealth(node="gpu-02", error="cannot connect to gpu-02 (198.18.0.12:22): timed out")
    inc = incident()
    inc.evidence["node_health"] = {
        "gpu-01": health_view(refused, "42"),
        "gpu-02": health_view(gone, "42"),
    }
    out = render_all(inc.to_json())
    md, html = out["report.md"], out["report.html"]
    assert "Xid events: **unknown** (the kernel log could not be read: kernel log exited 97" in md
    assert "No Xid events" not in md and "No Xid events" not in html
    assert (
        "Health **unknown**: a GPU fault and another process on the GPU cannot be ruled out." in md
    )
    assert "<b>Health unknown</b>" in html and "Xid events: <b>unknown</b>" in html


def test_compute_apps_of_several_nodes_count_for_none_when_the_failing_node_is_unknown():
    """Issue 34: a compute-apps CSV gathered from several nodes by pdsh (`gpu-01: 1111, 30000
    MiB`) or dshbak (a header per node) was read as one node's: another node's process was taken
    for a co-tenant of the GPU that ran out. Read host by host; with the failing node unknown,
    none counts, and the reason says why; with it known, only its own."""
    from runbook.evidence import nvsmi
    from runbook.evidence.gpu_health import NodeHealth

    pdsh = (
        "gpu-01: pid, used_gpu_memory [MiB]\ngpu-01: 1111, 30000 MiB\n"
        "gpu-02: pid, used_gpu_memory [MiB]\ngpu-02: 4242, 70000 MiB\n"
    )
    rule = "-" * 16
    dshbak = (
        f"{rule}\ngpu-01\n{rule}\npid, used_gpu_memory [MiB]\n1111, 30000 MiB\n"
        f"{rule}\ngpu-02\n{rule}\npid, used_gpu_memory [MiB]\n4242, 70000 MiB\n"
    )
    for text in (pdsh, dshbak):
        apps = nvsmi.parse_compute_apps(text)
        assert [(a.pid, a.used_mib, a.host) for a in apps] == [
            (1111, 30000.0, "gpu-01"),
            (4242, 70000.0, "gpu-02"),
        ]
        unknown = NodeHealth(node="", apps=apps, framing={"apps": (["gpu-01", "gpu-02"], {})})
        assert unknown.foreign_apps("77") == []
        assert any("several nodes" in u for u in unknown.unknowns())
        known = NodeHealth(node="gpu-02", apps=apps)
        assert [a.pid for a in known.foreign_apps("77")] == [4242]
    one = NodeHealth(node="", apps=nvsmi.parse_compute_apps("gpu-02: 4242, 70000 MiB\n"))
    assert [a.pid for a in one.foreign_apps("77")] == [4242]  # one node's output is that node's
