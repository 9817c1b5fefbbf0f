"""The job's own arguments, from the sbatch line accounting keeps (SubmitLine): what a user
typed after the script's name (`sbatch launch.slurm zephyr-7b-beta sft full`). The script reads
them as $1..$N, so its rerun is given them again, in the same order. Pure function of text."""

from __future__ import annotations

import shlex

# sbatch's options that never take the next word as their value: flags, and options whose
# value is optional (given only as --opt=value). Every other option takes one (getopt).
_LONE_LONG = frozenset(
    [
        "--contiguous",
        "--exclusive",
        "--get-user-env",
        "--help",
        "--hold",
        "--ignore-pbs",
        "--no-kill",
        "--no-requeue",
        "--overcommit",
        "--oversubscribe",
        "--parsable",
        "--propagate",
        "--quiet",
        "--reboot",
        "--requeue",
        "--spread-job",
        "--test-only",
        "--usage",
        "--use-min-nodes",
        "--verbose",
        "--version",
        "--wait",
    ]
)
_LONE_SHORT = frozenset("hHIkOQsvVW")


def script_arguments(line: str) -> list[str] | None:
    """The words after the batch script on an sbatch line; None when the line is not read
    (empty, not sbatch's, a --wrap job, or not split as a shell would)."""
    try:
        words = shlex.split(line or "")
    except ValueError:
        return None
    start = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1] == "sbatch"), None)
    if start is None:
        return None
    i = start + 1
    while i < len(words):
        w = words[i]
        if w == ":":  # a heterogeneous job's next component's options
            i += 1
        elif w.startswith("--wrap"):
            return None
        elif w.startswith("--"):
            i += 1 if "=" in w or w in _LONE_LONG else 2
        elif w.startswith("-") and len(w) > 1:
            # -N2 carries its value; -N 2 takes the next word; -H is a flag.
            i += 1 if len(w) > 2 or w[1] in _LONE_SHORT else 2
        else:
            return words[i + 1 :]
    return None
