"""The submission options Slurm records for a job (`scontrol show job`), by name: what its sbatch
command line and #SBATCH lines asked for, read back so a resubmission can give them again."""

from __future__ import annotations

import posixpath
import re


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
