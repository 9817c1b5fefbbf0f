"""The job's files read and written as its owner, against the real kernel, find(1) and
runuser(1): runbook runs as root here (as CI does) and the job's owner is `nobody`. Each case
is a file layout a user can make in their own folder (a link to a file only root may read, a
folder of mode 700 on the path), and what runbook may do with it."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from pathlib import Path

import pytest

from runbook import checkpoints
from runbook.actions import steps
from runbook.evidence.log_filter import (
    parse_grep_output,
    refusals,
    remote_grep_many_argv,
    split_locations,
)
from runbook.identity import Account, Actor
from runbook.jobfiles import owner_read
from runbook.jobfiles.configs import read_configs
from runbook.transport.local import LocalTransport

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("runuser") is None,
    reason="acting as another account needs root and runuser (CI runs as root)",
)


@pytest.fixture
def nobody() -> Account:
    pw = pwd.getpwnam("nobody")
    return Account("nobody", pw.pw_uid, pw.pw_gid)


@pytest.fixture
def base():
    """A folder every account may enter (tmp_path sits under a folder of mode 700)."""
    d = Path(tempfile.mkdtemp(prefix="runbook-owner-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)
    owner_read.read_for(None)


def write(path: Path, text: str, mode: int, uid: int = 0) -> Path:
    path.write_text(text)
    path.chmod(mode)
    os.chown(path, uid, -1)
    return path


def test_a_file_is_read_only_where_its_owner_could_read_it(base, nobody):
    ok = write(base / "ok.yaml", "batch: 8\n", 0o644)
    mine = write(base / "mine.yaml", "batch: 4\n", 0o600, nobody.uid)
    secret = write(base / "secret.txt", "root only\n", 0o600)
    private = base / "private"
    private.mkdir(mode=0o700)
    inside = write(private / "in.yaml", "batch: 2\n", 0o644)
    (base / "to-secret.yaml").symlink_to(secret)
    (base / "to-ok.yaml").symlink_to("ok.yaml")
    (base / "loop.yaml").symlink_to("loop.yaml")

    owner_read.read_for(nobody)
    assert owner_read.read_text(ok) == "batch: 8\n"
    assert owner_read.read_text(mine) == "batch: 4\n"
    assert owner_read.read_text(base / "to-ok.yaml") == "batch: 8\n"
    for refused in (secret, base / "to-secret.yaml", inside):
        with pytest.raises(owner_read.Refused):
            owner_read.read_text(refused)
        assert owner_read.check(refused)
    with pytest.raises(OSError, match="symbolic links"):
        owner_read.read_text(base / "loop.yaml")
    # runbook's own job: the kernel checks runbook's rights, as before.
    owner_read.read_for(None)
    assert owner_read.read_text(secret) == "root only\n"


def test_a_config_linked_to_a_file_the_owner_may_not_read_is_not_read(base, nobody):
    write(base / "secret.yaml", "per_device_train_batch_size: 64  # root's\n", 0o600)
    (base / "recipe.yaml").symlink_to(base / "secret.yaml")
    owner_read.read_for(nobody)
    [cfg] = read_configs("python train.py --config recipe.yaml\n", base)
    assert cfg.text is None and "may not read" in cfg.why, cfg
    owner_read.read_for(None)
    [cfg] = read_configs("python train.py --config recipe.yaml\n", base)
    assert cfg.text and "64" in cfg.text


def test_a_checkpoint_the_owner_may_not_read_is_no_checkpoint_of_the_job(base, nobody):
    (base / "checkpoints").mkdir(mode=0o755)
    write(base / "checkpoints" / "step_4.pt", "x", 0o600)  # root's: not the job's
    owner_read.read_for(nobody)
    [c] = checkpoints.find("{workdir}/checkpoints/step_*", workdir=str(base))
    assert not c.valid and c.reason.startswith("not the owner's"), c


def test_the_scan_reads_only_the_owners_files_and_says_what_it_left_and_where_it_was_denied(
    base, nobody
):
    logs = base / "logs"
    logs.mkdir(mode=0o755)
    write(
        logs / "train-1.out",
        "torch.OutOfMemoryError: CUDA out of memory. mine\n",
        0o644,
        nobody.uid,
    )
    write(logs / "train-2.out", "torch.OutOfMemoryError: CUDA out of memory. ROOTS\n", 0o644)
    secret = write(
        base / "secret.log", "torch.OutOfMemoryError: CUDA out of memory. LINKED\n", 0o644
    )
    (logs / "train-3.out").symlink_to(secret)
    private = base / "private"
    private.mkdir(mode=0o700)

    argv = remote_grep_many_argv(
        [(str(logs), "train-*.out", "nobody"), (str(private / "job"), "*.out", "nobody")], tail=5
    )
    # As root with the owner named: only nobody's regular file is read.
    out = split_locations(LocalTransport().run(argv).stdout)
    read = parse_grep_output(out[0])
    assert list(read) == [str(logs / "train-1.out")]
    assert "ROOTS" not in out[0] and "LINKED" not in out[0]
    skipped = refusals(out[0]).skipped
    assert ("a file", "root", str(logs / "train-2.out")) in skipped
    assert ("a symbolic link", "root", str(logs / "train-3.out")) in skipped
    # As nobody (a node's SSH account): the folder of mode 700 above the job's is said.
    as_nobody = LocalTransport().run(["runuser", "-u", "nobody", "--", *argv]).stdout
    denied = refusals(split_locations(as_nobody)[1]).denied
    assert denied == [("nobody", str(private))], as_nobody


def test_the_rerun_file_is_written_by_its_owner_never_over_another(base, nobody):
    own = base / "job"
    own.mkdir(mode=0o755)
    os.chown(own, nobody.uid, nobody.gid)
    actor = Actor("runuser", nobody, Account("root", 0, 0))
    path = own / ".runbook" / "inc1" / "job.sbatch"
    out = steps.write_owner_file(actor, str(path), "#!/bin/bash\necho hi\n", mode=0o700).apply()
    assert out.exit_code == 0, out
    st, folder = path.stat(), path.parent.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (nobody.uid, 0o700)
    assert (folder.st_uid, folder.st_mode & 0o777) == (nobody.uid, 0o700)
    again = steps.write_owner_file(actor, str(path), "#!/bin/bash\necho hi\n", mode=0o700).apply()
    assert again.exit_code == 0 and "already" in again.note
    other = steps.write_owner_file(actor, str(path), "#!/bin/bash\nrm -rf ~\n", mode=0o700).apply()
    assert other.exit_code == 3 and "other content" in other.error
    assert path.read_text() == "#!/bin/bash\necho hi\n"
    # The owner cannot write where it may not: said, nothing written.
    root_only = base / "rootonly"
    root_only.mkdir(mode=0o755)
    denied = steps.write_owner_file(actor, str(root_only / "x" / "f"), "x").apply()
    assert denied.exit_code != 0 and "could not write" in denied.error
    assert not (root_only / "x").exists()
