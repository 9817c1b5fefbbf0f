"""What a correct parser must extract from each corpus record, as functions: record in, list of
mismatches out (empty: the record passes). The corpus tests assert on them, and
bench/corpus_score.py scores whole corpora with the same checks, so a score and a test never
disagree about what "right" means.

Corpora: ../shared/corpus (shared) and tests/data/corpus (runbook's own, with a tune/measure
split per record); both follow the schema in ../shared/corpus/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from runbook.errors import InputError

OWN = Path(__file__).resolve().parent / "data" / "corpus"
NUMERIC = [
    "tried_mib",
    "total_mib",
    "free_mib",
    "allocated_by_pytorch_mib",
    "reserved_total_mib",
    "reserved_unallocated_mib",
    "this_process_mib",
    "private_pools_mib",
    "limit_mib",
    "mps_other_allocations_mib",
    "inactive_mib",
]
VERDICTS = ("true_oom", "fragmentation", "co_tenant", "gpu_fault", "host_oom")
KIND = {"nccl_watchdog_timeout": "nccl_timeout", "nccl_watchdog_abort": "signal"}
# Corpus file -> check name.
FILES = {
    "oom_messages.jsonl": "oom",
    "ops/launcher_logs.jsonl": "launcher",
    "ops/xid_dmesg.jsonl": "xid",
    "ops/nvidia_smi_remap_ecc.jsonl": "remap",
    "ops/nvidia_smi_apps.jsonl": "apps",
    "ops/slurm_outputs.jsonl": "slurm",
    "hostlist.jsonl": "hostlist",
    "ops/multihost.jsonl": "multihost",
}


def read(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def close(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return abs(got - want) <= max(0.005 * abs(want), 0.01)  # MiB within 0.5 %


def _as_list(v):
    return [] if v is None else ([v] if not isinstance(v, list) else v)


def _diff(out: list[str], what: str, got, want) -> None:
    if got != want:
        out.append(f"{what}: got {got!r}, want {want!r}")


def oom(rec: dict) -> list[str]:
    from runbook.evidence.oom_message import parse_all

    msgs = parse_all(rec["text"])
    if len(msgs) != 1:
        return [f"expected one message, found {[m.family for m in msgs]}"]
    m, want, out = msgs[0], rec["fields"], []
    _diff(out, "format", m.format, rec["format"])
    for k in NUMERIC:
        if not close(getattr(m, k), want.get(k)):
            out.append(f"{k}: got {getattr(m, k)!r}, want {want.get(k)!r}")
    _diff(out, "gpu", m.gpu, want.get("gpu"))
    _diff(out, "rank", m.rank, want.get("rank"))
    _diff(out, "other_process_pids", m.other_process_pids, want.get("other_process_pids") or [])
    mibs = want.get("other_process_mib") or []
    if len(m.other_process_mib) != len(mibs) or not all(
        close(a, b) for a, b in zip(m.other_process_mib, mibs, strict=False)
    ):
        out.append(f"other_process_mib: got {m.other_process_mib}, want {mibs}")
    if m.text.splitlines()[0] not in rec["text"]:
        out.append("the message's first line is not in the original text")
    return out


def launcher(rec: dict) -> list[str]:
    from runbook.evidence.launcher_log import scan

    a, out = rec["answer"], []
    rep = scan(rec["text"])
    ff = rep.first_failure
    _diff(out, "failing_ranks", sorted(rep.failing_ranks), sorted(a.get("failing_ranks") or []))
    _diff(out, "host", ff.node if ff else None, a.get("host"))
    _diff(out, "first_failure_time", ff.time if ff else None, a.get("first_failure_time"))
    if a.get("kind"):
        _diff(out, "kind", ff.kind if ff else None, KIND.get(a["kind"], a["kind"]))
    if "timed_out_ranks" in a:
        _diff(out, "timed_out_ranks", rep.timed_out_ranks, a["timed_out_ranks"] or [])
    if a.get("suspect_ranks"):
        _diff(out, "suspect_ranks", rep.suspect_ranks, a["suspect_ranks"])
        _diff(out, "first failure's ranks", ff.ranks if ff else None, a["suspect_ranks"])
    if a.get("first_failing_rank") is not None:
        _diff(out, "first failing rank", ff.ranks if ff else None, [a["first_failing_rank"]])
    if isinstance(a.get("is_oom"), bool):
        _diff(out, "is_oom", bool(rep.ooms), a["is_oom"])
    elif isinstance(a.get("is_oom"), str) and a["is_oom"].startswith("host-memory"):
        _diff(out, "kind", ff.kind if ff else None, "host_oom")
    return out


def xid(rec: dict) -> list[str]:
    from runbook.evidence import xid as x

    a, out = rec["answer"], []
    log = x.parse(rec["text"])
    _diff(out, "xids", log.xids, a["xids"])
    _diff(
        out, "pci", list(dict.fromkeys(e.pci for e in log.events if e.pci)), _as_list(a.get("pci"))
    )
    _diff(
        out,
        "pid",
        list(dict.fromkeys(e.pid for e in log.events if e.pid is not None)),
        _as_list(a.get("pid")),
    )
    _diff(out, "category", log.category(), a["category"])
    if "sxids" in a:
        _diff(out, "sxids", log.sxids, a["sxids"])
    for ev, want in zip(log.events, a.get("events") or [], strict=False):
        _diff(out, "event", (ev.xid, ev.category), (want["xid"], want["category"]))
        for key in ("recovery_action", "nvlink_link", "process_name"):
            if key in want:
                _diff(out, key, getattr(ev, key), want[key])
    if "caused_by_xids" in a:
        _diff(
            out,
            "caused_by",
            sorted({e.caused_by_xid for e in log.events}),
            sorted(a["caused_by_xids"]),
        )
    if "mig_gpu_instance" in a:
        got = log.events[0].mig_gpu_instance if log.events else None
        _diff(out, "mig_gpu_instance", got, a["mig_gpu_instance"])
    if "gpu_uuid" in a and a["gpu_uuid"] not in log.gpu_uuids.values():
        out.append(f"gpu_uuid {a['gpu_uuid']} not found")
    for pci, uuid in (a.get("gpu_uuids") or {}).items():
        _diff(out, f"uuid of {pci}", log.gpu_uuids.get(pci), uuid)
    if "driver" in a:
        _diff(out, "driver", log.driver, a["driver"])
    if a.get("equivalent_xid"):
        _diff(out, "events", [e.xid for e in log.events], [a["equivalent_xid"]])
    return out


def remap(rec: dict) -> list[str]:
    from runbook.evidence import nvsmi

    summary = nvsmi.parse_memory_health(rec["text"]).summary()
    return [
        f"{k}: got {summary.get(k)!r}, want {v!r}"
        for k, v in rec["answer"]["summary"].items()
        if summary.get(k) != v
    ]


def apps(rec: dict) -> list[str]:
    from runbook.evidence import nvsmi

    a, out = rec["answer"], []
    got = nvsmi.parse_compute_apps(rec["text"])
    pairs = [[p.pid, p.used_mib] for p in got if p.pid is not None and p.used_mib is not None]
    _diff(out, "pid_used_mib", pairs, a["pid_used_mib"])
    for app, want in zip(got, a.get("processes") or [], strict=False):
        _diff(out, "gpu", app.gpu, str(want["gpu"]))
    if "per_gpu_count" in a:
        counts: dict = {}
        for p in got:
            counts[p.gpu] = counts.get(p.gpu, 0) + 1
        _diff(out, "per_gpu_count", counts, a["per_gpu_count"])
    return out


def multihost(rec: dict) -> list[str]:
    """Output of several nodes (pdsh, dshbak, clush): each node's processes or Xids, and only
    those, are that node's (a folded `gpu-[01,03]` header names both)."""
    from runbook.evidence import nvsmi
    from runbook.evidence import xid as xid_parser
    from runbook.evidence.framing import plain
    from runbook.evidence.gpu_health import NodeHealth
    from runbook.evidence.multihost import split, tool_messages

    a, out = rec["answer"], []
    for node, want in a["per_host"].items():
        if a["kind"] == "apps":
            h = NodeHealth(node=node, apps=nvsmi.parse_compute_apps(rec["text"]))
            got = [[p.pid, p.used_mib] for p in h.apps or [] if h._on_this_node(p)]
        else:
            h = NodeHealth(node=node, kernel=xid_parser.parse(rec["text"]))
            events = h._events(h.kernel.events) if h.kernel else []
            got = [e.xid for e in events if e.source in ("xid", "gsp")]
        _diff(out, node, got, want)
    # A node the shell could not reach is health unknown, never healthy.
    framing = ([h for h, _ in split(plain(rec["text"])) if h], tool_messages(plain(rec["text"])))
    part = "apps" if a["kind"] == "apps" else "kernel_log"
    for node in a.get("unreachable", []):
        h = NodeHealth(node=node, framing={part: framing})
        if not h.unknowns():
            out.append(f"{node}: unreachable, but its health was not called unknown")
    for node in a["per_host"]:
        if NodeHealth(node=node, framing={part: framing}).unknowns():
            out.append(f"{node}: its output is there, but its health was called unknown")
    return out


def slurm(rec: dict) -> list[str]:
    from runbook.slurm import text as slurm_text

    a, out = rec["answer"], []
    try:
        got = slurm_text.parse(rec["text"])
    except InputError as e:
        return [f"refused: {e}"]
    _diff(out, "state", got.state, a.get("state"))
    _diff(out, "exit_code", got.exit_code, a.get("exit_code"))
    _diff(out, "nodes", got.nodes, a.get("nodes"))
    want_id = a.get("job_id")
    if want_id and want_id.split(" ")[0] in rec["text"]:  # some ids live only in the command
        _diff(out, "job_id", got.job_id, want_id.split(" ")[0])
    if "jobs" in a:
        _diff(
            out,
            "jobs",
            [(j["jobid"], j["state"]) for j in got.jobs],
            [(j["job_id"], j["state"]) for j in a["jobs"]],
        )
    if "rows" in a and isinstance(a["rows"][0], dict):
        _diff(
            out,
            "rows",
            [(r["jobid"], r["state"], r["exit_code"]) for r in got.rows],
            [(r["jobid"], r["state"], r["exit_code"]) for r in a["rows"]],
        )
    return out


# Where the corpus records another dialect's answer, Slurm's behaviour is the expectation
# (corpus README: "Follow Slurm's behaviour where dialects disagree").
SLURM_SAYS = {
    "hl-008": (
        "error",
        "':' is not a Slurm range separator; libslurm returns an empty list, we refuse it",
    ),
    "hl-032": ("error", "step syntax '/2' is ClusterShell's, not Slurm's"),
    "hl-034": (
        ["nova156", "nova256", "nova356", "nova456"],
        "Slurm concatenates the suffix; ClusterShell folds it into the number",
    ),
    "hl-052": (
        ["nova3", "nova4", "5", "nova6"],
        "Slurm takes a bare number as a host name; ClusterShell rejects it",
    ),
    "hl-058": (
        [f"n{a}0{b}" for a in range(1, 5) for b in (3, 4)],
        "Slurm expands every bracket of a name (cross product); ClusterShell rejects it",
    ),
}


def hostlist_want(rec: dict):
    default = rec.get("expanded") if rec.get("expanded") is not None else "error"
    return SLURM_SAYS.get(rec["id"], (default, ""))[0]


def hostlist(rec: dict) -> list[str]:
    from runbook.slurm.hostlist import expand

    want = hostlist_want(rec)
    try:
        got = expand(rec["expression"])
    except InputError as e:
        if want == "error" and "invalid Slurm hostlist" in str(e):
            return []
        return [f"refused: {e}"]
    return [] if got == want else [f"got {got!r}, want {want!r}"]


def verdict(rec: dict) -> list[str]:
    """For a labelled OOM record: the verdict runbook reaches from the message alone."""
    from runbook.diagnosis import Evidence, classify
    from runbook.evidence.launcher_log import scan
    from runbook.playbook import load

    d = classify(Evidence(launch=scan(rec["text"])), load().thresholds)
    return [] if d.verdict == rec["label"] else [f"verdict {d.verdict}, label {rec['label']}"]


CHECKS = {
    "oom": oom,
    "launcher": launcher,
    "xid": xid,
    "remap": remap,
    "apps": apps,
    "slurm": slurm,
    "hostlist": hostlist,
    "multihost": multihost,
}


def labelled(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("label") in VERDICTS]
