"""Real parallel-shell outputs (pdsh, dshbak, clush) captured on the test cluster.

On-call engineers collect `nvidia-smi` and kernel logs from several nodes with a parallel shell and
paste the result; runbook must keep each node's lines apart (runbook/evidence/multihost.py). How
each tool frames its output is taken here from the tools themselves, Debian's pdsh and
clustershell, run over the test cluster's real sshd against the nodes' stand-ins, which replay
recorded real outputs (corpus records, named by id). The framing is real; the payload is replayed.

    python3 -m tests.cluster.parallel_shells     # needs `cluster.sh up`, pdsh and clush
        rewrites tests/data/corpus/ops/multihost.jsonl

The answer key of each capture comes from its payload records' hand-made answer keys, never from
the parser under test. tests/integration/test_parallel_shells.py runs the same captures live.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.cluster.scenario import Canned, Scenario
from tests.conftest import corpus_records

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "data" / "corpus" / "ops" / "multihost.jsonl"
NODES = ["gpu-01", "gpu-02", "gpu-03"]


@dataclass(frozen=True)
class Probe:
    """What runs on each node, and the corpus file its payloads come from."""

    name: str
    argv: list[str]
    corpus: str
    kind: str  # apps | kernel


PROBES = {
    "table": Probe("table", ["nvidia-smi"], "ops/nvidia_smi_apps.jsonl", "apps"),
    "dmesg": Probe("dmesg", ["dmesg", "-T"], "ops/xid_dmesg.jsonl", "kernel"),
    "journal": Probe("journal", ["journalctl", "-k"], "ops/xid_dmesg.jsonl", "kernel"),
}

# Which recorded output each node replays. Two nodes with the same payload make clush -b and
# dshbak -c fold them under one header (`gpu-[02-03]`, `gpu-[01,03]`).
# A node with no sshd behind its address: the shells say so on stderr, which a paste of `2>&1`
# interleaves with the output (the `down` scenario).
UNREACHABLE = "gpu-09"
SCENARIOS: list[tuple[str, str, dict[str, str]]] = [
    (
        "cotenant",
        "table",
        {
            "gpu-01": "apps-nvitop-152-table-gi-ci-mixed-types",
            "gpu-02": "apps-gpud-550-h100x8-no-processes",
            "gpu-03": "apps-gpud-550-h100x8-no-processes",
        },
    ),
    (
        "busy",
        "table",
        {
            "gpu-01": "own-apps-003",
            "gpu-02": "own-apps-001",
            "gpu-03": "own-apps-001",
        },
    ),
    (
        "xid",
        "dmesg",
        {
            "gpu-01": "xid-akash-209-79-dmesgT",
            "gpu-02": "xid-akash-244-43-31-94",
            "gpu-03": "xid-akash-209-79-dmesgT",
        },
    ),
    (
        "xid",
        "journal",
        {
            "gpu-01": "xid-nvforum-364958-120-62-154-45",
            "gpu-02": "xid-proton-9426-31",
            "gpu-03": "xid-ogkm-1030-31",
        },
    ),
    (
        "down",
        "dmesg",
        {
            "gpu-01": "xid-akash-209-79-dmesgT",
            "gpu-02": "xid-proton-9426-31",
        },
    ),
]

# The framings, as the tools print them: pdsh prefixes every line with `node: `, dshbak gathers
# them under a header per node, `dshbak -c` folds identical outputs; clush prefixes, `clush -b`
# gathers and folds (with a count when it folds).
TOOLS = ["pdsh", "pdsh | dshbak", "pdsh | dshbak -c", "clush", "clush -b"]


def ssh_config(state: Path, env: dict[str, str]) -> Path:
    """One ssh config for both tools: the nodes' addresses, the on-call key, the cluster's
    known_hosts with strict checking (no host key is accepted on first sight)."""
    nodes = int(env.get("RUNBOOK_CLUSTER_NODES", "3"))
    lines = []
    for i in range(1, nodes + 1):
        lines += [f"Host gpu-{i:02d}", f"  HostName 198.18.0.{10 + i}"]
    # An address on the cluster's network that nothing answers: ssh fails in seconds.
    lines += [f"Host {UNREACHABLE}", "  HostName 198.18.0.99", "  ConnectTimeout 3"]
    lines += [
        "Host gpu-*",
        f"  User {env['RUNBOOK_CLUSTER_SSH_USER']}",
        f"  IdentityFile {env['RUNBOOK_CLUSTER_SSH_KEY']}",
        f"  UserKnownHostsFile {env['RUNBOOK_CLUSTER_KNOWN_HOSTS']}",
        "  StrictHostKeyChecking yes",
        "  BatchMode yes",
        "  ConnectTimeout 10",
    ]
    path = state / "parallel_shells.ssh_config"
    path.write_text("\n".join(lines) + "\n")
    return path


def missing_tools() -> list[str]:
    return [t for t in ("pdsh", "dshbak", "clush") if shutil.which(t) is None]


def versions() -> dict[str, str]:
    pdsh = subprocess.run(["pdsh", "-V"], capture_output=True, text=True)
    clush = subprocess.run(["clush", "--version"], capture_output=True, text=True)
    return {
        "pdsh": (pdsh.stdout + pdsh.stderr).splitlines()[0].strip(),
        "clush": (clush.stdout + clush.stderr).strip(),
    }


def run(
    tool: str, nodes: list[str], argv: list[str], config: Path, *, merged: bool = False
) -> tuple[str, str]:
    """(the command as a person types it, its stdout; with `merged`, stdout and stderr as one
    stream, as `2>&1` gives them)."""
    hosts = ",".join(nodes)
    remote = " ".join(argv)
    env = dict(os.environ)
    err = subprocess.STDOUT if merged else subprocess.PIPE
    redirect = " 2>&1" if merged else ""
    if tool.startswith("pdsh"):
        env.update(PDSH_RCMD_TYPE="ssh", PDSH_SSH_ARGS_APPEND=f"-F {config}")
        pdsh = subprocess.run(
            ["pdsh", "-w", hosts, *argv],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            timeout=60,
        )
        out = pdsh.stdout
        typed = f"pdsh -w {hosts} {remote}{redirect}"
        if "dshbak" in tool:
            flags = tool.split("dshbak", 1)[1].split()
            out = subprocess.run(
                ["dshbak", *flags], input=out, capture_output=True, text=True, timeout=60
            ).stdout
            typed += " | " + " ".join(["dshbak", *flags])
        return typed, out
    flags = tool.split()[1:]
    clush = subprocess.run(
        ["clush", "-o", f"-F {config}", *flags, "-w", hosts, *argv],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=env,
        timeout=60,
    )
    return " ".join(["clush", *flags, "-w", hosts, *argv]) + redirect, clush.stdout


def stage(state: Path, probe: Probe, payload: dict[str, str]) -> dict[str, dict]:
    """Write each node's scenario: the probe's command replays the payload record. Recorded
    texts lost their last newline when pasted; the tools print one, and pdsh joins a last line
    without it to the next node's first line, so it is given back."""
    records = {r["id"]: r for r in _records(probe.corpus)}
    tool, *args = probe.argv
    used = {}
    for node, rid in payload.items():
        rec = records[rid]
        Scenario(state, node).expect(
            Canned(tool, args, rec["text"].rstrip("\n") + "\n", rec["source_url"])
        ).write()
        used[node] = rec
    return used


def _records(rel: str) -> list[dict]:
    """The shared corpus's records and runbook's own (tests/data/corpus) of one kind."""
    own = REPO / "tests" / "data" / "corpus" / rel
    mine = [json.loads(ln) for ln in own.read_text().splitlines() if ln.strip()]
    return corpus_records(rel) + mine


def answer(probe: Probe, used: dict[str, dict]) -> dict[str, list]:
    """Per node, what its payload's own answer key says: (pid, MiB) pairs, or Xid numbers."""
    if probe.kind == "apps":
        return {n: [list(p) for p in r["answer"]["pid_used_mib"]] for n, r in used.items()}
    return {n: list(r["answer"]["xids"]) for n, r in used.items()}


def capture(state: Path, env: dict[str, str]) -> list[dict]:
    config = ssh_config(state, env)
    tools = versions()
    out = []
    for scenario, probe_name, payload in SCENARIOS:
        probe = PROBES[probe_name]
        used = stage(state, probe, payload)
        down = [UNREACHABLE] if scenario == "down" else []
        for tool in TOOLS:
            typed, text = run(tool, [*payload, *down], probe.argv, config, merged=bool(down))
            slug = tool.replace(" | ", "-").replace(" -", "-").replace(" ", "-")
            out.append(
                {
                    "id": f"multihost-{scenario}-{probe.name}-{slug}",
                    "source_kind": "captured",
                    # The first node's payload; every payload's source is in the answer.
                    "source_url": next(iter(used.values()))["source_url"],
                    # Every capture was seen before multihost.py read dshbak's and clush -b's
                    # bare headers: none is kept apart for measuring.
                    "split": "tune",
                    "text": text,
                    "answer": {
                        "kind": probe.kind,
                        "per_host": answer(probe, used),
                        # Nodes the shell could not reach: their health is unknown.
                        "unreachable": down,
                        "payload": {n: r["id"] for n, r in used.items()},
                        "payload_urls": {n: r["source_url"] for n, r in used.items()},
                        "command": typed,
                        "tool": tools["clush" if tool.startswith("clush") else "pdsh"],
                        "note": "captured on the test cluster (real sshd, Debian's pdsh and "
                        "clustershell); each node's stand-in replays the payload record",
                    },
                }
            )
        for node in payload:
            Scenario(state, node).clear()
    return out


def main() -> int:
    if missing := missing_tools():
        print(f"not installed: {', '.join(missing)} (apt-get install pdsh clustershell)")
        return 2
    env = _cluster_env()
    records = capture(Path(env["RUNBOOK_CLUSTER_STATE"]), env)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    print(f"wrote {len(records)} captures to {OUT.relative_to(REPO)}")
    return 0


def _cluster_env() -> dict[str, str]:
    text = subprocess.run(
        ["bash", str(REPO / "tests" / "cluster" / "cluster.sh"), "env"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


if __name__ == "__main__":
    sys.exit(main())
