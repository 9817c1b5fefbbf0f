"""Write the per-node scenario files that the nvidia-smi / kernel-log stand-ins replay.

Only recorded real outputs go in: `from_corpus` takes a record of ../shared/corpus by id, and the
source URL travels with it, so a stand-in's output can always be traced to the system that wrote it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Canned:
    tool: str
    argv: list[str]
    stdout: str
    source: str
    stderr: str = ""
    exit: int = 0
    delay_s: float = 0.0  # the stand-in answers this late (a node under load)


@dataclass
class Scenario:
    state_dir: Path
    node: str
    commands: list[Canned] = field(default_factory=list)

    def expect(self, canned: Canned) -> Scenario:
        self.commands.append(canned)
        return self

    def write(self) -> Path:
        path = self.state_dir / "scenario" / f"{self.node}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"commands": [c.__dict__ for c in self.commands]}, indent=1))
        os.chmod(tmp, 0o644)
        tmp.replace(path)
        return path

    def clear(self) -> None:
        (self.state_dir / "scenario" / f"{self.node}.json").unlink(missing_ok=True)


def from_corpus(records: list[dict], record_id: str, tool: str, argv: list[str]) -> Canned:
    rec = next((r for r in records if r["id"] == record_id), None)
    if rec is None:
        raise KeyError(f"no corpus record {record_id!r}")
    return Canned(tool=tool, argv=argv, stdout=rec["text"], source=rec["source_url"])


def calls(state_dir: Path, node: str) -> list[dict]:
    path = state_dir / "calls" / f"{node}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def node_health(
    state_dir: Path,
    node: str,
    probes,
    *,
    kernel: str,
    ecc: str,
    apps: str,
    source: str,
    delay_s: float = 0.0,
) -> Scenario:
    """A node whose kernel log, `nvidia-smi -q -d ROW_REMAPPER,ECC` and process listing replay
    the given recorded outputs, for exactly the invocations runbook's probe makes (the site's
    [probes] section)."""
    kernel_tool, *kernel_args = probes.kernel_log
    apps_args = (
        []
        if probes.compute_apps == "table"
        else ["--query-compute-apps=pid,used_memory,gpu_uuid", "--format=csv"]
    )
    sc = Scenario(state_dir, node)
    sc.expect(Canned(kernel_tool, kernel_args, kernel, source, delay_s=delay_s))
    sc.expect(Canned("nvidia-smi", ["-q", "-d", "ROW_REMAPPER,ECC"], ecc, source))
    sc.expect(Canned("nvidia-smi", apps_args, apps, source))
    return sc
