"""Classify an incident from its evidence: a pure function of parsed evidence and thresholds.

Verdicts (docs/design.md §3): true_oom, fragmentation, co_tenant, gpu_fault, host_oom, not_oom, unknown.
Every reason is a sentence with the numbers it used and the threshold it compared them with, so a
person can check the call without re-reading the log.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import TYPE_CHECKING, Any

from runbook import words
from runbook.cause import Facts, cause_of, map_location_load
from runbook.evidence.gather import Evidence
from runbook.evidence.launcher_log import HOST_OOM
from runbook.evidence.oom_message import OomMessage
from runbook.evidence.phase import with_steps_from_program
from runbook.evidence.trend import at_oom
from runbook.evidence.units import human_mib, points
from runbook.jobfiles.program_order import steps_before
from runbook.playbook import Thresholds
from runbook.record import record
from runbook.words import verdict_words

if TYPE_CHECKING:  # node health (Xid, nvidia-smi parsers) loads only where a probe or file is read
    from runbook.evidence.gpu_health import NodeHealth

VERDICTS = ("true_oom", "fragmentation", "co_tenant", "gpu_fault", "host_oom", "not_oom", "unknown")
_NO_NUMBERS = {"cuda_error", "thc", "cublas"}


@record
class Diagnosis:
    """The verdict with its reasons, the numbers it rests on and the first rung to apply."""

    verdict: str
    reasons: list[str] = field(default_factory=list)
    oom: OomMessage | None = None
    evidence: Evidence = field(default_factory=Evidence)
    # Other verdicts whose fix would also cover the shortfall, in docs/design.md §3 order, and how sure
    # the call is (high: one cause covers it; medium: several could; low: none clearly does).
    alternatives: list[str] = field(default_factory=list)
    confidence: str = "high"
    # A thin unallocated pool: the first true-OOM rung also sets the allocator (docs/design.md §3).
    with_allocator: bool = False
    # Hardware-error text (Xid, ECC) seen in the launcher log itself.
    log_hardware: list[str] = field(default_factory=list)
    # The first rung of the verdict's ladder, with the exact setting (runbook.rungs).
    next_step: dict | None = None
    # The micro-batch solved from the failure's numbers (planning.fit.Fit), when the micro-batch
    # the run used is known (docs/design.md §3.2).
    fit: Any = None
    # When and where it ran out, the memory trend before it, and why (docs/design.md §3.1).
    phase: Any = None
    trend: Any = None
    cause: Any = None
    # The co_tenant verdict rests on the node's process list (not the message's own lines).
    tenant_from_node: bool = False

    def _source_findings(self) -> list[dict] | None:
        """The source check's findings, each marked whether the failing traceback ran through
        its function (the code that failed, not a sibling that did not run)."""
        source = self.evidence.source
        if source is None:
            return None
        frames = self.phase.frames if self.phase is not None else []
        ran = {f.func.split(".")[-1] for f in frames}
        return [{**f.contract(), "in_traceback": f.function in ran} for f in source.findings]

    @property
    def evidence_incomplete(self) -> bool:
        launch = self.evidence.launch if self.evidence else None
        return self.verdict == "unknown" and bool(launch and launch.incomplete)

    def contract(self) -> dict:
        """`runbook diagnose --json` (docs/design.md §4.1), key for key."""
        launch = self.evidence.launch
        ff = launch.first_failure if launch else None
        health = self.evidence.node_health
        return {
            "verdict": self.verdict,
            "reasons": self.reasons,
            "oom": self.oom.contract() if self.oom else None,
            "first_failure": ff.contract() if ff else None,
            "ranks": [e.contract() for e in launch.terminal_events()] if launch else [],
            "gpu_health": health.contract() if health else None,
            "compute_apps": [a.contract() for a in health.apps]
            if health and health.apps is not None
            else None,
            "slurm": self.evidence.slurm.contract() if self.evidence.slurm else None,
            "alternatives": self.alternatives,
            "confidence": self.confidence,
            "with_allocator": self.with_allocator,
            "log_hardware": self.log_hardware,
            "next_step": self.next_step,
            "fit": self.fit.contract() if self.fit is not None else None,
            "phase": self.phase.contract() if self.phase is not None else None,
            "trend": self.trend.contract() if self.trend is not None else None,
            "cause": self.cause.name if self.cause is not None else "unknown",
            "source_findings": self._source_findings(),
        }


def classify(ev: Evidence, t: Thresholds) -> Diagnosis:
    """The verdict, with what the log scan set aside said last (a reader must see what was not
    used, and why)."""
    d = _classify(ev, t)
    if d.verdict == "not_oom" and ev.launch is not None and ev.launch.incomplete:
        # Missing evidence is never a verdict: only logs read completely may say not_oom.
        d = Diagnosis(
            "unknown",
            [
                *d.reasons,
                "Evidence incomplete: " + "; ".join(ev.launch.incomplete) + "; an OOM could be in "
                "what was not read, so this is not called not_oom.",
            ],
            d.oom,
            ev,
        )
    health = ev.node_health
    if health is not None:
        d.reasons.extend(f"{n}." for n in health.fabric_notes())
        if others := health.other_hosts():
            d.reasons.append(
                f"Set aside: the node outputs also hold {', '.join(others)}; only "
                f"{health.node}'s processes and kernel events count."
                if health.node
                else f"Set aside: the node outputs are of several nodes ({', '.join(others)}) "
                "and the failing node is not known: none of their processes or kernel events "
                "count."
            )
    if health is not None and d.verdict not in ("gpu_fault", "co_tenant"):
        unknown = health.unknowns()
        if unknown:
            where = f" of {health.node}" if health.node else ""
            d.reasons.append(
                f"Node health{where} is unknown ({'; '.join(unknown)}): a GPU fault "
                "and another process on the GPU cannot be ruled out."
            )
    if ev.launch is not None and ev.launch.hardware_lines:
        d.log_hardware = list(ev.launch.hardware_lines)
        shown = "; ".join(f"`{h[:120]}`" for h in d.log_hardware[:3])
        d.reasons.append(
            f"The job's own log reports GPU hardware errors ({shown}"
            + (f" and {len(d.log_hardware) - 3} more" if len(d.log_hardware) > 3 else "")
            + "): a job's output is not proof, so check the node (`nvidia-smi -q -d "
            "ROW_REMAPPER,ECC`, the kernel log's Xid lines; `runbook oom` probes them)."
        )
    if ev.launch is not None:
        d.reasons.extend(f"Set aside: {note}." for note in ev.launch.notes)
    if d.verdict == "unknown":
        d.confidence = "low"
    _when_and_where(d, ev)
    return d


def _when_and_where(d: Diagnosis, ev: Evidence) -> None:
    """The phase, trend and cause (docs/design.md §3.1), with a reason for each that says something."""
    launch = ev.launch
    if launch is None:
        return
    # The dump may have replaced d.oom by a copy with exact numbers: its phase is the message's.
    d.phase = launch.phase_of(launch.first_oom)
    # A log silent before its OOM: the job's own program may say a step ran before the failing
    # line (its order, read from the files the source check read).
    if (
        d.phase is not None
        and d.phase.when == "unknown"
        and ev.source is not None
        and (said := steps_before(ev.source.programs, d.phase.frames))
    ):
        d.phase = with_steps_from_program(d.phase, said)
    rank = d.oom.rank if d.oom is not None else None
    d.trend = launch.trend_for(rank)
    if (d.trend is None or d.trend.kind == "unknown") and ev.series is not None:
        d.trend = ev.series
    if d.oom is not None and d.oom.allocated_by_pytorch_mib is not None and d.oom.tried_mib:
        d.trend = at_oom(d.trend, d.oom.allocated_by_pytorch_mib + d.oom.tried_mib)
    d.cause = cause_of(
        Facts(
            verdict=d.verdict,
            phase=d.phase if d.oom is not None else None,
            trend=d.trend,
            source=ev.source,
            tried=tuple(ev.tried),
            parent_failed_step=ev.parent_failed_step,
            co_tenant_from_message=d.verdict == "co_tenant" and not d.tenant_from_node,
        )
    )
    # When and where it ran out is its own fact (diagnose's line, the report's section), not
    # said again among the reasons.
    if d.trend is not None and d.trend.kind != "unknown":
        d.reasons.append(
            f"Memory trend ({d.trend.series}, {points(d.trend.points)}): "
            f"{d.trend.kind}: {d.trend.why}."
        )
    if d.cause.name not in ("unknown", d.verdict):
        d.reasons.append(f"Cause {d.cause.name}: " + "; ".join(d.cause.reasons) + ".")


def _classify(ev: Evidence, t: Thresholds) -> Diagnosis:
    """docs/design.md §3's order: the node's hardware, then host RAM, then a failure without an OOM
    message, then the OOM's own numbers."""
    launch = ev.launch
    oom = launch.first_oom if launch else None
    ff = launch.first_failure if launch else None
    for rule in (_gpu_fault, _host_oom, _without_oom):
        if (d := rule(ev, oom, ff, t)) is not None:
            return d
    assert oom is not None  # _without_oom answers for a log without one
    return _from_numbers(ev, oom, ff, t)


def _gpu_fault(ev: Evidence, oom: OomMessage | None, ff, t: Thresholds) -> Diagnosis | None:
    """docs/design.md §3: a hardware fault coincides with an OOM more often than it causes one; drain and
    exclude the node whatever the numbers say, and still say what the numbers alone say."""
    health = ev.node_health
    faults = health.gpu_fault_reasons() if health else []
    if health is None or not faults:
        return None
    node = f" on {health.node}" if health.node else ""
    reasons = [f"GPU fault{node}: " + "; ".join(faults) + "."]
    if oom is not None:
        alone = _classify_numbers(oom, t)
        reasons.append(
            f"The OOM numbers alone would say {verdict_words(alone.verdict)}: {alone.why}"
        )
    elif ff is not None:
        reasons.append(f"The job's first failure was {ff.kind}.")
    return Diagnosis("gpu_fault", reasons, oom, ev)


def _host_oom(ev: Evidence, oom: OomMessage | None, ff, t: Thresholds) -> Diagnosis | None:
    """Host RAM ran out first (the cgroup's OOM killer, c10's CPU allocator, Ray's monitor), or
    Slurm says OUT_OF_MEMORY and no GPU message contradicts it."""
    state = ev.slurm.state if ev.slurm else None
    host_why = ff.why if ff is not None and ff.kind == HOST_OOM else None
    if not (host_why or (state == "OUT_OF_MEMORY" and oom is None)):
        return None
    why = (
        "Slurm recorded the job as OUT_OF_MEMORY: its cgroup ran out of host RAM"
        if state == "OUT_OF_MEMORY"
        else f"the first failure is host RAM running out: {host_why}"
    )
    reasons = [f"{why}; this is host memory (RAM), not GPU memory."]
    if oom is not None:
        reasons.append("A GPU OOM message is in the log too, but it came later.")
    return Diagnosis("host_oom", reasons, oom, ev)


def _from_numbers(ev: Evidence, oom: OomMessage, ff, t: Thresholds) -> Diagnosis:
    """The OOM message's numbers (the dump's exact counters where there is one), after the
    node's own process list: a co-tenant it names, or the job's own PIDs set aside."""
    reasons: list[str] = []
    launch, health = ev.launch, ev.node_health
    oom, exact = _with_dump(oom, ev.dump)
    if exact:
        reasons.append(exact)
    if health and (tenant := _co_tenant_from_apps(oom, health, ev.job_id, t)):
        where = _where(oom, ff)
        reasons.append(f"{where}: {tenant}" if where else tenant)
        return Diagnosis("co_tenant", reasons, oom, ev, tenant_from_node=True)
    if health and health.job_pids and set(oom.other_process_pids) & health.job_pids:
        oom = _without_own_pids(oom, health.job_pids, "the node's job PID list", reasons)
    elif (
        oom.other_process_pids
        and (unknown := _owners_unknown(oom, health))
        and _restoring_onto_saved_device(ev)
    ):
        oom = _without_own_pids(
            oom,
            set(oom.other_process_pids),
            f"{unknown}, and the traceback shows a checkpoint restored onto the GPU it was "
            "saved from, where every rank of a load without map_location lands",
            reasons,
        )
    c = _classify_numbers(oom, t)
    where = _where(oom, ff)
    reasons.append(f"{where}: {c.why}" if where else c.why)
    if c.alternatives:
        reasons.append(
            f"Also possible: {', '.join(map(verdict_words, c.alternatives))} (its fix would "
            "cover this shortfall too)."
        )
    if launch and launch.timed_out_ranks:
        reasons.append(
            f"Ranks {_ranks(launch.timed_out_ranks)} then timed out in NCCL: a consequence of the "
            f"OOM, not a cause."
        )
    return Diagnosis(c.verdict, reasons, oom, ev, c.alternatives, c.confidence, c.with_allocator)


def _owners_unknown(oom: OomMessage, health) -> str | None:
    """Why the owners of the message's other processes are not known, or None when the node
    says. A job PID list is read at one moment: ranks of a job that is ending may have exited
    before it (seen on the test cluster under load: the list held the wedged ranks, not the one
    that had loaded onto GPU 0), so PIDs that are neither in it nor alive when the node was
    probed are of no known owner, never proof of a co-tenant."""
    if health is None or health.job_pids is None:
        return "the job's PIDs on the node are not known"
    named = set(oom.other_process_pids)
    alive = {a.pid for a in health.apps or [] if a.pid is not None} | set(health.owners)
    if named & (health.job_pids | alive):
        return None
    return (
        f"processes {', '.join(map(str, sorted(named)))} are not in the job's PID list and had "
        "exited before the node was probed"
    )


def _restoring_onto_saved_device(ev: Evidence) -> bool:
    """The failing rank ran out inside a resume's torch.load with no map_location: the other
    processes on its GPU are then the job's own ranks restoring onto it (the cause rule's
    reading, so the verdict and the cause say the same)."""
    launch = ev.launch
    if launch is None or launch.first_oom is None:
        return False
    facts = Facts(verdict="unknown", phase=launch.phase_of(launch.first_oom), source=ev.source)
    return map_location_load(facts)


def _without_own_pids(oom: OomMessage, job_pids, known_by: str, reasons: list[str]) -> OomMessage:
    """The job's own ranks (a torch.load onto one GPU, several ranks on one card) are listed as
    "Process N has X in use" like any other: they are never co-tenants."""
    own = [p for p in oom.other_process_pids if p in job_pids]
    oom = dataclasses.replace(oom)
    pairs = [
        (p, m)
        for p, m in zip(oom.other_process_pids, oom.other_process_mib, strict=False)
        if p not in job_pids
    ]
    oom.other_process_pids = [p for p, _ in pairs]
    oom.other_process_mib = [m for _, m in pairs]
    reasons.append(
        f"Processes {', '.join(map(str, own))} in the message are the job's own ({known_by}): "
        "not co-tenants."
    )
    return oom


def _ranks(ranks: list[int]) -> str:
    shown = ", ".join(str(r) for r in ranks[:12])
    return shown + (f" and {len(ranks) - 12} more" if len(ranks) > 12 else "")


def _where(oom: OomMessage, ff) -> str:
    bits = []
    if oom.rank is not None:
        bits.append(f"rank {oom.rank}")
    node = ff.node if ff and oom.rank is not None and oom.rank in ff.ranks else None
    if node:
        bits.append(f"on {node}")
    if oom.gpu is not None:
        bits.append(f"GPU {oom.gpu}")
    return " ".join(bits)


def _without_oom(ev: Evidence, oom: OomMessage | None, ff, t: Thresholds) -> Diagnosis | None:
    """No OOM message: a SIGKILL without a traceback is the kernel's OOM killer; any other first
    failure, or Slurm's state, is not an OOM; nothing at all is unknown."""
    if oom is not None:
        return None
    slurm, reasons = ev.slurm, []
    code = slurm.exit_code if slurm else None
    if ff is not None and ff.kind == "signal" and ff.signal == "SIGKILL":
        who = words.ranks(ff.ranks) + (f" on {ff.node}" if ff.node else "")
        reasons.append(
            f"No OOM message: {who} died of SIGKILL without a traceback, the signature of the "
            f"kernel's OOM killer (host RAM); the other ranks failed after it. Check `sacct -o "
            f"MaxRSS` and the node's dmesg to confirm."
        )
        return Diagnosis("host_oom", reasons, None, ev)
    if code in {"137:0", "0:9"} and (ff is None or ff.kind == "signal"):
        reasons.append(
            f"No OOM message, and Slurm's exit code {code} means SIGKILL with no traceback: "
            f"most likely the kernel's OOM killer (host RAM). Check `sacct -o MaxRSS` and dmesg."
        )
        return Diagnosis("host_oom", reasons, None, ev)
    if ff is not None:
        who = f" on {words.ranks(ff.ranks)}" if ff.ranks else ""
        node = f" ({ff.node})" if ff.node else ""
        when = f" at {ff.time}" if ff.time else ""
        reasons.append(
            f"No out-of-memory message in the log. The first failure is {ff.kind}{who}{node}"
            f"{when}: {ff.why}."
        )
        return Diagnosis("not_oom", reasons, None, ev)
    if slurm and slurm.state and (step := slurm.step_said()):
        reasons.append(
            f"No out-of-memory message in the input. Slurm records the allocation {slurm.state}"
            + (f" ({slurm.exit_code})" if slurm.exit_code else "")
            + f", but its {step}: the step is the failure."
        )
        return Diagnosis("not_oom", reasons, None, ev)
    if slurm and slurm.state:
        reasons.append(
            f"No out-of-memory message in the input, and Slurm records {slurm.state}"
            + (f" with exit code {slurm.exit_code}" if slurm.exit_code else "")
            + "."
        )
        return Diagnosis("not_oom", reasons, None, ev)
    said = ev.node_health.read_sentences() if ev.node_health is not None else []
    if said and ev.launch is None:
        # Node health given alone: a result, said as read (never denied), but no job failure.
        reasons.extend(f"{x}." for x in said)
        reasons.append("No job log or Slurm record was given: there is no job failure to classify.")
        return Diagnosis("unknown", reasons, None, ev)
    reasons.append("Nothing in the input names an OOM or any other failure.")
    return Diagnosis("unknown", reasons, None, ev)


def _with_dump(oom: OomMessage, dump: dict | None) -> tuple[OomMessage, str | None]:
    """The message's numbers, replaced by the exact device counters of runbook.instrument's dump
    for the same rank where it has them (a real GPU; on CPU they are null)."""
    if not dump or dump.get("memory_allocated") is None or dump.get("memory_reserved") is None:
        return oom, None
    m = dataclasses.replace(oom)
    m.allocated_by_pytorch_mib = dump["memory_allocated"] / 2**20
    m.reserved_total_mib = dump["memory_reserved"] / 2**20
    m.reserved_unallocated_mib = m.reserved_total_mib - m.allocated_by_pytorch_mib
    if dump.get("mem_get_info"):
        free, total = dump["mem_get_info"]
        m.free_mib, m.total_mib = free / 2**20, total / 2**20
    return m, (
        f"Numbers from runbook.instrument's dump of rank {dump.get('rank')} (exact device "
        f"counters), not from the message text."
    )


def _co_tenant_from_apps(oom: OomMessage, health: NodeHealth, job_id, t: Thresholds) -> str | None:
    """Processes on the OOM node's GPUs that are not the job's, holding enough to explain the
    shortfall (the node's compute-apps list; never killed, only reported)."""
    foreign = [a for a in health.foreign_apps(job_id) if a.used_mib]
    if not foreign:
        return None
    held = sum(a.used_mib or 0.0 for a in foreign)
    tried, free, total = oom.tried_mib, oom.free_mib, oom.total_mib
    shortfall = max((tried or 0.0) - (free or 0.0), 0.0)
    # Without the card's size, "more than one CUDA context's worth" is the floor.
    floor = t.co_tenant_min_fraction_of_total * total if total else t.cuda_context_allowance_mib
    if held < max(shortfall, floor):
        return None
    who = ", ".join(
        f"PID {a.pid}"
        + (
            f" ({health.owners[a.pid].user})"
            if a.pid in health.owners and health.owners[a.pid].user
            else ""
        )
        + f" {human_mib(a.used_mib)}"
        + (f" on GPU {a.gpu}" if a.gpu else "")
        for a in foreign
    )
    known = (
        " not in the job's PID list"
        if health.job_pids is not None
        else (" (no job PID list was available, so every listed process counts as foreign)")
    )
    return (
        f"processes{known} hold {human_mib(held)} on {health.node or 'the node'}'s GPUs: {who}; "
        f"more than the {human_mib(shortfall)} shortfall and the {human_mib(floor)} floor "
        f"({t.co_tenant_min_fraction_of_total:.0%} of the card). They are reported, never killed."
    )


def _own_usage(oom: OomMessage, t: Thresholds) -> tuple[float | None, list[tuple[int, float]], str]:
    """How much the failing process holds in all, which listed processes are others, and how
    that was worked out."""
    listed = list(zip(oom.other_process_pids, oom.other_process_mib, strict=False))
    reserved = oom.reserved_mib
    if oom.this_process_mib:  # "0 bytes" means NVML could not attribute it (corpus oom-121)
        return oom.this_process_mib, listed, "as printed (this process has ...)"
    if listed:
        # Without the "this process" sentence the failing process is usually listed under its
        # host PID (containers): the one holding at least the allocator's reserved pool.
        mine = max(listed, key=lambda p: p[1])
        if reserved is None or mine[1] >= reserved:
            others = [p for p in listed if p is not mine]
            return mine[1], others, f"process {mine[0]} taken as the failing process itself"
    base = reserved if reserved is not None else oom.allocated_by_pytorch_mib
    if base is None:
        return None, listed, "unknown"
    return (
        base + t.cuda_context_allowance_mib,
        listed,
        f"allocator pool + {human_mib(t.cuda_context_allowance_mib)} context allowance",
    )


@record
class Call:
    """What the OOM numbers alone say: the verdict, why, the other causes whose fix would also
    cover the shortfall (in docs/design.md §3 order), how sure, and whether the first true-OOM rung should
    also set the allocator (a thin pool that covers only this request)."""

    verdict: str
    why: str
    alternatives: list[str] = field(default_factory=list)
    confidence: str = "high"  # high: one cause covers it; medium: several could; low: none does
    with_allocator: bool = False


def _classify_numbers(oom: OomMessage, t: Thresholds) -> Call:
    """What the OOM numbers alone say (docs/design.md §3): a message that cannot be weighed says so;
    else the rules below in their order, each a verdict with the numbers it used, or nothing."""
    if (early := _unweighable(oom)) is not None:
        return early
    b = _budget(oom, t)
    for rule in NUMBER_RULES:
        if (c := rule(oom, b, t)) is not None:
            return c
    return b.call(
        "unknown",
        (
            f"asked for {human_mib(b.tried)} with {human_mib(b.free)} free of "
            f"{human_mib(b.total)}: the numbers do not explain the failure (a memory fraction, "
            f"MIG slice or driver limit may apply)."
        ),
        confidence="low",
    )


def _unweighable(oom: OomMessage) -> Call | None:
    """A message without the allocator's numbers (or an MPS one, whose numbers are its own)."""
    h = human_mib
    if oom.family in _NO_NUMBERS:
        return Call(
            "unknown",
            (
                f"CUDA reported out of memory ({oom.text.splitlines()[0].strip()[:120]}) without the "
                "allocator's numbers, so true OOM and fragmentation cannot be told apart; "
                "runbook.instrument in the job records them."
            ),
            confidence="low",
        )
    if oom.family in _FAMILY_SAYS:
        return Call("unknown", _FAMILY_SAYS[oom.family], confidence="low")
    tried, alloc = oom.tried_mib, oom.allocated_by_pytorch_mib
    if oom.family == "nccl":
        return Call(
            "unknown",
            (
                f"NCCL could not allocate {h(tried)} for its own buffers on GPU {oom.gpu}: the card "
                "was already full, but NCCL's message carries no allocator numbers; the rank's own "
                "OOM message (if any) or the node's compute-apps say why."
            ),
            confidence="low",
        )
    if tried is None or (oom.free_mib is None and oom.total_mib is None and alloc is None):
        return Call(
            "unknown",
            (
                "the OOM message was cut before the card's numbers"
                + (f" (it asked for {h(tried)})" if tried is not None else "")
                + "; nothing to classify on. The full message is usually in the rank's own log."
            ),
            confidence="low",
        )
    if oom.family != "mps":
        return None
    limit, other = oom.limit_mib, oom.mps_other_allocations_mib or 0.0
    if limit is not None and alloc is not None and alloc + other + tried > limit:
        return Call(
            "true_oom",
            (
                f"MPS allocated {h(alloc)} + other allocations {h(other)} + the {h(tried)} "
                f"request exceed the {h(limit)} allowed."
            ),
        )
    return Call(
        "unknown",
        "MPS out of memory, but its numbers do not show the limit exceeded.",
        confidence="low",
    )


_FAMILY_SAYS = {
    "hint": (
        "only the tail of a CUDA OOM message was found (PyTorch's allocator hint line): "
        "an out-of-memory happened, but the lines with its numbers were cut; the full "
        "message is usually in the rank's own log."
    ),
    "over_1eb": (
        "the job asked for more than 1 EB: a size computation bug in the job, not memory "
        "pressure; no allocator or batch setting cures it."
    ),
}


@record
class Budget:
    """What each fix can buy, in MiB (docs/design.md §3), and the facts the rules weigh: worked out once
    from the message, then read by every rule. The shortfall is the request minus what is free."""

    tried: float
    total: float | None
    free: float | None  # on the card, or under the process's memory fraction when one is set
    shortfall: float
    own: float | None  # all the failing process holds
    others: list  # (pid, MiB) of the other processes the message lists
    how: str  # how `own` was worked out
    floor: float | None  # a co-tenant must hold at least this much of the card
    named: float  # what the listed others hold
    outside: float | None  # in use outside this process (total - free - own)
    pool: float  # reserved but unallocated
    no_setting: bool  # a PyTorch without allocator settings (its wording says so)
    allocator_buys: float
    halving_buys: float | None
    used: float | None
    fraction: float | None  # of the card this process holds
    margin: float
    full: bool  # the request did not fit
    share: float | None  # the pool's share of the card
    thin: bool  # a pool too small a share of the card to matter past this request
    no_fit: str  # how to say it did not fit
    covers: dict  # verdict -> whether its fix would cover the shortfall
    capped: bool = False  # a memory fraction below the card: `free` is the room under it
    unaccounted: float | None = None  # cudaMallocAsync: used, but neither allocated nor free
    text: str = ""  # the budget in words, and the notes, closing every reason

    def call(self, verdict: str, why: str, **kw) -> Call:
        """A verdict with the budget after its reason; the others whose fix would also cover the
        shortfall are its alternatives (docs/design.md §3 order), and make it less sure."""
        alternatives = [
            v for v in ("co_tenant", "fragmentation", "true_oom") if v != verdict and self.covers[v]
        ]
        confidence = kw.pop("confidence", "medium" if alternatives else "high")
        return Call(verdict, why + self.text, alternatives, confidence, **kw)


def _cap_room(oom: OomMessage) -> float | None:
    """What a memory fraction below the card left this process: its cap ("X allowed") less what
    it held. None without such a cap (cudaMallocAsync prints SIZE_MAX when none is set)."""
    limit, total = oom.limit_mib, oom.total_mib
    if limit is None or total is None or limit >= total or oom.mps_other_allocations_mib:
        return None
    held = oom.reserved_mib if oom.reserved_mib is not None else oom.allocated_by_pytorch_mib
    return max(limit - (held or 0.0), 0.0)


def _unseen(oom: OomMessage, own: float | None) -> tuple[float | None, float | None]:
    """What the card held beyond this process (total - free - own), and for cudaMallocAsync,
    which does not print what its pool keeps, what is neither allocated nor free instead (its
    pool or another process: a real H100 showed 50 GiB allocated, 2 MiB free, nobody else)."""
    total, card_free, alloc = oom.total_mib, oom.free_mib, oom.allocated_by_pytorch_mib
    if total is None or card_free is None:
        return None, None
    if oom.family == "malloc_async":
        return None, (max(total - card_free - alloc, 0.0) if alloc is not None else None)
    return (total - card_free - own if own is not None else None), None


def _no_fit(tried: float, total, free, fraction, margin: float, t: Thresholds) -> str:
    """ "Full" means the request did not fit. Say the card is full only when it nearly was: a
    single request of most of the card fails with most of the card free, and the report must
    not say otherwise."""
    nearly_full = (
        free is None
        or free < margin
        or (fraction is not None and fraction >= t.true_oom_min_used_fraction)
    )
    if nearly_full:
        return "the card is full"
    return "the request does not fit" + (
        f" (one request of {tried / total:.0%} of the card)" if total else ""
    )


def _budget(oom: OomMessage, t: Thresholds) -> Budget:
    tried, total = oom.tried_mib, oom.total_mib
    assert tried is not None  # _unweighable answered for a message without it
    alloc, unalloc, reserved = oom.allocated_by_pytorch_mib, oom.unallocated_mib, oom.reserved_mib
    # Under a memory fraction, what the driver had free past the cap was never this process's:
    # the room is the cap's (a real H100 said "68.66 GiB is free ... 19.79 GiB allowed").
    cap_room = _cap_room(oom)
    free = oom.free_mib
    if cap_room is not None:
        free = cap_room if free is None else min(cap_room, free)  # "0 bytes free" stays 0
    shortfall = max(tried - (free or 0.0), 0.0)
    own, others, how = _own_usage(oom, t)
    floor = t.co_tenant_min_fraction_of_total * total if total else None
    named = sum(m for _, m in others)
    outside, unaccounted = _unseen(oom, own)
    pool = unalloc if unalloc is not None and unalloc > 0 else 0.0
    # expandable_segments can map the pool and the driver's free pages into one block; a PyTorch
    # without allocator settings (the message's own wording says so) can win nothing back.
    no_setting = oom.allocator_conf is False
    allocator_buys = 0.0 if no_setting else pool + (free or 0.0)
    halving_buys = alloc / 2 if alloc is not None and alloc > 0 else None
    used = own if oom.this_process_mib else (reserved if reserved is not None else own)
    fraction = used / total if used is not None and total else None
    margin = t.full_card_margin_fraction * total if total else 0.0
    full = (free is not None and free < tried + margin) or (
        fraction is not None and fraction >= t.true_oom_min_used_fraction
    )
    share = pool / total if total else None
    no_fit = _no_fit(tried, total, free, fraction, margin, t)
    ratio = t.fragmentation_min_unallocated_ratio
    covers = {
        "co_tenant": floor is not None
        and bool(
            (others and named >= max(shortfall, floor))
            or (outside is not None and outside > 0 and outside >= max(shortfall, floor))
            # cudaMallocAsync: its pool or another process; only an alternative, never the call
            or (unaccounted is not None and unaccounted >= max(shortfall, floor))
        ),
        # On a card that is not full the driver's free memory was there and did not help.
        "fragmentation": not no_setting
        and pool > 0
        and (allocator_buys if full else pool) >= ratio * tried,
        "true_oom": full and (halving_buys is None or halving_buys >= shortfall),
    }
    b = Budget(
        tried=tried,
        total=total,
        free=free,
        shortfall=shortfall,
        own=own,
        others=others,
        how=how,
        floor=floor,
        named=named,
        outside=outside,
        pool=pool,
        no_setting=no_setting,
        allocator_buys=allocator_buys,
        halving_buys=halving_buys,
        used=used,
        fraction=fraction,
        margin=margin,
        full=full,
        share=share,
        thin=share is not None and share < t.fragmentation_min_pool_share,
        no_fit=no_fit,
        covers=covers,
        capped=cap_room is not None,
        unaccounted=unaccounted,
    )
    b.text = _budget_text(oom, b) + _notes(oom)
    return b


# Three sizes printed to 0.01 GiB (total - free - this process) can be off by ~15 MiB together:
# less than that "outside this process" is the rounding, not memory anyone holds.
_ROUNDING_MIB = 16.0
CAP_SLACK = 0.02  # of a memory-fraction cap: "reaches the cap" within rounding and block sizes


def _budget_text(oom: OomMessage, b: Budget) -> str:
    h = human_mib
    room = "room under the memory fraction" if b.capped else "free"
    budget = [f"the shortfall is {h(b.shortfall)} (request - {room})"]
    if oom.unallocated_mib is not None and b.no_setting:
        wording = (
            'the message\'s "cached" wording is PyTorch before 1.4'
            if oom.reserved_total_mib is None
            else "the message's line ends without the allocator hint, which came with the setting"
        )
        budget.append(
            f"the allocator setting can win back nothing: {wording}, so this PyTorch has no "
            f"PYTORCH_CUDA_ALLOC_CONF (the {h(b.pool)} pool would need a newer PyTorch)"
        )
    elif oom.unallocated_mib is not None:
        budget.append(
            f"the allocator setting can win back at most {h(b.allocator_buys)} "
            f"({h(b.pool)} reserved-but-unallocated"
            + (f", {b.share:.1%} of the card" if b.share is not None else "")
            + (
                f", + {h(b.free)} "
                + ("left under the cap" if b.capped else "the driver still had free")
                if b.free
                else ""
            )
            + ")"
        )
    if b.halving_buys is not None:
        budget.append(
            f"halving the micro-batch frees at most about {h(b.halving_buys)} (half of "
            "what PyTorch had allocated)"
        )
    if b.unaccounted:
        budget.append(
            f"{h(b.unaccounted)} of the card is neither allocated nor free: cudaMallocAsync does "
            "not print what its pool keeps, so it is this process's pool or another process's"
        )
    if b.others:
        budget.append(f"other processes hold {h(b.named)}")
    elif b.outside is not None and b.outside > _ROUNDING_MIB:
        budget.append(f"{h(b.outside)} is in use outside this process")
    return " The budget: " + "; ".join(budget) + "."


def _notes(oom: OomMessage) -> str:
    """Numbers that cannot be right as printed, said beside the verdict."""
    tried, total, alloc = oom.tried_mib, oom.total_mib, oom.allocated_by_pytorch_mib
    notes = []
    if total is not None and tried is not None and tried > total:
        notes.append(
            f"the single {human_mib(tried)} request is larger than the whole {human_mib(total)} card"
        )
    if total is not None and alloc is not None and alloc > total:
        notes.append(
            f"PyTorch reports {human_mib(alloc)} allocated on a {human_mib(total)} card: the "
            "driver spilled into system memory (Windows) or the numbers are unreliable"
        )
    return (" Note: " + "; ".join(notes) + ".") if notes else ""


# -- the rules, in docs/design.md §3's order: co-tenants, then fragmentation, then a cap, then true OOM --
def _co_tenant_listed(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """Other processes the message lists hold more than the shortfall and the floor."""
    if not (b.others and b.floor is not None and b.named >= max(b.shortfall, b.floor)):
        return None
    h = human_mib
    pids = ", ".join(f"{p} ({h(m)})" for p, m in b.others)
    return b.call(
        "co_tenant",
        (
            f"other processes hold {h(b.named)} of the {h(b.total)} card (PIDs {pids}), more "
            f"than the {h(b.shortfall)} shortfall and above {t.co_tenant_min_fraction_of_total:.0%} "
            f"of the card."
        ),
    )


def _co_tenant_outside(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """What the card holds beyond this process and its free memory is someone else's."""
    outside, floor = b.outside, b.floor
    if not (outside is not None and outside > 0 and floor is not None):
        return None
    if outside < max(b.shortfall, floor):
        return None
    h = human_mib
    return b.call(
        "co_tenant",
        (
            f"{h(outside)} of the {h(b.total)} card is in use outside this process "
            f"(total - {h(b.free)} free - {h(b.own)} held by it, {b.how}): more than the "
            f"{h(b.shortfall)} shortfall and above {t.co_tenant_min_fraction_of_total:.0%} of "
            f"the card; the node's compute-apps list says whose."
        ),
    )


def _fragmentation_full(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """Checked after co-tenants: a neighbour holding most of the card is the cause even when the
    allocator's unallocated pool could also have held this one request (docs/design.md §3 order)."""
    if not (b.full and b.covers["fragmentation"] and not b.thin):
        return None
    h = human_mib
    return b.call(
        "fragmentation",
        (
            f"{b.no_fit} (asked for {h(b.tried)} with {h(b.free)} free), but the allocator "
            f"setting can win back {h(b.allocator_buys)}, {b.allocator_buys / b.tried:.1f}x the "
            f"request (threshold {t.fragmentation_min_unallocated_ratio:g}x), and the "
            f"{h(b.pool)} pool is a real share of the card (at least "
            f"{t.fragmentation_min_pool_share:.0%}): the memory was held but not in one "
            "contiguous block."
        ),
    )


def _fragmentation_free(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """The request fit the free memory, and the pool alone held several requests' worth."""
    unalloc, ratio = oom.unallocated_mib, t.fragmentation_min_unallocated_ratio
    if b.full or unalloc is None or unalloc <= 0 or unalloc < ratio * b.tried:
        return None
    h = human_mib
    return b.call(
        "fragmentation",
        (
            f"asked for {h(b.tried)} with {h(b.free)} free; {h(unalloc)} was reserved by PyTorch "
            f"but unallocated ({unalloc / b.tried:.1f}x the request, threshold {ratio:g}x), so the "
            f"allocator held the memory but not in one contiguous block"
            + (
                "; this PyTorch predates the allocator settings, so the fix needs a newer one."
                if b.no_setting
                else "."
            )
        ),
    )


def _capped(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """A memory fraction set on the process: its own cap, not the card, ran out. Within a
    few percent of the cap counts: the printed sizes are rounded, and an allocation is rounded up
    to the allocator's block (a CI's 1.05 GiB cap with 1072 MiB reserved refused 2 MiB)."""
    limit, reserved = oom.limit_mib, oom.reserved_mib
    if not b.capped or limit is None or reserved is None:
        return None
    slack = max(_ROUNDING_MIB, CAP_SLACK * limit)
    if reserved + b.tried <= limit - slack:
        return None
    h = human_mib
    card_free = oom.free_mib
    beyond = (
        f" The card itself had {h(card_free)} free: the cap, not the card, ran out; raising "
        "the fraction (torch.cuda.set_per_process_memory_fraction) makes room where nothing "
        "else is meant to share the card."
        if card_free is not None and card_free >= b.tried
        else ""
    )
    over = reserved + b.tried > limit
    return b.call(
        "true_oom",
        (
            f"the process is capped at {h(limit)} (memory fraction) and {h(reserved)} reserved "
            f"+ the {h(b.tried)} request {'exceed it' if over else 'reach it, within rounding'}."
            f"{beyond}"
        ),
        **({} if over else {"confidence": "medium"}),
    )


def _true_oom(oom: OomMessage, b: Budget, t: Thresholds) -> Call | None:
    """The card was full with this process's own tensors."""
    if not b.full:
        return None
    h = human_mib
    parts = [
        f"{b.no_fit}: asked for {h(b.tried)} with {h(b.free)} free"
        + (
            f" (below the request + {h(b.margin)}, {t.full_card_margin_fraction:.0%} of the card)"
            if b.margin
            else ""
        )
    ]
    if b.fraction is not None:
        parts.append(
            f"this process holds {h(b.used)} of {h(b.total)} ({b.fraction:.0%}); what "
            "is not PyTorch's (CUDA context, NCCL, libraries) counts as used"
        )
    with_allocator = b.covers["fragmentation"] and b.thin
    if with_allocator:
        parts.append(
            f"the {h(b.pool)} reserved-but-unallocated pool would cover this request but is "
            f"only {b.share:.1%} of the card (below {t.fragmentation_min_pool_share:.0%}): the "
            "next allocation fails anyway, so the first rung also sets the allocator"
        )
    elif (
        oom.unallocated_mib is not None
        and b.no_setting
        and b.pool >= t.fragmentation_min_unallocated_ratio * b.tried
    ):
        parts.append(
            f"the {h(b.pool)} reserved-but-unallocated pool would cover the request, but this "
            "PyTorch has no allocator setting to win it back"
        )
    elif oom.unallocated_mib is not None:
        parts.append(
            f"only {h(b.pool)} reserved-but-unallocated, not enough to cover the "
            "request, so defragmenting would not have helped"
        )
    kw = {}
    if b.halving_buys is not None and b.halving_buys < b.shortfall:
        parts.append("halving the micro-batch alone may not be enough: later rungs may be needed")
        kw["confidence"] = "low"
    return b.call("true_oom", "; ".join(parts) + ".", with_allocator=with_allocator, **kw)


NUMBER_RULES = (
    _co_tenant_listed,
    _co_tenant_outside,
    _fragmentation_full,
    _fragmentation_free,
    _capped,
    _true_oom,
)
