"""Find the newest *valid* checkpoint of a job. Nothing here ever deletes or rewrites one.

Valid means, by kind:
- a `torch.save` file: its zip central directory reads (torch's format since 1.6 is a zip; a
  truncated file fails with "failed finding central directory"), and, when small enough, every
  member's CRC matches (and `torch.load(weights_only=True)` succeeds where torch is already
  loaded: importing it costs a second the on-call does not need to spend);
- a `torch.distributed.checkpoint` directory: its `.metadata` reads;
- any directory, when the site names a marker file it must hold (written last by the trainer).
Skipped ones are returned with the reason, for the report.
"""

from __future__ import annotations

import glob
import os
import re
import sys
import zipfile
from pathlib import Path

from runbook.evidence.units import small_int
from runbook.record import record


@record
class Checkpoint:
    path: str
    step: int | None
    kind: str  # torch_save | dcp | marker | unknown
    valid: bool
    reason: str  # why it is valid, or why it was skipped
    mtime: float | None = None  # when it was last written (None: could not be read)


def _step(path: str) -> int | None:
    nums = re.findall(r"\d+", Path(path).name)
    return small_int(nums[-1]) if nums else None


def _mtime(path: str) -> float | None:
    from runbook.jobfiles import owner_read

    try:
        return owner_read.mtime(path)
    except OSError:
        return None


def _torch():
    try:
        import torch  # noqa: PLC0415 - optional dependency

        return torch
    except ImportError:
        return None


def _check_file(path: str, load_max_mib: float) -> tuple[bool, str, str]:
    size = os.path.getsize(path)
    if size == 0:
        return False, "torch_save", "empty file"
    if not zipfile.is_zipfile(path):
        return False, "unknown", "not a torch.save zip archive (truncated, or a legacy format)"
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError) as e:
        return False, "torch_save", f"zip central directory unreadable: {e}"
    if not any(n.endswith("data.pkl") for n in names):
        return False, "unknown", "a zip archive, but not a torch.save file (no data.pkl)"
    if size > load_max_mib * 2**20:
        return True, "torch_save", f"zip directory intact ({len(names)} entries)"
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        return False, "torch_save", f"unreadable member: {e}"
    if bad:
        return False, "torch_save", f"member {bad} fails its CRC check (corrupted)"
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.load(path, map_location="cpu", weights_only=True)
        except Exception as e:  # torch raises many types for a damaged file
            return False, "torch_save", f"torch.load(weights_only=True) failed: {e}"[:300]
        return True, "torch_save", "every member's CRC matches; torch.load(weights_only=True) works"
    return True, "torch_save", "zip directory intact and every member's CRC matches"


def _check_dir(path: str, marker: str) -> tuple[bool, str, str]:
    entries = os.listdir(path)
    if not entries:
        return False, "unknown", "empty directory"
    if marker:
        if marker in entries:
            return True, "marker", f"marker file {marker} present"
        return False, "marker", f"marker file {marker} missing: the save did not finish"
    if ".metadata" in entries:
        meta = os.path.join(path, ".metadata")
        if os.path.getsize(meta) == 0:
            return False, "dcp", ".metadata is empty"
        torch = _torch()
        if torch is not None:
            try:
                from torch.distributed.checkpoint import FileSystemReader  # noqa: PLC0415

                FileSystemReader(path).read_metadata()
            except Exception as e:
                return False, "dcp", f"torch.distributed.checkpoint .metadata unreadable: {e}"[:300]
            return True, "dcp", "torch.distributed.checkpoint .metadata reads"
        return True, "dcp", ".metadata present (torch not installed to read it)"
    return False, "unknown", "no .metadata (not a torch.distributed.checkpoint) and no marker set"


def _check_as_owner(path: str, e: OSError) -> tuple[bool, str, str]:
    """A checkpoint this account may not read, judged by what its owner reads of it: a torch.save
    file's zip end record (its central directory's, which a truncated file lacks) in its last
    bytes. CRCs and torch.load are not tried: the whole file would have to be read through the
    owner's shell."""
    from runbook.jobfiles import owner_read

    try:
        size = owner_read.size(path)
        tail = owner_read.tail_bytes(path, 65536 + 22)
    except OSError as e2:
        return False, "unknown", f"unreadable: {e.strerror or e}; as its owner: {e2.strerror or e2}"
    if size == 0:
        return False, "torch_save", "empty file"
    if b"PK\x05\x06" not in tail:
        return (
            False,
            "torch_save",
            "no zip end record in its last bytes (truncated?), read as its owner",
        )
    return True, "torch_save", "its zip end record is present (read as its owner; CRCs not checked)"


def find(
    pattern: str, *, workdir: str, marker: str = "", load_max_mib: float = 256.0
) -> list[Checkpoint]:
    """Every checkpoint the site pattern matches, newest step first, each judged."""
    from runbook.jobfiles import owner_read

    paths = owner_read.listing(pattern.replace("{workdir}", glob.escape(workdir)))
    out = []
    for p in paths:
        # The rerun resumes from it as the job's owner: one its owner may not read is no
        # checkpoint of the job's (and nothing of it is read for them).
        if why := owner_read.check(p, folder=os.path.isdir(p)):
            out.append(Checkpoint(p, _step(p), "unknown", False, f"not the owner's: {why}"))
            continue
        try:
            if os.path.isdir(p):
                valid, kind, why = _check_dir(p, marker)
            else:
                valid, kind, why = _check_file(p, load_max_mib)
        except PermissionError as e:
            # This account may not read it; its owner may: the end of its zip, as the owner.
            valid, kind, why = _check_as_owner(p, e)
        except OSError as e:
            valid, kind, why = False, "unknown", f"unreadable: {e.strerror or e}"
        out.append(Checkpoint(p, _step(p), kind, valid, why, _mtime(p)))
    out.sort(key=lambda c: (c.step is not None, c.step or 0, c.mtime or 0), reverse=True)
    return out


def of_lineage(
    found: list[Checkpoint], *, since: float | None, until: float | None, slack_s: float = 120.0
) -> list[Checkpoint]:
    """Only checkpoints this training run can have written: not before its lineage's first job
    started, not after the failing job ended. A shared working directory holds other jobs'
    checkpoints too, and resuming from one of those trains someone else's model. The others stay
    in the list, invalid, with the reason (the report lists them as skipped)."""
    out = []
    for c in found:
        why = None
        if c.mtime is None:
            why = "its time could not be read"
        elif since is not None and c.mtime < since - slack_s:
            why = "written before this training run's first job started (another run's)"
        elif until is not None and c.mtime > until + slack_s:
            why = "written after the failing job ended (another job's)"
        out.append(
            Checkpoint(c.path, c.step, c.kind, False, why, c.mtime) if why and c.valid else c
        )
    return out


def newest_valid(found: list[Checkpoint]) -> tuple[Checkpoint | None, list[Checkpoint]]:
    """The newest valid checkpoint, and the newer ones skipped on the way (with reasons)."""
    skipped: list[Checkpoint] = []
    for c in found:
        if c.valid:
            return c, skipped
        skipped.append(c)
    return None, skipped
