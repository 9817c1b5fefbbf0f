"""Give the test cluster's nodes a healthy recorded GPU scenario (or take it away), so that the
demo's node probe gets real recorded answers instead of refusals.

    python3 -m tests.cluster.healthy write gpu-01 gpu-02 gpu-03
    python3 -m tests.cluster.healthy clear gpu-01 gpu-02 gpu-03

Healthy means: an empty kernel log window, a recorded real 8xH100 `nvidia-smi -q` with no
pending remaps or uncorrectable errors (tests/data/nvidia-smi, gpud's testdata), and a recorded
real `nvidia-smi` table with no processes (corpus apps-gpud-550-h100x8-no-processes).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from runbook.site import load_site
from tests.cluster.scenario import node_health
from tests.conftest import corpus_records

DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


def scenario(node: str):
    state = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
    apps = next(
        r
        for r in corpus_records("ops/nvidia_smi_apps.jsonl")
        if r["id"] == "apps-gpud-550-h100x8-no-processes"
    )["text"]
    return node_health(
        state,
        node,
        load_site("devcluster", environ={}).probes,
        kernel="",
        ecc=(DATA / "gpud-535.161.08-h100x8-first2.q.txt").read_text(),
        apps=apps,
        source="healthy: tests/data/nvidia-smi (gpud), corpus apps-gpud-550",
    )


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("write", "clear"):
        print(__doc__, file=sys.stderr)
        return 2
    for node in argv[1:]:
        sc = scenario(node)
        sc.write() if argv[0] == "write" else sc.clear()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
