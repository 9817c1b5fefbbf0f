"""The submission options Slurm records for a job (`scontrol show job`), by name: what its sbatch
command line and #SBATCH lines asked for, read back so a resubmission can give them again."""

from __future__ import annotations

import posixpath
import re


def recorded(
    fields: dict[str, str], job_id: str, array_job_id: str | None = None
) -> dict[str, str]:
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
    put(
        "gres",
        ",".join(p.removeprefix("gres:").replace("gres/", "") for p in tpn.split(","))
        if tpn
        else None,
    )
    put("mem", fields.get("MinMemoryNode"))
    if "mem" not in out:
        put("mem_per_cpu", fields.get("MinMemoryCPU"))
    put("time", fields.get("TimeLimit"))
    # --nodelist, from the script or the command line: the rerun keeps it, less what it excludes
    # (planning.plan.pinned_nodes); not given again as it stands.
    put("nodelist", fields.get("ReqNodeList"))
    for key, name in (
        ("partition", "Partition"),
        ("account", "Account"),
        ("qos", "QOS"),
        ("constraint", "Features"),
        ("job_name", "JobName"),
    ):
        put(key, fields.get(name))
    for key, name in (("output", "StdOut"), ("error", "StdErr")):
        path = fields.get(name, "")
        if path and path != "/dev/null":
            # The resolved path names the job; the rerun writes its own file, not into this one.
            put(key, as_pattern(path, job_id, array_job_id))
    return out


def as_pattern(path: str, job_id: str, array_job_id: str | None = None) -> str:
    """A resolved log path back to a pattern: the job id in the file name, as a number of its
    own, becomes %j; for a task of an array, the array's id becomes %A (the rerun is the same
    index of a new array, so the task index written in the name stays right as it is).
    Directories are left as they are (job 9 must not turn `run-w4a69kn2/` into a folder that
    does not exist)."""
    folder, name = posixpath.split(path)
    for number, token in ((array_job_id, "%A"), (job_id, "%j")):
        if number and number.isdigit():
            name = re.sub(rf"(?<![0-9A-Za-z%]){re.escape(number)}(?![0-9])", token, name)
    return posixpath.join(folder, name)
