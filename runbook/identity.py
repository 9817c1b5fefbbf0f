"""Who acts: every action on a job is its owner's (docs/design.md §4.4).

runbook is run three ways: by a user on their own jobs, by an on-call engineer on anyone's, and
as a site service (the hook, the sweep) on everyone's. An action on a job (scancel, sbatch of its
rerun, scontrol hold/release/update of it and its dependants, the files its rerun reads) is
the job's owner's action, so it runs as the owner: a rerun submitted by root would run the
user's program as root on every node of its allocation, write its checkpoints as root and be
charged to root, and any user could trigger that by running out of memory on purpose. Only
actions on the cluster (draining a node) are runbook's own.

How runbook becomes the owner is the site's choice ([identity] act_as), checked before the
first change: what cannot be done as the owner is refused (exit 4) with the exact grant that
would allow it. This module decides (pure: the accounts come in as data) and wraps argv; the
executor runs them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from runbook.errors import ConfigError, ExitCode, RunbookError
from runbook.record import record

MODES = ("auto", "self", "sudo", "runuser", "sbatch_uid")
NODE_READS = ("check", "sudo")
# The commands a job's owner runs for runbook: Slurm's three that change a job (scontrol also
# hands over the job's batch script, which Slurm shows to its owner only), sacct for the
# environment the job was submitted with (likewise), and the shell that writes the rerun's
# files into the owner's folder (actions.steps.write_owner_file). sbatch as a user already
# runs any program as that user, so the shell grants nothing more.
JOB_COMMANDS = ("sbatch", "scancel", "scontrol", "sacct", "sh")


class NotPermitted(RunbookError):
    """runbook cannot act as the job's owner here: nothing was changed; a person (or the site's
    grant) decides."""

    exit_code = ExitCode.NEEDS_HUMAN


@record(frozen=True)
class Account:
    """A Unix account as the system knows it (None fields: not known)."""

    name: str
    uid: int | None = None
    gid: int | None = None


@record(frozen=True)
class Actor:
    """How the job's commands run: as runbook itself (`self`), or as the owner through sudo,
    runuser, or (for sbatch) Slurm's own --uid/--gid."""

    mode: str  # self | sudo | runuser | sbatch_uid
    owner: Account
    me: Account

    @property
    def as_owner(self) -> bool:
        return self.mode != "self"

    def prefix(self) -> list[str]:
        """The words before a command that make it the owner's."""
        if self.mode == "sudo":
            return ["sudo", "-n", "-u", self.owner.name, "--"]
        if self.mode in ("runuser", "sbatch_uid"):
            return ["runuser", "-u", self.owner.name, "--"]
        return []

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """A job's command (scancel, scontrol, sh) as its owner runs it."""
        return [*self.prefix(), *argv]

    def submit(self, env: dict[str, str], sbatch: Sequence[str]) -> list[str]:
        """sbatch (`sbatch` and its words, -M included), with the variables it must see in its
        own environment, as the owner. sudo passes them itself (`VAR=value` before the
        command, which the SETENV tag of the grant allows): granting `env` would grant every
        program."""
        sb = list(sbatch)
        if self.mode == "sbatch_uid":
            assert self.owner.uid is not None and self.owner.gid is not None
            sb = [sb[0], f"--uid={self.owner.uid}", f"--gid={self.owner.gid}", *sb[1:]]
            return [*(["env", *_assign(env)] if env else []), *sb]
        if self.mode == "sudo":
            return ["sudo", "-n", "-u", self.owner.name, *_assign(env), "--", *sb]
        return [*self.prefix(), *(["env", *_assign(env)] if env else []), *sb]

    def describe(self) -> str:
        if self.mode == "self":
            return f"as {self.me.name} (the job's owner)"
        how = {
            "sudo": f"sudo -n -u {self.owner.name}",
            "runuser": f"runuser -u {self.owner.name}",
            "sbatch_uid": f"sbatch --uid={self.owner.uid} --gid={self.owner.gid}, "
            f"the job's other commands through runuser -u {self.owner.name}",
        }[self.mode]
        return f"as {self.owner.name}, the job's owner ({how}, from {self.me.name})"


def _assign(env: dict[str, str]) -> list[str]:
    return [f"{k}={v}" for k, v in env.items()]


def check_settings(section) -> None:
    """[identity]'s values, or a ConfigError that lists the valid ones."""
    if section.act_as not in MODES:
        raise ConfigError(
            f"[identity] act_as must be one of {', '.join(MODES)}, found {section.act_as!r}",
            hint="auto acts as the owner when runbook runs as root, and refuses other users' "
            "jobs otherwise (docs/install.md, Running for every user)",
        )
    if section.node_reads not in NODE_READS:
        raise ConfigError(
            f"[identity] node_reads must be one of {', '.join(NODE_READS)}, "
            f"found {section.node_reads!r}",
            hint='"check" reads only the owner\'s files as the SSH account; "sudo" reads as the '
            "owner through the SSH account's sudo on the nodes (docs/install.md)",
        )
    d = section.rerun_dir
    if not d or d.startswith("/") or ".." in d.split("/") or any(c in d for c in "\0\n"):
        raise ConfigError(
            f"[identity] rerun_dir must be a relative folder name under the job's working "
            f"directory, found {d!r}",
            hint='a name such as ".runbook" (no leading /, no ..)',
        )


def mode_for(section, me: Account, owner: Account) -> str:
    """The mode that acts for `owner`, from the setting and who runbook is. `auto` and `self`
    on runbook's own job is `self`; `auto` as root is runuser."""
    check_settings(section)
    mode = section.act_as
    if mode == "auto":
        if owner.name == me.name:
            return "self"
        return "runuser" if me.uid == 0 else "refuse"
    if mode == "self":
        return "self" if owner.name == me.name else "refuse"
    return mode


def sudoers_line(me: str, tools: dict[str, str], group: str = "") -> str:
    """The sudoers line that lets `me` run a job's commands as a job's owner: a member of
    `group`, else any account but root. SETENV: sbatch is given the rung's variables on sudo's
    command line (measured with sudo 1.9.13: `sudo -n -u U VAR=v -- sbatch`)."""
    paths = ", ".join(tools[c] for c in JOB_COMMANDS)
    runas = f"%{group}" if group else "ALL,!root"
    return f"{me} ALL=({runas}) NOPASSWD:SETENV: {paths}"


# sudo's own search path (Debian's secure_path): the commands it runs are found there.
SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def node_sudoers_line(ssh_user: str, group: str = "", sh: str = "/usr/bin/sh") -> str:
    """The sudoers line on the nodes that lets the SSH account read a job's files as its owner
    ([identity] node_reads = "sudo"): the scan is one `sh -c`."""
    runas = f"%{group}" if group else "ALL,!root"
    return f"{ssh_user or 'ACCOUNT'} ALL=({runas}) NOPASSWD: {sh}"


def tool_paths(which=shutil.which) -> dict[str, str]:
    """Absolute paths of the job's commands as sudo finds them on its secure_path, as sudoers
    must name them. Links are not resolved: sudo matches a command's base name first, so
    /usr/bin/sh is granted as such, never as the dash it points to."""
    found = {}
    for c in JOB_COMMANDS:
        p = which(c, path=SECURE_PATH)
        found[c] = p or f"/usr/bin/{c}"
    return found


def resolve(section, me: Account, owner: Account, tools: dict[str, str] | None = None) -> Actor:
    """The Actor for a job of `owner`, or NotPermitted (before anything is changed) with the
    grant that would allow it."""
    if not owner.name:
        raise NotPermitted(
            "Slurm did not say who owns the job: runbook does not act on a job it cannot act "
            "for as its owner",
            hint="read the job with `scontrol show job` and act by hand",
        )
    mode = mode_for(section, me, owner)
    if mode == "refuse":
        line = sudoers_line(me.name, tools or tool_paths(), section.owners_group)
        raise NotPermitted(
            f"job of {owner.name}: runbook runs as {me.name}, and [identity] act_as = "
            f"{section.act_as!r} acts only on {me.name}'s own jobs; nothing was changed",
            hint=f'grant it as the owner (a file in /etc/sudoers.d: "{line}") and set '
            '[identity] act_as = "sudo", or run runbook as root, or as the job\'s owner',
        )
    if mode in ("runuser", "sbatch_uid") and me.uid != 0:
        raise NotPermitted(
            f"[identity] act_as = {mode!r} needs root; runbook runs as {me.name}: nothing was "
            "changed",
            hint='run the service as root, or use act_as = "sudo" with the sudoers grant '
            "`runbook config show` prints",
        )
    if owner.uid == 0 and mode != "self":
        raise NotPermitted(
            "the job is root's: runbook acts as a job's owner, and never becomes root for it",
            hint="handle a root job by hand",
        )
    if mode == "sbatch_uid" and (owner.uid is None or owner.gid is None):
        raise NotPermitted(
            f"{owner.name} has no uid/gid on this host: sbatch --uid/--gid cannot name them",
            hint="make the account known here (the login node's passwd), or use runuser",
        )
    return Actor(mode, owner, me)


def account(name: str) -> Account:
    """`name` as this host's passwd knows it (uid/gid None when it does not)."""
    import pwd

    try:
        pw = pwd.getpwnam(name)
    except (KeyError, TypeError):
        return Account(name)
    return Account(name, pw.pw_uid, pw.pw_gid)


def me() -> Account:
    import pwd

    uid = os.geteuid()
    try:
        pw = pwd.getpwuid(uid)
        return Account(pw.pw_name, uid, pw.pw_gid)
    except KeyError:
        return Account(str(uid), uid, os.getegid())


def for_job(section, job, lists=None) -> Actor:
    """The Actor for `job` (its owner as Slurm says: `User`), on this host. Through sudo, sudo
    is asked first (`sudo -n -l`, which runs nothing) whether it lets runbook run each of the
    job's commands as the owner: an account outside the grant is refused here, before anything
    is read or changed as the owner, with the line that grants it (NotPermitted, exit 4), not
    at its first command with sudo's own "a password is required". `lists`: _sudo_lists."""
    actor = resolve(section, me(), account(job.user or ""))
    if actor.mode != "sudo":
        return actor
    tools = tool_paths()
    listed = (lists or _sudo_lists)(tools, actor.owner.name)
    missing = [tools[c] for c in JOB_COMMANDS if not listed.get(c)]
    if missing:
        line = sudoers_line(actor.me.name, tools, section.owners_group)
        raise NotPermitted(
            f"job of {actor.owner.name}: runbook runs as {actor.me.name} with [identity] act_as "
            f'= "sudo", and sudo does not let {actor.me.name} run {", ".join(missing)} as '
            f"{actor.owner.name} without a password (sudo -n -l); nothing was read or changed "
            f"as {actor.owner.name}",
            hint=f'grant it as the owner (a file in /etc/sudoers.d: "{line}", the line '
            "`runbook config show` prints), or run runbook as root",
        )
    return actor


def host_check(section, tools: dict[str, str] | None = None) -> dict:
    """What `runbook config show` says of the identity before the first incident: the mode in
    force from this account, whether it can act for another user from this host (root; or
    `sudo -n -l` lists each job command), and what is missing."""
    check_settings(section)
    who = me()
    tools = tools or tool_paths()
    line = sudoers_line(who.name, tools, section.owners_group)
    out = {
        "account": who.name,
        "uid": who.uid,
        "act_as": section.act_as,
        "node_reads": section.node_reads,
        "acts_for_others": False,
        "how": "",
        "missing": [],
        "sudoers_line": line,
    }
    mode = section.act_as
    if mode in ("auto", "runuser", "sbatch_uid") and who.uid == 0:
        out["acts_for_others"] = True
        out["how"] = (
            "root: sbatch --uid/--gid, the job's other commands through runuser"
            if mode == "sbatch_uid"
            else "root: runuser -u OWNER"
        )
    elif mode == "sudo":
        listed = _sudo_lists(tools, _probe_owner(section.owners_group))
        out["missing"] = [
            f"sudo -n -l does not allow {tools[c]}" for c in JOB_COMMANDS if not listed.get(c)
        ]
        out["acts_for_others"] = not out["missing"]
        out["how"] = "sudo -n -u OWNER"
    elif mode in ("runuser", "sbatch_uid"):
        out["missing"] = [f"act_as = {mode!r} needs root; runbook runs as {who.name}"]
    else:  # auto or self, not root: its own jobs
        out["how"] = f"{who.name}'s own jobs only"
        out["missing"] = [f"another user's job is refused (exit 4); to act for them: {line}"]
    return out


def _probe_owner(group: str) -> str:
    """An account to ask sudo about: a member of the owners' group, else `nobody` (an account
    that is neither root nor runbook's, as a job's owner is)."""
    if group:
        import grp

        try:
            members = grp.getgrnam(group).gr_mem
        except KeyError:
            return "nobody"
        return members[0] if members else "nobody"
    return "nobody"


def _sudo_lists(tools: dict[str, str], target: str) -> dict[str, bool]:
    """{command: whether this account may run it as `target` without a password}: `sudo -n -u
    TARGET -l CMD` exits 0 exactly then (measured, sudo 1.9.13)."""
    sudo = shutil.which("sudo")
    if not sudo:
        return {c: False for c in JOB_COMMANDS}
    listed = {}
    for c in JOB_COMMANDS:
        try:
            r = subprocess.run(
                [sudo, "-n", "-u", target, "-l", tools[c]],
                capture_output=True,
                text=True,
                timeout=10,
            )
            listed[c] = r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            listed[c] = False
    return listed
