"""How far a training got, from its own output: the last step it printed."""

from __future__ import annotations

import re

from runbook.evidence.units import small_int

# Lines Slurm itself writes into a job's output: "*** STEP 20.0 ON gpu-01 CANCELLED AT ... ***",
# "slurmstepd: error: ...", "srun: error: ...". Their numbers are Slurm's step ids, never the
# training's steps, whatever [logs] step_pattern matches. They arrive under whatever prefix
# srun -l ("0: "), a launcher ("[rank0]:"), a collector ("gpu-01: ", a timestamp) puts first,
# so they are looked for anywhere in the line, not only at its start.
_SLURM_NOTICE = re.compile(
    r"\*{3}\s*(?:STEP|JOB)\s+\d"
    r"|(?:^|[\s\]:>|])(?:slurmstepd|srun|sbatch|salloc)(?:-[\w.-]+)?:\s"
)


def all_steps(lines: list[str], step_pattern: str) -> list[int]:
    """Every training step printed in `lines`, in order, from the training's own output only."""
    out = []
    for line in lines:
        if _SLURM_NOTICE.search(line):
            continue
        for m in re.finditer(step_pattern, line):
            n = small_int(m.group(1))
            if n is not None:
                out.append(n)
    return out


def training_steps(lines: list[str], step_pattern: str, at_most: int | None = None) -> int | None:
    """The last training step printed in `lines`, from the training's own output only; with
    `at_most`, numbers past it (more than the run could have done) are not steps."""
    steps = [n for n in all_steps(lines, step_pattern) if at_most is None or n <= at_most]
    return steps[-1] if steps else None
