"""Lineage tags a person cannot forge: which incident resubmitted which job with which rung.

A resubmission's comment carries
`runbook:incident=<id>,parent=<job>,rung=<rung>[,step=<n>][,need=<m>:<MiB>],sig=<hex>`, the
signature a keyed hash (HMAC-SHA256, the site's lineage secret) of the fields; `step`, the
training step the parent failed at, is signed with them when runbook knew it (a rerun that fails
later than its parent, after a batch rung, is a leak's evidence: docs/design.md §3.1), and `need`, the
parent's micro-batch and what its failing step needed at least (a second point for the fit when
the rerun fails too: docs/design.md §3.2). Anyone can
put any comment on a job, and a rerun is its owner's job (docs/design.md §4.4), so the owner is
signed with the fields (`owner=<user>`): a comment counts only when its signature verifies and
Slurm says the job belongs to the owner it names. A user who copies another user's tag onto a
job of their own is not believed (the job is not that owner's); one who copies their own tag
onto another of their jobs changes only what runbook believes of their own jobs. A tag made
before tags named their owner counts only on runbook's own account's jobs, as then. Any other
comment that claims a lineage is ignored, and named as suspicious. What runbook itself did is what its ledger says; these tags let an incident on a
rerun (possibly on another agent host sharing the secret) know the rungs already tried.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import re
from pathlib import Path

from runbook.errors import ConfigError, RunbookError
from runbook.record import record

_TAG = re.compile(r"runbook:([\w=,.:-]+)")


@record(frozen=True)
class Claim:
    """A job's comment, read: its fields, and whether runbook may believe them."""

    job_id: str
    fields: dict
    trusted: bool
    why: str = ""  # why not, for the report


def signature(
    secret: bytes,
    incident: str,
    parent: str,
    rung: str,
    step: str = "",
    need: str = "",
    owner: str = "",
) -> str:
    # Without a step (and a need, an owner) the message is the three fields, as tags made
    # before they were kept.
    msg = f"{incident}|{parent}|{rung}" + (f"|{step}" if step or need or owner else "")
    msg += f"|need={need}" if need else ""
    msg += f"|owner={owner}" if owner else ""
    return hmac.new(secret, msg.encode(), hashlib.sha256).hexdigest()[:32]


def need_text(micro_batch: int | None, needed_mib: float | None) -> str:
    """The parent's failing micro-batch and what its step needed at least, in MiB, as the tag
    keeps them ("8:22938"): with the rerun's own failure, two attempts to fit a line through
    (planning.fit.refit)."""
    if not micro_batch or needed_mib is None or needed_mib <= 0:
        return ""
    return f"{int(micro_batch)}:{round(needed_mib)}"


def parse_need(text: str) -> tuple[int, float] | None:
    m, _, p = (text or "").partition(":")
    if m.isdigit() and p.isdigit() and 0 < len(m) <= 6 and 0 < len(p) <= 12 and int(m) > 0:
        return int(m), float(p)
    return None


def tag(
    secret: bytes,
    incident: str,
    parent: str,
    rung: str,
    step: int | None = None,
    need: str = "",
    owner: str = "",
) -> str:
    s = str(step) if step is not None else ""
    sig = signature(secret, incident, parent, rung, s, need, owner)
    kept = (
        (f",step={s}" if s else "")
        + (f",need={need}" if need else "")
        + (f",owner={owner}" if owner else "")
    )
    return f"runbook:incident={incident},parent={parent},rung={rung}{kept},sig={sig}"


def read(job_id: str, comment: str, user: str, *, secret: bytes, runbook_user: str) -> Claim | None:
    """The lineage a job's comment claims, judged; None when it claims none."""
    m = _TAG.search(comment or "")
    if not m:
        return None
    fields = dict(kv.split("=", 1) for kv in m.group(1).split(",") if "=" in kv)
    want = signature(
        secret,
        fields.get("incident", ""),
        fields.get("parent", ""),
        fields.get("rung", ""),
        fields.get("step", ""),
        fields.get("need", ""),
        fields.get("owner", ""),
    )
    if not hmac.compare_digest(fields.get("sig", ""), want):
        return Claim(
            job_id, fields, False, "its runbook tag is not signed with this site's lineage secret"
        )
    if fields.get("owner"):
        if user != fields["owner"]:
            return Claim(
                job_id,
                fields,
                False,
                f"it belongs to {user or 'an unknown user'}, and its tag was signed for a "
                f"rerun of {fields['owner']}'s job",
            )
        return Claim(job_id, fields, True)
    if user != runbook_user:
        return Claim(
            job_id,
            fields,
            False,
            f"it was submitted by {user or 'an unknown user'}, "
            f"not by runbook's user {runbook_user}",
        )
    return Claim(job_id, fields, True)


def site_secret(site) -> bytes:
    """[state] lineage_secret, else a random key made once in the state dir (0600): one agent
    host works out of the box; hosts that share work share the setting."""
    if site.state.lineage_secret:
        return site.state.lineage_secret.encode()
    path = Path(site.path(site.state.dir)) / "lineage.key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"cannot read the lineage key {path}: {e}",
            hint="remove it to make a new one, or set [state] lineage_secret",
        ) from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
    except FileExistsError:
        pass  # another process made it first: read theirs
    except OSError as e:
        raise ConfigError(
            f"cannot create the lineage key {path}: {e.strerror or e}",
            hint="check the state dir, or set [state] lineage_secret",
        ) from None
    return bytes.fromhex(path.read_text().strip())


def runbook_user(site) -> str:
    return site.slurm.submit_user or getpass.getuser()


def walk(
    client, job, *, secret: bytes, runbook_user: str, depth: int = 20
) -> tuple[list[tuple[str, str]], list[str]]:
    """(job id, rung) for this job and each ancestor runbook resubmitted, nearest first, from
    signed tags only; and, in words, each comment that claimed a lineage but cannot be believed
    (the walk stops there)."""
    out: list[tuple[str, str]] = []
    suspicious: list[str] = []
    current = job
    for _ in range(depth):
        claim = read(
            current.job_id, current.comment, current.user, secret=secret, runbook_user=runbook_user
        )
        if claim is None:
            break
        if not claim.trusted:
            suspicious.append(
                f"job {current.job_id}'s comment claims a runbook lineage "
                f"(parent {claim.fields.get('parent', '?')}, rung "
                f"{claim.fields.get('rung', '?')}) but {claim.why}: ignored"
            )
            break
        if not claim.fields.get("parent") or not claim.fields.get("rung"):
            break
        out.append((current.job_id, claim.fields["rung"]))
        try:
            current = client.job(claim.fields["parent"])
        except RunbookError:
            break
    return out, suspicious
