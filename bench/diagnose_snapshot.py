"""Every corpus record through `runbook diagnose --json`, one file per case: the safety net of a
refactor that must not change a verdict (issue 32: byte-identical before and after).

    python3 bench/diagnose_snapshot.py OUT_DIR      # write the snapshot of this checkout
    diff -r BEFORE_DIR AFTER_DIR                   # the check: no output

Cases: every text of the shared and own corpora (OOM messages, launcher logs, multi-host and
Slurm outputs, captured Lightning logs), the phase records, tests/data/logs; the kernel-log,
nvidia-smi -q and compute-apps records beside a fixed OOM message; the shared OOM messages again
with --micro-batch 8 --grad-accum 2 (the fit). In-process (click's runner): ~2 s for ~680 cases.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from click.testing import CliRunner  # noqa: E402

from runbook.cli import cli  # noqa: E402

SHARED = Path(os.environ.get("RUNBOOK_CORPUS", REPO.parent / "shared" / "corpus"))
OWN = REPO / "tests" / "data" / "corpus"


def _records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def cases() -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    logs = ["oom_messages.jsonl", "captured_lightning.jsonl", "ops/launcher_logs.jsonl"]
    logs += ["ops/multihost.jsonl", "ops/slurm_outputs.jsonl"]
    for base, tag in ((SHARED, "shared"), (OWN, "own")):
        for name in logs:
            for r in _records(base / name):
                out.append((f"{tag}-{Path(name).stem}-{r['id']}", [("--log", r["text"])]))
    spec = importlib.util.spec_from_file_location("records", REPO / "tests/data/phase/records.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out += [(f"phase-{r['id']}", [("--log", r["text"])]) for r in mod.RECORDS]
    for f in sorted((REPO / "tests/data/logs").glob("*.out")):
        out.append((f"log-{f.name}", [("--log", f.read_text())]))
    oom = _records(SHARED / "oom_messages.jsonl")[0]["text"]
    beside = [
        ("ops/xid_dmesg.jsonl", "--dmesg"),
        ("ops/nvidia_smi_remap_ecc.jsonl", "--gpu-health"),
        ("ops/nvidia_smi_apps.jsonl", "--compute-apps"),
    ]
    for base, tag in ((SHARED, "shared"), (OWN, "own")):
        for name, opt in beside:
            for r in _records(base / name):
                out.append(
                    (f"{tag}-{Path(name).stem}-{r['id']}", [("--log", oom), (opt, r["text"])])
                )
    for f in sorted((REPO / "tests/data/nvidia-smi").glob("*.txt")):
        opt = "--gpu-health" if ".q." in f.name else "--compute-apps"
        out.append((f"nvsmi-{f.name}", [("--log", oom), (opt, f.read_text())]))
    for r in _records(SHARED / "oom_messages.jsonl"):
        out.append(
            (
                f"fit-{r['id']}",
                [("--log", r["text"]), ("--micro-batch", "8"), ("--grad-accum", "2")],
            )
        )
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = cases()
        for name, opts in all_cases:
            args = ["diagnose", "--json"]
            for i, (opt, value) in enumerate(opts):
                if opt in ("--micro-batch", "--grad-accum"):
                    args += [opt, value]
                    continue
                f = Path(tmp) / f"{name}.{i}.txt".replace("/", "_")
                f.write_text(value)
                args += [opt, str(f)]
            res = runner.invoke(cli, args, catch_exceptions=True)
            out = res.output.replace(tmp, "<tmp>")
            (dest / f"{name}.json".replace("/", "_")).write_text(
                f"exit {res.exit_code}\n{out}\n{res.exception!r}\n"
            )
    print(f"{len(all_cases)} cases written to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
