"""The command line that ran (issue 63, item 1): a wedged job's ranks are still processes on their
node, and each one's /proc holds the exact argv it was started with (every shell variable already
expanded, `"$@"` already filled), its working folder and its environment. Read on the failing
node, as the job's owner (the same grant as its logs), before the cancel ends them; the static
reading of the batch script stays for a job that already ended.

The node-side script and the parse of what it prints are here (pure); collect.process_of runs it.
Everything read is the job's data, never proof of anything but what it ran: it is handed to the
program's own parser as argv and environment (no shell), never evaluated."""

from __future__ import annotations

import base64
import binascii
import re

from runbook.record import record

# One exec on the node: the job's PIDs from Slurm (`scontrol listpids`, the job's own record,
# not a guess from names), each Python process's exe, folder, argv and environment, and the
# batch script's own process (its argv holds the job's arguments as sbatch was given them: Slurm
# keeps only a space-joined line), base64 so that no byte of them can frame the output.
SCRIPT = r"""
job=$1
pids=$(scontrol listpids "$job" 2>/dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $1 }')
for p in $pids; do
  exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
  case "${exe##*/}" in
    python*) ;;
    *) tr '\0' '\n' < "/proc/$p/cmdline" 2>/dev/null | sed -n 2p | grep -q '/slurm_script$' || continue ;;
  esac
  [ -r "/proc/$p/environ" ] || continue
  echo "@@pid $p"
  printf '@@exe %s\n' "$(printf %s "$exe" | base64 | tr -d '\n')"
  printf '@@cwd %s\n' "$(readlink "/proc/$p/cwd" | base64 | tr -d '\n')"
  printf '@@argv %s\n' "$(base64 < "/proc/$p/cmdline" | tr -d '\n')"
  printf '@@env %s\n' "$(base64 < "/proc/$p/environ" | tr -d '\n')"
done
echo "@@end"
"""
# Interpreter options that take a value (python -W ignore, -X dev): skipped to find the entry.
_VALUED = {"-W", "-X", "-Q"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@record
class Process:
    """One of the job's Python processes on a node, as /proc shows it."""

    pid: int
    exe: str
    cwd: str
    argv: list[str]
    env: dict[str, str]

    def program(self) -> tuple[list[str], list[str]] | None:
        """(how the interpreter names its program: [file] or ["-m", module]; its words), or None
        for a process that runs no program file (a launcher's agent is one: its argv[1] is the
        launcher, torchrun, not the job's entry)."""
        i = 1
        while i < len(self.argv):
            w = self.argv[i]
            if w == "-m" and i + 1 < len(self.argv):
                return ["-m", self.argv[i + 1]], self.argv[i + 2 :]
            if w in _VALUED:
                i += 2
                continue
            if w.startswith("-") and w != "-":
                i += 1
                continue
            return [w], self.argv[i + 1 :]
        return None

    def entry(self) -> str | None:
        """The program this process runs, as a script names it (`train.py`, `pkg.train`); None
        for a shell, or a launcher's agent."""
        prog = self.program() if self.exe.rsplit("/", 1)[-1].startswith("python") else None
        if prog is None:
            return None
        name = prog[0][-1]
        return None if name.rsplit("/", 1)[-1] in _LAUNCHERS else name

    def runs(self, entry: str) -> bool:
        """Whether this process runs the job's entry (`train.py`, `pkg/train.py`, `-m pkg.train`)."""
        prog = self.program() if self.exe.rsplit("/", 1)[-1].startswith("python") else None
        if prog is None:  # the batch script's shell, or a launcher's agent
            return False
        head = prog[0]
        if head[0] == "-m":
            dotted = entry[:-3].replace("/", ".") if entry.endswith(".py") else entry
            return head[1] == dotted or head[1] == dotted.removesuffix(".__main__")
        return head[0] == entry or head[0].endswith("/" + entry.lstrip("./"))


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _nul_split(raw: bytes) -> list[str]:
    return [w.decode("utf-8", "surrogateescape") for w in raw.split(b"\0")[:-1]] if raw else []


def parse(text: str) -> list[Process]:
    """The processes the node-side script printed; a record cut short is dropped."""
    out: list[Process] = []
    cur: dict = {}
    for line in text.split("\n"):
        tag, _, value = line.partition(" ")
        if tag in ("@@pid", "@@end") and _complete(cur):
            out.append(_process(cur))
        if tag == "@@pid":
            cur = {"pid": int(value)} if value.isdigit() else {}
        elif tag in ("@@exe", "@@cwd", "@@argv", "@@env") and cur:
            cur[tag[2:]] = _b64(value)
    return out


def _complete(cur: dict) -> bool:
    return {"pid", "exe", "cwd", "argv", "env"} <= set(cur)


def _process(cur: dict) -> Process:
    env = {}
    for item in _nul_split(cur["env"]):
        k, eq, v = item.partition("=")
        if eq and _ENV_NAME.fullmatch(k):
            env[k] = v
    decode = lambda b: b.decode("utf-8", "surrogateescape").rstrip("\n")  # noqa: E731
    return Process(cur["pid"], decode(cur["exe"]), decode(cur["cwd"]), _nul_split(cur["argv"]), env)


# What a launcher's agent runs: its argv names the launcher, not the job's program.
_LAUNCHERS = {"torchrun", "accelerate", "deepspeed", "torch.distributed.run",
              "torch.distributed.launch", "accelerate.commands.launch",
              "deepspeed.launcher.launch", "deepspeed.launcher.runner"}  # fmt: skip


def rank_process(
    procs: list[Process], entry: str | None, rank: int | None = None
) -> Process | None:
    """The process of the failing rank (its RANK in its environment) that runs the job's entry,
    else the first that runs it; where none runs the entry the batch script's reading named (that
    reading can be wrong: a `.py` path in an export line), the one the processes themselves run.
    None where no process runs a program (a launcher's agent does not)."""
    mine = [p for p in procs if entry and p.runs(entry)]
    if not mine:
        mine = [p for p in procs if (e := p.entry()) and p.runs(e)]
    if rank is not None:
        for p in mine:
            if p.env.get("RANK") == str(rank) or p.env.get("SLURM_PROCID") == str(rank):
                return p
    return mine[0] if mine else None


def batch_args(procs: list[Process]) -> list[str] | None:
    """The job's own arguments ($1..$N) as its batch script was started with them, exactly (a
    word that holds a space stays one); None where the batch script's process was not read."""
    for p in procs:
        if len(p.argv) >= 2 and p.argv[1].endswith("/slurm_script"):
            return p.argv[2:]
    return None
