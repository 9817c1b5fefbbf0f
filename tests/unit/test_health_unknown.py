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
    assert "Health **unknown**: gpu_fault and co_tenant cannot be ruled out." in md
    assert "<b>Health unknown</b>" in html and "Xid events: <b>unknown</b>" in html
