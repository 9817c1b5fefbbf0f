"""`runbook diagnose`: offline diagnosis from captured files, with a stable JSON document."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import click

from runbook.errors import ExitCode, InputError, RunbookError
from runbook.evidence.files import read_text_input, start_text_input

if TYPE_CHECKING:
    from runbook.diagnosis import Diagnosis


@click.command()
@click.option(
    "--log",
    "logs",
    multiple=True,
    metavar="FILE",
    help="Launcher/job output, or a pasted OOM message; - reads standard input. Repeat for "
    "per-rank files.",
)
@click.option(
    "--slurm",
    "slurm_file",
    metavar="FILE",
    help="sacct output (any format) or `scontrol show job`.",
)
@click.option(
    "--dmesg",
    metavar="FILE",
    help="Kernel log of the failing node (dmesg, journalctl -k, syslog) with NVRM Xid lines.",
)
@click.option(
    "--gpu-health",
    metavar="FILE",
    help="`nvidia-smi -q` output of the failing node (ECC, retired pages, remapped rows).",
)
@click.option(
    "--compute-apps",
    metavar="FILE",
    help="`nvidia-smi --query-compute-apps=pid,used_memory --format=csv`, or plain nvidia-smi.",
)
@click.option(
    "--micro-batch",
    type=click.IntRange(min=1),
    help="The micro-batch the failing run used: the JSON then has `fit`, the largest smaller "
    "micro-batch predicted to fit the card (docs/design.md §3.2).",
)
@click.option(
    "--grad-accum",
    type=click.IntRange(min=1),
    help="Its gradient accumulation: candidates then keep micro-batch x accumulation exact "
    "(else only divisors of the micro-batch).",
)
@click.option(
    "--params",
    type=click.IntRange(min=1),
    help="Parameters the job trains (weights, gradients and Adam state: ~18 bytes each): the fit "
    "is then a point, not a range.",
)
@click.option(
    "--source",
    "source_dir",
    type=click.Path(exists=True, file_okay=True, dir_okay=True),
    help="The job's code (its entry file or folder): parsed, never run, for the lines that keep "
    "tensors across steps, evaluate outside no_grad or torch.load without map_location.",
)
@click.option(
    "--metrics",
    "metrics_file",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False),
    help="Lightning's DeviceStatsMonitor output: a CSVLogger's metrics.csv or a TensorBoard "
    "events.out.tfevents.* file; its memory series gives the trend when the log has none "
    "(runbook oom finds either in the job's folder).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: verdict, reasons, oom numbers (MiB), first_failure, ranks, "
    "gpu_health, compute_apps, slurm, alternatives, confidence, with_allocator, log_hardware, "
    "next_step.",
)
@click.pass_obj
def diagnose(
    app,
    logs,
    slurm_file,
    dmesg,
    gpu_health,
    compute_apps,
    micro_batch,
    grad_accum,
    params,
    source_dir,
    metrics_file,
    as_json,
):
    """Diagnose a CUDA OOM offline, from files you already have.

    Finds the rank that ran out of memory first (NCCL timeouts on the other ranks are
    consequences), reads the numbers in its OOM message, checks the node's GPU health when given,
    and classifies it: gpu_fault, co_tenant, fragmentation, true_oom, host_oom, not_oom or
    unknown. Changes nothing.

    \b
    Examples:
      runbook diagnose --log slurm-123456.out --slurm sacct.txt --dmesg dmesg.txt --json
      pbpaste | runbook diagnose --log -
      runbook diagnose --log slurm-123456.out --micro-batch 8 --grad-accum 2 --json
      runbook diagnose --log slurm-123456.out --source ~/project/train.py
      runbook diagnose --log slurm-123456.out --metrics lightning_logs/run/version_0/metrics.csv
    Exit codes: 0 a diagnosis was made (not_oom too, and unknown where a failure was found
    whose kind cannot be told), or node health given alone was read (--dmesg, --gpu-health,
    --compute-apps: what it shows, an Xid, a remap or a healthy GPU, is said); 3 nothing in
    the input names a failure runbook reads and no node health was read, or an input could not
    be read (the others are still used); 2 usage error.
    """
    if not (logs or slurm_file or dmesg or gpu_health or compute_apps):
        raise click.UsageError("give at least one input file (--log, --slurm, --dmesg, ...)")
    if sum(p == "-" for p in (*logs, slurm_file, dmesg, gpu_health, compute_apps)) > 1:
        raise click.UsageError("only one input can be - (standard input)")
    errors: list[RunbookError] = []
    # A large log's greps first: they run while the site, the playbook and the parsers load.
    started = _start_logs(logs, errors)
    from runbook.playbook import load as load_playbook

    site = app.site()
    playbook = load_playbook(site.playbooks.dir)
    launch, slurm = _read_logs(started, slurm_file, errors)
    health = _node_health(dmesg, gpu_health, compute_apps, errors)
    if launch is None and slurm is None and health is None:
        raise InputError("\n".join(str(e) for e in errors))
    diagnosis = _classified(playbook, launch, slurm, health, source_dir, metrics_file)
    if micro_batch and diagnosis.oom is not None:
        diagnosis.fit = _fit(diagnosis, micro_batch, grad_accum, params, site.ladder.fit_margin)
    for err in errors:
        click.echo(f"runbook: error: {err}", err=True)
    if as_json:
        click.echo(json.dumps(diagnosis.contract(), indent=2))
    else:
        click.echo(render(diagnosis))
    launched = diagnosis.evidence.launch
    found = diagnosis.oom is not None or (launched is not None and launched.first_failure)
    # A kernel log, `nvidia-smi -q` or a process list that was read is a result (an Xid, a
    # remap, a healthy GPU), exit 0, as an OOM whose kind cannot be told is.
    health_read = launched is None and health is not None and bool(health.read_sentences())
    if errors or (diagnosis.verdict == "unknown" and not found and not health_read):
        # Nothing in the input named a failure runbook reads: no result a script should take
        # as one.
        raise SystemExit(int(ExitCode.INPUT))


def _classified(playbook, launch, slurm, health, source_dir, metrics_file):
    """The verdict and its next step from what was read."""
    from runbook.diagnosis import classify
    from runbook.evidence.gather import Code, Metrics, gather
    from runbook.planning.walk import next_step_for_cause

    evidence = gather(
        launch=launch,
        slurm=slurm,
        node_health=health,
        code=Code(source_dir) if source_dir else None,
        metrics=Metrics(file=metrics_file, shown=f"--metrics {metrics_file}")
        if metrics_file
        else None,
    )
    diagnosis = classify(evidence, playbook.thresholds)
    diagnosis.next_step = next_step_for_cause(
        diagnosis.cause,
        diagnosis.verdict,
        playbook.ladder,
        playbook.causes,
        with_allocator=diagnosis.with_allocator,
    )
    return diagnosis


def _start_logs(logs, errors: list) -> list:
    """Each --log started (files.start_text_input); one that cannot be opened is an error kept
    for the end."""
    started = []
    for path in logs:
        try:
            started.append(start_text_input(path, "--log"))
        except InputError as e:
            errors.append(e)
    return started


def _read_logs(started: list, slurm_file, errors: list):
    """The launcher logs scanned as one (with what reading them left out), and Slurm's record;
    an input that cannot be read is an error kept for the end, the others still used."""
    from runbook.evidence.launcher_log import scan

    texts = []
    notes: list[str] = []  # what reading the inputs left out, said in the reasons
    incomplete: list[str] = []
    for finish in started:
        try:
            excerpt = finish()
        except InputError as e:
            errors.append(e)
            continue
        texts.append(excerpt.text())
        notes.extend(f"--log {excerpt.path}: {n}" for n in excerpt.notes)
        if excerpt.truncated:
            incomplete.append(f"--log {excerpt.path}: matching lines past the cap were not read")
    slurm = None
    if slurm_file:
        from runbook.slurm import text as slurm_text  # only for --slurm

        try:
            slurm = slurm_text.parse(
                read_text_input(slurm_file, "--slurm", keep="whole").text(),
                source=f"--slurm {slurm_file}",
            )
        except InputError as e:
            errors.append(e)
    if not texts:
        return None, slurm
    nodes = slurm.nodes if slurm else None
    launch = scan("\n".join(texts), nodes=nodes, tasks_per_node=_tasks_per_node(slurm))
    launch.notes.extend(notes)
    launch.incomplete.extend(incomplete)
    return launch, slurm


def _fit(diagnosis, micro_batch: int, grad_accum, params, margin):
    from runbook.instrument import estimate_fixed_mib
    from runbook.planning.fit import of_diagnosis

    launch = diagnosis.evidence.launch
    if not params and launch is not None:
        params = launch.params_of(diagnosis.oom.rank)
    return of_diagnosis(
        diagnosis,
        micro_batch=micro_batch,
        fixed_training_mib=estimate_fixed_mib(params) if params else None,
        grad_accum=grad_accum,
        margin=margin,
    )


# A kernel log's line in the shapes the tools print it: `[  12.345678]` (dmesg), `[Sat Nov 28
# 10:00:00 2026]` (dmesg -T), `2026-11-28T10:00:00,123456+00:00` (--time-format=iso),
# `Nov 28 10:00:00 host kernel:` (syslog, journalctl -k).
_KERNEL_SHAPE = re.compile(
    r"(?m)^(?:\[\s*\d{1,10}\.\d{1,9}\]|\[\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\]"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]\d+[+-]\d\d:?\d\d"
    r"|\w{3} [ \d]\d \d\d:\d\d:\d\d \S{1,255} kernel:)"
)


def looks_like_kernel_log(path: str) -> bool:
    """Whether the file's first 64 KiB hold a line in a kernel log's shape. Standard input and
    compressed files, already read, are taken as given."""
    if path == "-":
        return True
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return True  # read once already: its error was said there
    if head[:2] in (b"\x1f\x8b", b"\xfd7") or head[:4] == b"\x28\xb5\x2f\xfd":
        return True
    return bool(_KERNEL_SHAPE.search(head.decode("utf-8", "replace")))


def _node_health(dmesg, gpu_health, compute_apps, errors):
    """Offline node health from captured files (assumed to come from the failing node)."""
    if not (dmesg or gpu_health or compute_apps):
        return None
    from runbook.evidence import nvsmi, xid  # only when node-health files are given
    from runbook.evidence.gpu_health import NodeHealth

    health = NodeHealth(node="")
    for path, what in (
        (dmesg, "--dmesg"),
        (gpu_health, "--gpu-health"),
        (compute_apps, "--compute-apps"),
    ):
        if not path:
            continue
        try:
            keep = {"--dmesg": "kernel"}.get(what, "whole")
            text = read_text_input(path, what, keep=keep).text()
        except InputError as e:
            errors.append(e)
            continue
        part = {"--dmesg": "kernel_log", "--compute-apps": "apps"}.get(what)
        if part:
            from runbook.evidence import multihost
            from runbook.evidence.framing import plain

            hosts = [h for h, _ in multihost.split(plain(text)) if h]
            health.framing[part] = (hosts, multihost.tool_messages(plain(text)))
        if what == "--dmesg":
            health.kernel = xid.parse(text)
            if not health.kernel.events and not looks_like_kernel_log(path):
                health.kernel = None  # not a kernel log: nothing was read of the node
                errors.append(
                    InputError(
                        f"--dmesg {path}: no kernel log line found (no NVRM or Xid line, and no "
                        "line in the shape of dmesg, dmesg -T, --time-format=iso, journalctl -k "
                        "or syslog)",
                        hint="give the node's kernel log as one of those prints it",
                    )
                )
        elif what == "--gpu-health":
            health.memory = nvsmi.parse_memory_health(text)
            if not health.memory.gpus:
                errors.append(
                    InputError(
                        f"--gpu-health {path}: no ECC, Retired Pages or Remapped Rows section found",
                        hint="give `nvidia-smi -q` or `nvidia-smi -q -d ROW_REMAPPER,ECC` output",
                    )
                )
        else:
            health.apps = nvsmi.parse_compute_apps(text)
    return health


def _tasks_per_node(slurm) -> int | None:
    """Block distribution from `scontrol show job`'s NumTasks over its nodes, when even."""
    if not slurm or not slurm.nodes or not slurm.fields.get("NumTasks", "").isdigit():
        return None
    n, k = int(slurm.fields["NumTasks"]), len(slurm.nodes)
    return n // k if n and n % k == 0 else None


def render(d: Diagnosis) -> str:
    """The human view: the verdict and its reason first, then the numbers a reader checks."""
    from runbook.diagnosis import human_mib
    from runbook.evidence.units import points
    from runbook.words import numbers, when_where

    lines = [f"verdict: {d.verdict}"]
    launch = d.evidence.launch
    ff = launch.first_failure if launch else None
    if ff:
        who = f"rank {', '.join(map(str, ff.ranks))}" if ff.ranks else "no rank named"
        lines.append(
            f"first failure: {ff.kind}, {who}"
            + (f" on {ff.node}" if ff.node else "")
            + (f" at {ff.time}" if ff.time else "")
        )
    if launch and launch.timed_out_ranks:
        lines.append(
            f"then timed out in NCCL (consequences): ranks {numbers(launch.timed_out_ranks)}"
        )
    o = d.oom
    if o:
        lines.append("the OOM, in numbers:")
        rows = [
            ("asked for", o.tried_mib),
            ("free on the GPU", o.free_mib),
            ("GPU capacity", o.total_mib),
            ("allocated by PyTorch", o.allocated_by_pytorch_mib),
            ("reserved but unallocated", o.unallocated_mib),
            ("reserved in total", o.reserved_mib),
            ("this process in all", o.this_process_mib),
            ("limit", o.limit_mib),
        ]
        for label, value in rows:
            if value is None:
                continue
            shown = human_mib(value)
            if label == "limit" and o.total_mib and value > 1024 * o.total_mib:
                # cudaMallocAsync prints SIZE_MAX (17179869184.00 GiB) where no fraction is set
                shown = "none set"
            lines.append(f"  {label:<26}{shown:>14}")
        for pid, mib in zip(o.other_process_pids, o.other_process_mib, strict=False):
            lines.append(f"  {'process ' + str(pid):<26}{human_mib(mib):>14}")
    if d.evidence.slurm and d.evidence.slurm.state:
        s = d.evidence.slurm
        lines.append(
            f"slurm: {s.job_id or '?'} {s.state} exit {s.exit_code or '?'}"
            + (f" on {','.join(s.nodes)}" if s.nodes else "")
        )
    p = d.phase
    frames: list[str] = []
    said = when_where(p.where, p.when, p.step) if p is not None and d.oom is not None else None
    if p is not None and d.oom is not None and (said or p.evidence):
        lines.append(f"when and where: {said or 'unknown'}")
        frames = list(p.evidence[:3])
        lines.extend(f"  {e}" for e in frames)
    if d.trend is not None and d.trend.kind != "unknown":
        lines.append(f"memory trend: {d.trend.kind} ({d.trend.series}, {points(d.trend.points)})")
    if d.cause is not None and d.cause.name not in ("unknown", d.verdict):
        lines.append(f"cause: {d.cause.name}")
        lines.extend(f"  {e}" for e in d.cause.evidence[:4] if e not in frames)
    lines.append("why: " + " ".join(d.reasons))
    lines.append(f"confidence: {d.confidence}")
    if d.next_step:
        n = d.next_step
        who = " (for a person)" if n["for_a_person"] else ""
        lines.append(f"next step{who}: {n['rung']}: {n['setting']}")
        if n["then"]:
            lines.append(f"  then, if it fails again: {', '.join(n['then'])}")
    if d.fit is not None:
        lines.extend(fit_lines(d.fit))
    return "\n".join(lines)


def fit_lines(f) -> list[str]:
    """The fit as a person reads it. A point (the parameter count or telemetry known): each
    candidate's prediction and whether it fits. A range (the message alone, or an OOM in the
    forward pass, whose per-sample figure is a lower bound): both ends of each
    prediction, "fits" only where its high end does, "does not fit" only where its low end
    already exceeds the card; the chosen batch said as the ladder's halving where nothing is
    known to fit, and what would narrow the range."""
    from runbook.diagnosis import human_mib
    from runbook.words import fits_words

    bound = f.factor != 1.0  # a forward pass's OOM: its per-sample figure is a lower bound
    if f.known:
        got = f"micro-batch {f.micro_batch}" if f.micro_batch else "no smaller micro-batch fits"
        got += ", the halving" if f.halved else ""
        why = ", the OOM in the forward pass a lower bound" if bound else ""
        head = f"fit (from {f.source}{why}): {got}, from {f.from_micro_batch}"
    elif f.micro_batch and not f.halved:
        head = (
            f"fit (a range, from the OOM message alone): micro-batch {f.micro_batch}, from "
            f"{f.from_micro_batch}, fits even at the range's high end"
        )
    elif f.micro_batch:
        head = (
            f'fit (a range, from the OOM message alone): no batch is known to fit ("may fit": '
            f"inside the range's two ends); micro-batch {f.micro_batch}, from "
            f"{f.from_micro_batch}, is the ladder's default: the halving"
        )
    else:
        head = (
            f"fit (a range, from the OOM message alone): no smaller micro-batch than "
            f"{f.from_micro_batch} keeps the global batch"
        )
    out = [head, *(f"  {r}" for r in f.reasons)]
    for c in f.candidates:
        low, high = c.peak_mib
        if f.known and not bound:
            pred, verdict = human_mib(high), "fits" if c.fits else "does not fit"
        else:
            pred = f"between {human_mib(low)} and {human_mib(high)}"
            verdict = fits_words(low, high, f.limit_mib)
        out.append(
            f"  micro-batch {c.micro_batch:<4} predicted {pred} of {human_mib(f.limit_mib)}: "
            f"{verdict}"
        )
    return out
