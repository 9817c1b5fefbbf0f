"""Output of several nodes as the parallel shells really print it: Debian's pdsh (with dshbak) and
clustershell's clush, run over the test cluster's real sshd; each node's nvidia-smi and kernel-log
stand-in replays a recorded real output (no GPU here). runbook must keep each node's processes and
Xids apart in every framing (tests/cluster/parallel_shells.py; its stored captures are
tests/data/corpus/ops/multihost.jsonl)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.evidence import multihost
from tests import corpus_checks
from tests.cluster import parallel_shells

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def captures(cluster):
    missing = parallel_shells.missing_tools()
    assert not missing, (
        f"{', '.join(missing)} not installed: scripts/test installs Debian's pdsh and clustershell"
    )
    return parallel_shells.capture(Path(cluster["RUNBOOK_CLUSTER_STATE"]), cluster)


def test_every_framing_keeps_the_nodes_apart_replayed_outputs(captures):
    assert len(captures) == len(parallel_shells.SCENARIOS) * len(parallel_shells.TOOLS)
    for rec in captures:
        assert rec["text"].strip(), f"{rec['answer']['command']} printed nothing"
        assert corpus_checks.multihost(rec) == [], rec["id"]


def test_the_real_tools_frame_as_the_parser_expects(captures):
    """What multihost.py was written from, checked against the tools: a prefix per line, a bare
    name between rules (dshbak, clush -b of one node), a folded set with a count (clush -b) and
    without one (dshbak -c)."""
    by = {r["id"]: r["text"] for r in captures}
    assert all(ln.startswith("gpu-0") for ln in by["multihost-xid-dmesg-pdsh"].splitlines())
    assert "\ngpu-01\n" in "\n" + by["multihost-cotenant-table-pdsh-dshbak"]
    assert "gpu-[02-03] (2)" in by["multihost-cotenant-table-clush-b"]
    assert "\ngpu-01\n" in "\n" + by["multihost-cotenant-table-clush-b"]
    dshbak_c = by["multihost-xid-dmesg-pdsh-dshbak-c"].splitlines()
    assert "gpu-[01,03]" in dshbak_c and not any("(2)" in ln for ln in dshbak_c)
    # A node that cannot be reached: every shell says so, in words multihost.py reads.
    down = [r for r in captures if r["answer"]["unreachable"]]
    assert len(down) == len(parallel_shells.TOOLS)
    for rec in down:
        assert parallel_shells.UNREACHABLE in multihost.tool_messages(rec["text"]), rec["id"]
