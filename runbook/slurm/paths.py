"""Slurm output file patterns (`--output=%x-%j_%t.out`) turned into a directory and a file glob.

Tokens per sbatch(1) "filename pattern": %% %A %a %b %J %j %N %n %s %t %u %x, with an optional
zero-pad width (`%4t`), and a backslash anywhere in the pattern turning substitution off. Tokens
that differ between the files of one job (%t task, %n node index, %N node, %s step) become `*`:
per-rank files are all found. Literal parts are escaped for find -name.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from runbook.record import record


def fnmatch_escape(text: str) -> str:
    """A literal piece of a file name made safe for find -name (fnmatch honours backslashes)."""
    return re.sub(r"([\\*?\[\]])", r"\\\1", text)


_TOKEN = re.compile(r"%(\d*)([%AabJjNnstux])")


@record(frozen=True)
class LogLocation:
    directory: str
    name_glob: str  # for find -name: literal parts escaped, per-file parts `*`
    pattern: str  # the pattern as Slurm had it, for messages


def locate(
    pattern: str,
    *,
    job_id: str,
    work_dir: str,
    job_name: str = "",
    user: str = "",
    array_job_id: str | None = None,
    array_task_id: str | None = None,
    default: str = "slurm-%j.out",
) -> LogLocation:
    pattern = pattern or default
    if array_task_id is not None and pattern == default:
        pattern = "slurm-%A_%a.out"
    if not posixpath.isabs(pattern):
        pattern = posixpath.join(work_dir, pattern)
    directory, name = posixpath.split(pattern)
    if "\\" in pattern:  # sbatch: a backslash disables every substitution
        return LogLocation(directory, fnmatch_escape(name.replace("\\", "")), pattern)

    # An array never split into tasks (cancelled while pending: `A_[0-1]` in accounting) has
    # no task index: its %a and %b name no file, and match any.
    task = array_task_id if array_task_id and array_task_id.isdigit() else None

    def value(width: str, letter: str) -> str | None:
        # sbatch pads to at most 10 digits; a longer width in a job's pattern is not one
        pad = min(int(width[-2:]), 10) if width else 0
        number = {
            "A": array_job_id or job_id,
            "a": task,
            "j": job_id,
            "J": job_id,
            "b": str(int(task) % 10) if task else None,
        }.get(letter)
        if letter in "AajJb":
            return number.zfill(pad) if number is not None else None
        return {"u": user, "x": job_name, "%": "%"}.get(letter)

    out, pos = [], 0
    for m in _TOKEN.finditer(name):
        out.append(fnmatch_escape(name[pos : m.start()]))
        v = value(m.group(1), m.group(2))
        if m.group(2) == "J" and v is not None:
            out.append(fnmatch_escape(v) + "*")  # %J is jobid.stepid
        elif v is None or m.group(2) in "NnstJ":
            out.append("*")
        else:
            out.append(fnmatch_escape(v))
        pos = m.end()
    out.append(fnmatch_escape(name[pos:]))
    # %j etc. in the directory part are resolved too; no wildcards there (find needs a real dir).
    directory = _TOKEN.sub(lambda m: value(m.group(1), m.group(2)) or m.group(0), directory)
    return LogLocation(directory, "".join(out), pattern)


def task_of(location: LogLocation, path: str) -> int | None:
    """The task id (rank) a per-task file's name carries (`%t` in the pattern), or None."""
    name_pattern = posixpath.basename(location.pattern)
    if "%t" not in name_pattern and not re.search(r"%\d{1,18}(?!\d)t", name_pattern):
        return None
    regex, pos = [], 0
    for m in _TOKEN.finditer(name_pattern):
        regex.append(re.escape(name_pattern[pos : m.start()]))
        regex.append(
            r"(?P<t>\d{1,18}(?!\d))"
            if m.group(2) == "t" and "(?P<t>" not in "".join(regex)
            else ".*?"
        )
        pos = m.end()
    regex.append(re.escape(name_pattern[pos:]))
    full = re.fullmatch("".join(regex), posixpath.basename(path))
    return int(full.group("t")) if full and full.groupdict().get("t") is not None else None


# srun options that take a separate value ("-N 2", "--ntasks 4"): a word after one of them is its
# value, not yet the program. Options given as "--opt=value" need no entry.
_SRUN_VALUED = {
    "-A",
    "-C",
    "-c",
    "-D",
    "-d",
    "-e",
    "-G",
    "-i",
    "-J",
    "-m",
    "-N",
    "-n",
    "-o",
    "-p",
    "-q",
    "-t",
    "-w",
    "-x",
    "--account",
    "--chdir",
    "--constraint",
    "--cpu-bind",
    "--cpus-per-task",
    "--dependency",
    "--distribution",
    "--error",
    "--export",
    "--gpus",
    "--gpus-per-node",
    "--gpus-per-task",
    "--gres",
    "--input",
    "--job-name",
    "--mem",
    "--mem-per-cpu",
    "--mem-per-gpu",
    "--mpi",
    "--nodelist",
    "--nodes",
    "--ntasks",
    "--ntasks-per-node",
    "--output",
    "--partition",
    "--qos",
    "--time",
    "--exclude",
    "--cpus-per-gpu",
}
_SRUN_OUT = {"-o": "output", "--output": "output", "-e": "error", "--error": "error"}


def srun_log_patterns(script: str) -> list[str]:
    """The --output/--error patterns of the srun lines of a batch script (per-task files such as
    `%x-%j-%t.out`), read as bash reads the words: comments skipped, continuation lines joined,
    quotes honoured, and only srun's own options (before the program it runs)."""
    text = re.sub(r"\\\n", " ", script or "")
    found: list[str] = []
    for line in text.splitlines():
        if "srun" not in line:
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        for i, w in enumerate(words):
            if w == "srun" or w.endswith("/srun"):
                found.extend(_srun_outputs(words[i + 1 :]))
    return list(dict.fromkeys(p for p in found if p and p != "/dev/null"))


def _srun_outputs(args: list[str]) -> list[str]:
    out, i = [], 0
    while i < len(args):
        w = args[i]
        if not w.startswith("-"):
            break  # the program srun runs: what follows are its own arguments
        name, eq, value = w.partition("=")
        if name in _SRUN_OUT:
            if eq:
                out.append(value)
            elif i + 1 < len(args):
                out.append(args[i + 1])
        elif len(w) > 2 and w[:2] in ("-o", "-e") and not w.startswith("--"):
            out.append(w[2:])  # -o%x-%j.out
        if not eq and name in _SRUN_VALUED:
            i += 1
        i += 1
    return out
