"""A resubmission is the same job plus the rung's change: the resources Slurm recorded for the
original (what its sbatch command line and #SBATCH lines asked for), given again on the new
sbatch command line, and compared with what Slurm records for the new job.

Pure functions of JobInfo values; the pipeline reads the jobs and acts.
"""

from __future__ import annotations

from runbook import rungs

# (recorded key, sbatch option)
_OPTIONS = (
    ("nodes", "--nodes"),
    ("ntasks", "--ntasks"),
    ("ntasks_per_node", "--ntasks-per-node"),
    ("cpus_per_task", "--cpus-per-task"),
    ("gres", "--gres"),
    ("mem", "--mem"),
    ("mem_per_cpu", "--mem-per-cpu"),
    ("time", "--time"),
    ("partition", "--partition"),
    ("account", "--account"),
    ("qos", "--qos"),
    ("constraint", "--constraint"),
    ("job_name", "--job-name"),
    ("output", "--output"),
    ("error", "--error"),
)


def options(resources: dict[str, str], rung: str | None) -> list[str]:
    """sbatch options that give the new job the original's resources, less what the rung
    changes."""
    r = rungs.get(rung or "")
    skip = r.sbatch_options if r is not None else frozenset()  # what it changes on purpose
    return [
        f"{opt}={resources[key]}" for key, opt in _OPTIONS if key in resources and key not in skip
    ]


def resized(job, before: int, after: int) -> list[str]:
    """sbatch options for the job on `after` of its `before` nodes: the nodes, and the tasks in
    the same proportion (the tasks per node stay)."""
    out = [f"--nodes={after}"]
    if job.num_tasks and (job.num_tasks * after) % before == 0:
        out.append(f"--ntasks={job.num_tasks * after // before}")
    return out


def gpus(tres: str) -> int | None:
    """GPUs in all from Slurm's TRES string: `gres/gpu=4` is the total (typed entries such as
    `gres/gpu:h100=4` repeat it by type, and are summed only when no total is given)."""
    total, typed = None, 0
    for part in (tres or "").split(","):
        name, _, value = part.partition("=")
        if not (value.isdigit() and len(value) < 9):
            continue
        if name == "gres/gpu":
            total = int(value)
        elif name.startswith("gres/gpu:"):
            typed += int(value)
    return total if total is not None else (typed or None)


def world(job) -> dict[str, int | None]:
    return {"nodes": job.num_nodes, "tasks": job.num_tasks, "gpus": gpus(job.tres)}


def mismatches(original, new, rung: str | None, shrink: tuple[int, int] | None = None) -> list[str]:
    """World size and GPUs of the new job against the original's; a difference the rung did not
    ask for is a mismatch. `shrink` (nodes before, after): a resized world is expected,
    every figure in the same proportion."""
    a, b = world(original), world(new)
    if shrink:
        before, after = shrink
        a = {k: (v * after // before if v is not None else None) for k, v in a.items()}
    return [
        f"{k}: original {a[k]}, new {b[k]}"
        for k in a
        if a[k] is not None and b[k] is not None and a[k] != b[k]
    ]


# What a component is, for the read-back: its size and what each of its tasks gets.
_COMPONENT = ("nodes", "ntasks", "cpus_per_task", "mem", "mem_per_cpu", "gres")


def _component(job) -> dict:
    # A pending job shows its node count as a range ("NumNodes=2-2"): its lower bound is what
    # it gets, as for a plain job (slurm.cli_backend).
    out = {k: job.resources[k] for k in _COMPONENT if job.resources.get(k)}
    if "nodes" in out:
        out["nodes"] = out["nodes"].split("-")[0]
    return out


def components(original, new) -> list[dict]:
    """A heterogeneous job's components side by side, original against rerun, by offset: each
    one's world and recorded resources, and where they differ (a component missing is one)."""
    news = {c.het_offset: c for c in new.components}
    out = []
    for c in original.components:
        n = news.get(c.het_offset)
        a = _component(c)
        b = _component(n) if n else {}
        a["gpus"], b["gpus"] = gpus(c.tres), gpus(n.tres) if n else None
        wrong = (
            [f"component {c.het_offset}: missing from the new job"]
            if n is None
            else [
                f"component {c.het_offset} {k}: original {a.get(k)}, new {b.get(k)}"
                for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)
            ]
        )
        out.append({"offset": c.het_offset, "original": a, "new": b, "mismatches": wrong})
    return out
