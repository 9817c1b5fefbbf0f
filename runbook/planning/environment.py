"""The rerun's environment: the job's, never runbook's.

sbatch exports the environment it runs in (--export=ALL by default), so a rerun submitted by
runbook would carry runbook's own variables (its hook token, its database URL) and lose the
user's. Measured on Slurm 22.05: with `--export-file=F` and --export=ALL (or no --export), the job
gets F's variables and none of sbatch's own; with --export=NONE, F is ignored; with a list
(`--export=A=1,B`), the job gets the list and F. Accounting keeps the environment sbatch launched
the script with when AccountingStoreFlags=job_env (`sacct --env-vars`), and the command line
(SubmitLine) always. Pure functions: the caller reads Slurm and the process environment.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import field

from runbook.record import record

# runbook's own variables and anything that names a credential: never handed to a user's job
# when the job's own environment is not known and runbook's stands in for it.
_OWN = re.compile(
    r"^(RUNBOOK_|PG[A-Z]|SSH_AUTH_SOCK$|SSH_AGENT_PID$|DATABASE_URL$)"
    r"|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|PRIVATE_KEY|ACCESS_KEY",
    re.IGNORECASE,
)


@record
class RerunEnv:
    export: str  # the --export value the rerun is given
    file_env: dict[str, str] | None  # written for --export-file (None: no file)
    sbatch_env: dict[str, str]  # set in sbatch's own environment (names an --export list takes)
    notes: list[str] = field(default_factory=list)


def export_option(line: str) -> str | None:
    """The --export value of an sbatch command line (the last one given), else None."""
    try:
        words = shlex.split(line or "")
    except ValueError:  # no shell ran a line with unbalanced quotes: nothing read from it
        return None
    found = None
    for i, w in enumerate(words):
        if w in ("--export", "--expor", "--expo") and i + 1 < len(words):
            found = words[i + 1]
        elif w.startswith("--export="):
            found = w.split("=", 1)[1]
        elif w == "sbatch" or w.endswith("/sbatch"):
            continue
        elif not w.startswith("-") and i > 0 and not words[i - 1].startswith("-"):
            break  # the script: what follows are the script's own arguments
    return found


def scrub(env: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """runbook's environment without its own variables and credentials: (kept, dropped names)."""
    dropped = sorted(k for k in env if _OWN.search(k))
    return {k: v for k, v in env.items() if k not in dropped}, dropped


# Variables that say whose session runbook runs in: never another account's in a user's rerun.
_SESSION = re.compile(r"^(SUDO_\w+|MAIL|XDG_\w+|DBUS_SESSION_BUS_ADDRESS|KRB5CCNAME|OLDPWD|PWD)$")


def for_owner(env: dict[str, str], owner: str, home: str | None) -> dict[str, str]:
    """runbook's environment standing in for a job owner's that accounting did not show (Slurm
    22.05 shows a job's environment to an administrator only): the owner's HOME, USER and
    LOGNAME, and none of runbook's session's variables (sudo's, the login's)."""
    out = {k: v for k, v in env.items() if not _SESSION.match(k)}
    out |= {"USER": owner, "LOGNAME": owner}
    if home:
        out["HOME"] = home
    else:
        out.pop("HOME", None)
    return out


def rerun_environment(
    line: str, recorded: dict[str, str] | None, rung_env: dict[str, str], own_env: dict[str, str]
) -> RerunEnv:
    """What the rerun's sbatch is given so that the job sees its original environment plus the
    rung's variables, and nothing of runbook's."""
    export = export_option(line)
    words = [w for w in (export or "").split(",") if w]
    if export is None or (words and words[0].upper() == "ALL"):
        notes: list[str] = []
        if recorded is not None:
            # The recorded environment already holds what the list after ALL set; SubmitLine
            # joins words with spaces and no quotes, so a value with a space cannot be read
            # back from it (measured: `--export=ALL,EXTRA=x y` is recorded as such).
            export = "ALL" if export is not None else None
            base = dict(recorded)
            notes.append(
                f"the rerun gets the job's own environment as accounting recorded it "
                f"({len(recorded)} variables)"
            )
        else:
            base, dropped = scrub(own_env)
            notes.append(
                "accounting holds no environment for the job (AccountingStoreFlags=job_env "
                "keeps it): the rerun gets the environment runbook runs in, less runbook's own "
                f"variables and credentials ({', '.join(dropped) or 'none found'})"
            )
        return RerunEnv(export or "ALL", {**base, **rung_env}, {}, notes)
    # NONE, or a list without ALL: Slurm ignores an export file there; the rung's variables
    # join the list by name, their values set in sbatch's own environment (a value may hold
    # commas, which a list would split).
    if words == ["NONE"] or words == ["NIL"]:
        words = []
    names = [w for w in words if w.split("=", 1)[0] not in rung_env]
    value = ",".join([*names, *rung_env]) or export
    notes = [f"the job was submitted with --export={export}: the rerun keeps that list"]
    if rung_env and export in ("NONE", "NIL"):
        notes[0] += f", with the rung's variables ({', '.join(rung_env)}) added by name"
    return RerunEnv(value, None, dict(rung_env), notes)


def env_file_text(env: dict[str, str]) -> str:
    """--export-file's format: NAME=value entries separated by NUL (values may hold newlines)."""
    return "".join(f"{k}={v}\0" for k, v in env.items() if "\0" not in k + v)


_CONFIG_VALUE = re.compile(r"^[\w./-]+\.(?:ya?ml|json|toml)$")


def config_paths(script: str, env: dict[str, str] | None) -> dict[str, str]:
    """The variables of the job's environment that name a config file the script reads through
    them (`CONFIG_FILE=configs/sft.yaml sbatch job.sh`, the script saying `$CONFIG_FILE`) and
    does not assign itself."""
    if not env:
        return {}
    out = {}
    for name, value in env.items():
        if not _CONFIG_VALUE.match(value) or not re.search(rf"\$\{{?{name}\b", script):
            continue
        if re.search(rf"(?m)^[ \t]*(?:export[ \t]+)?{name}=", script):
            continue  # the script's own value is the one its command reads
        out[name] = value
    return out


def with_env(script: str, env: dict[str, str]) -> tuple[str, str]:
    """(the script with `env` as assignments below its header, those assignments): sbatch reads
    no directive after a command, so they come after the #! and #SBATCH lines."""
    if not env:
        return script, ""
    cut = 0
    for line in script.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        cut += len(line)
    head = "".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items())
    return script[:cut] + head + script[cut:], head


def without_env(new: str, planned: str, head: str) -> str | None:
    """`new` (a change of `planned`, which with_env made) with the environment's assignments
    taken back out; one the change rewrote (a config's path pointed at its copy) stays, saying
    what the environment had. None where the change moved them (nothing safe to say)."""
    if not head:
        return new
    at, n = planned.index(head), head.count("\n")
    if new[:at] != planned[:at]:
        return None
    lines = new[at:].split("\n", n)
    if len(lines) <= n or any("=" not in ln for ln in lines[:n]):
        return None
    olds = head.splitlines()
    if [ln.split("=", 1)[0] for ln in lines[:n]] != [o.split("=", 1)[0] for o in olds]:
        return None
    moved = [
        f"{ln}  # runbook: the job's environment had {old}\n"
        for ln, old in zip(lines[:n], olds, strict=True)
        if ln != old
    ]
    return new[:at] + "".join(moved) + lines[n]
