"""A resubmission is the same job plus the rung's change: the resources Slurm recorded for the
original (what its sbatch command line and #SBATCH lines asked for), given again on the new
sbatch command line, and compared with what Slurm records for the new job.

Pure functions of JobInfo values; the pipeline reads the jobs and acts.
"""

from __future__ import annotations

import posixpath
import re

# What each rung changes on purpose, so that the original's value is not given again for it.
RUNG_CHANGES = {"raise_mem": {"mem", "mem_per_cpu"}}

# (recorded key, sbatch option)
_OPTIONS = (
    ("nodes", "--nodes"), ("ntasks", "--ntasks"), ("ntasks_per_node", "--ntasks-per-node"),
    ("cpus_per_task", "--cpus-per-task"), ("gres", "--gres"), ("mem", "--mem"),
    ("mem_per_cpu", "--mem-per-cpu"), ("time", "--time"), ("partition", "--partition"),
    ("account", "--account"), ("qos", "--qos"), ("constraint", "--constraint"),
    ("job_name", "--job-name"), ("output", "--output"), ("error", "--error"),
)  # fmt: skip


def recorded(fields: dict[str, str], job_id: str) -> dict[str, str]:
    """The submission options `scontrol show job` records, by name; what it does not show (or
    shows as a default placeholder) is left out."""
    out: dict[str, str] = {}

    def put(key: str, value: str | None) -> None:
        if value and value not in ("(null)", "N/A", "None", "0", "UNLIMITED", "*"):
            out[key] = value

    put("nodes", fields.get("NumNodes"))
    put("ntasks", fields.get("NumTasks"))
    put("ntasks_per_node", (fields.get("NtasksPerN:B:S:C") or "").split(":")[0])
    put("cpus_per_task", fields.get("CPUs/Task"))
    tpn = fields.get("TresPerNode", "")
    put("gres", ",".join(p.removeprefix("gres:").replace("gres/", "") for p in tpn.split(","))
        if tpn else None)  # fmt: skip
    put("mem", fields.get("MinMemoryNode"))
    if "mem" not in out:
        put("mem_per_cpu", fields.get("MinMemoryCPU"))
    put("time", fields.get("TimeLimit"))
    for key, name in (("partition", "Partition"), ("account", "Account"), ("qos", "QOS"),
                      ("constraint", "Features"), ("job_name", "JobName")):  # fmt: skip
        put(key, fields.get(name))
    for key, name in (("output", "StdOut"), ("error", "StdErr")):
        path = fields.get(name, "")
        if path and path != "/dev/null":
            # The resolved path names the job; the rerun writes its own file, not into this one.
            put(key, as_pattern(path, job_id))
    return out


def as_pattern(path: str, job_id: str) -> str:
    """A resolved log path back to a pattern: the job id in the file name, as a number of its
    own, becomes %j. Directories are left as they are (job 9 must not turn `run-w4a69kn2/` into
    a folder that does not exist)."""
    if not job_id:
        return path
    folder, name = posixpath.split(path)
    name = re.sub(rf"(?<![0-9A-Za-z]){re.escape(job_id)}(?![0-9])", "%j", name)
    return posixpath.join(folder, name)


def options(resources: dict[str, str], rung: str | None) -> list[str]:
    """sbatch options that give the new job the original's resources, less what the rung
    changes."""
    skip = RUNG_CHANGES.get(rung or "", set())
    return [f"{opt}={resources[key]}" for key, opt in _OPTIONS
            if key in resources and key not in skip]  # fmt: skip


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


def mismatches(original, new, rung: str | None) -> list[str]:
    """World size and GPUs of the new job against the original's; a difference no rung asked
    for (no rung shrinks or grows a job yet) is a mismatch."""
    a, b = world(original), world(new)
    return [f"{k}: original {a[k]}, new {b[k]}" for k in a
            if a[k] is not None and b[k] is not None and a[k] != b[k]]  # fmt: skip
