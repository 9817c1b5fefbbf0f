"""What the job's own arguments set in its script: the words after the script's name on its sbatch
line (accounting's SubmitLine, slurm.submit_line) are $1..$N when it runs, and a script puts them
in its variables in one of two ways people write:

- positionally: `MODEL=$1`, `TASK="${2}"`, `PRECISION=${3:-full}` (alignment-handbook's first
  launch.slurm: `sbatch launch.slurm zephyr-7b-beta sft full deepspeed_zero3`);
- by option, in a `while [[ $# -gt 0 ]]; do case $1 in --model) MODEL="$2"; shift 2;; ...` loop
  (its later launch.slurm: `sbatch launch.slurm --model zephyr-7b-beta --task sft ...`), or
  `--model=*) MODEL="${1#*=}"`.

`bind` gives the variables so set, for the readers that follow variables (the config a recipe
path names). A variable an option would set that the arguments do not give keeps whatever the
script assigned it before; a variable set from an argument that is missing is not bound (it is
empty when the job runs; runbook does not guess it). Pure functions of text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_POSITIONAL = re.compile(
    r"""(?m)^[ \t]*(?:export[ \t]+|local[ \t]+|readonly[ \t]+)?([A-Za-z_]\w*)=(["']?)"""
    r"""\$(?:(\d)|\{(\d)(?::?-([^}"'\s]*))?\})\2[ \t]*(?:[;#].*)?$"""
)
# `--model)` (or `-m|--model)`) followed, in the same branch, by `VAR="$2"` or `VAR=${2}`.
_OPTION_BRANCH = re.compile(
    r"""(?m)^[ \t]*((?:-[\w-]+\|)*-[\w-]+(?:\|-[\w-]+)*)\)[ \t;]*(?:\n[ \t]*)?"""
    r"""([A-Za-z_]\w*)=(["']?)\$\{?2\}?\3"""
)
# `--model=*)` followed by `VAR="${1#*=}"`.
_EQUALS_BRANCH = re.compile(
    r"""(?m)^[ \t]*((?:-[\w-]+=\*\|)*-[\w-]+=\*)\)[ \t;]*(?:\n[ \t]*)?"""
    r"""([A-Za-z_]\w*)=(["']?)\$\{1#\*=\}\3"""
)


_CASE = re.compile(r"(?ms)^[ \t]*case\b.*?^[ \t]*esac\b")


def _case_spans(script: str) -> list[tuple[int, int]]:
    """The script's `case ... esac` blocks: in a branch, "$2" is the value after the option
    being parsed, not the script's second argument."""
    return [(c.start(), c.end()) for c in _CASE.finditer(script)]


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in spans)


def positional(args: Sequence[str]) -> dict[str, str]:
    """$1..$N, $@ and $* as the script sees them (Slurm keeps the line space-joined: an argument
    that held a space is already several)."""
    out = {str(i): a for i, a in enumerate(args[:9], 1)}
    if args:
        out["@"] = out["*"] = " ".join(args)
    return out


def bind(script: str, args: Sequence[str] | None) -> dict[str, str]:
    """The variables the job's own arguments set in `script` (see the module's doc); empty when
    the arguments are not known."""
    if args is None:
        return {}
    out: dict[str, str] = {}
    spans = _case_spans(script)
    for m in _POSITIONAL.finditer(script):
        if _inside(spans, m.start()):
            continue
        n = int(m.group(3) or m.group(4))
        if n <= len(args):
            out[m.group(1)] = args[n - 1]
        elif m.group(5) is not None:
            out[m.group(1)] = m.group(5)
    for m in _OPTION_BRANCH.finditer(script):
        names = m.group(1).split("|")
        for i, a in enumerate(args[:-1]):
            if a in names:
                out[m.group(2)] = args[i + 1]
    for m in _EQUALS_BRANCH.finditer(script):
        prefixes = [p[:-1] for p in m.group(1).split("|")]  # `--model=*` -> `--model=`
        for a in args:
            hit = next((p for p in prefixes if a.startswith(p)), None)
            if hit is not None:
                out[m.group(2)] = a[len(hit) :]
    return out


def from_arguments(script: str, names: Sequence[str]) -> list[str]:
    """Those of `names` the script sets from its arguments (by position or in an option loop,
    as `bind` reads them), and $1..$9 themselves."""
    spans = _case_spans(script)
    by_args = {m.group(1) for m in _POSITIONAL.finditer(script) if not _inside(spans, m.start())}
    by_args |= {m.group(2) for p in (_OPTION_BRANCH, _EQUALS_BRANCH) for m in p.finditer(script)}
    return [n for n in names if n.isdigit() or n in by_args]
