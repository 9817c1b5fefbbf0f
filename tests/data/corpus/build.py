"""Write runbook's own corpus records (tests/data/corpus/*.jsonl) from the hand-made answer keys in
records_*.py: the printed sizes are converted to MiB here, by a converter of its own (not the
parser under test), so the answer key never comes from the code it checks.

    python3 tests/data/corpus/build.py      # rewrites the .jsonl files beside it

Each record's text is copied verbatim from its source_url; `split` ("tune" or "measure") is fixed
by a hash of the id, so a record never moves between the half the code was tuned on and the half
it is measured on.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
UNITS = {
    "bytes": 2**-20,
    "b": 2**-20,
    "kib": 2**-10,
    "kb": 2**-10,
    "mib": 1.0,
    "mb": 1.0,
    "gib": 1024.0,
    "gb": 1024.0,
    "tib": 2.0**20,
    "tb": 2.0**20,
}


def mib(printed: str | None) -> float | None:
    if printed is None:
        return None
    m = re.fullmatch(r"\s*([\d.]+)\s*([A-Za-z]*)\s*", printed)
    if not m:
        raise ValueError(f"not a size: {printed!r}")
    # A bare whole number is a byte count, as c10's warnings print them ("free: 15663104").
    unit = m.group(2).lower() or ("bytes" if m.group(1).isdigit() else "")
    if unit not in UNITS:
        raise ValueError(f"not a size: {printed!r}")
    return round(float(m.group(1)) * UNITS[unit], 6)


def split_of(rid: str) -> str:
    return "tune" if hashlib.sha256(rid.encode()).digest()[0] % 2 == 0 else "measure"


RAW_TO_FIELD = {
    "tried": "tried_mib",
    "total": "total_mib",
    "free": "free_mib",
    "allocated": "allocated_by_pytorch_mib",
    "reserved_total": "reserved_total_mib",
    "unallocated": "reserved_unallocated_mib",
    "cached": "reserved_unallocated_mib",
    "this_process": "this_process_mib",
    "private_pools": "private_pools_mib",
    "allowed": "limit_mib",
    "mps_other": "mps_other_allocations_mib",
}


def oom_record(r: dict) -> dict:
    raw = r["raw"]
    fields = {f: None for f in RAW_TO_FIELD.values()}
    fields.update(
        other_process_pids=None,
        other_process_mib=None,
        mps_other_allocations_mib=None,
        inactive_mib=None,
        gpu=raw.get("gpu"),
        rank=raw.get("rank"),
    )
    for k, f in RAW_TO_FIELD.items():
        if k in raw:
            fields[f] = mib(raw[k])
    if raw.get("processes"):
        fields["other_process_pids"] = [p for p, _ in raw["processes"]]
        fields["other_process_mib"] = [mib(s) for _, s in raw["processes"]]
    return {
        "id": r["id"],
        "text": r["text"],
        "source_url": r["url"],
        "format": r["format"],
        "fields": fields,
        "fields_raw": {k: v for k, v in raw.items() if k not in ("gpu", "rank")},
        "resolution": r.get("resolution", "not reported"),
        "resolution_confirmed": r.get("confirmed", False),
        "label": r.get("label", "unknown"),
        "notes": r.get("notes"),
        "split": split_of(r["id"]),
    }


def write(name: str, records: list[dict]) -> None:
    ids = [r["id"] for r in records]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SystemExit(f"duplicate ids in {name}: {sorted(dup)}")
    path = HERE / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{path.relative_to(HERE)}: {len(records)} records")


def main() -> None:
    import sys

    sys.path.insert(0, str(HERE))
    from records_oom import OOM
    from records_ops import APPS, LAUNCH, SLURM, XID

    write("oom_messages.jsonl", [oom_record(r) for r in OOM])
    # Lightning launcher logs captured here (tests/captures/lightning_launcher.py), split fixed.
    captured = HERE / "captured_lightning.jsonl"
    lightning = [json.loads(ln) for ln in captured.read_text(encoding="utf-8").splitlines() if ln]
    for name, recs in (
        ("ops/launcher_logs.jsonl", LAUNCH + lightning),
        ("ops/xid_dmesg.jsonl", XID),
        ("ops/slurm_outputs.jsonl", SLURM),
        ("ops/nvidia_smi_apps.jsonl", APPS),
    ):
        write(name, [{**r, "split": r.get("split") or split_of(r["id"])} for r in recs])


if __name__ == "__main__":
    main()
