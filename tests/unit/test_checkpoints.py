"""Finding the newest valid checkpoint among real torch files: whole, truncated, DCP, empty."""

from __future__ import annotations

import os

import pytest

from runbook import checkpoints

torch = pytest.importorskip("torch", reason="torch is a test dependency (scripts/test installs it)")


def _save(path, step):
    torch.save({"step": step, "w": torch.arange(1000, dtype=torch.float32)}, path)


def test_newest_valid_skips_truncated_and_empty(tmp_path):
    ck = tmp_path / "checkpoints"
    ck.mkdir()
    for step in (100, 200, 300):
        _save(ck / f"step_{step}.pt", step)
    data = (ck / "step_300.pt").read_bytes()
    (ck / "step_300.pt").write_bytes(data[: len(data) // 2])  # a save cut short by the OOM
    (ck / "step_400").mkdir()  # a directory the trainer created but never filled
    found = checkpoints.find("{workdir}/checkpoints/step_*", workdir=str(tmp_path))
    assert [c.step for c in found] == [400, 300, 200, 100]
    chosen, skipped = checkpoints.newest_valid(found)
    assert chosen.step == 200 and chosen.kind == "torch_save" and "torch.load" in chosen.reason
    # (torch is loaded in this test process; without it, the CRC check stands alone)
    assert [(c.step, c.reason) for c in skipped] == [
        (400, "empty directory"),
        (300, "not a torch.save zip archive (truncated, or a legacy format)"),
    ]
    assert sorted(os.listdir(ck)) == ["step_100.pt", "step_200.pt", "step_300.pt", "step_400"]


def test_large_files_checked_by_zip_directory_only(tmp_path):
    _save(tmp_path / "step_5.pt", 5)
    (c,) = checkpoints.find(str(tmp_path / "step_*"), workdir="", load_max_mib=0)
    assert c.valid and "zip directory intact" in c.reason


def test_dcp_directory(tmp_path):
    import torch.distributed.checkpoint as dcp

    good = tmp_path / "step_20"
    dcp.save({"w": torch.ones(4)}, storage_writer=dcp.FileSystemWriter(str(good)))
    bad = tmp_path / "step_30"
    bad.mkdir()
    (bad / ".metadata").write_bytes(b"")
    found = checkpoints.find(str(tmp_path / "step_*"), workdir="")
    chosen, skipped = checkpoints.newest_valid(found)
    assert chosen.path == str(good) and chosen.kind == "dcp"
    assert skipped[0].reason == ".metadata is empty"


def test_marker_file_decides_for_directories(tmp_path):
    done, partial = tmp_path / "iter_0000010", tmp_path / "iter_0000020"
    for d in (done, partial):
        d.mkdir()
        (d / "model.bin").write_bytes(b"x")
    (done / "COMPLETE").write_text("")
    found = checkpoints.find(str(tmp_path / "iter_*"), workdir="", marker="COMPLETE")
    chosen, skipped = checkpoints.newest_valid(found)
    assert chosen.step == 10 and "marker file COMPLETE missing" in skipped[0].reason


def test_nothing_found(tmp_path):
    assert checkpoints.newest_valid(checkpoints.find(str(tmp_path / "x*"), workdir="")) == (
        None,
        [],
    )


def test_corrupted_member_fails_its_crc(tmp_path):
    import zipfile as zf

    path = tmp_path / "step_7.pt"
    _save(path, 7)
    with zf.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.file_size > 100)
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + 50] ^= 0xFF  # flip a byte in the payload
    path.write_bytes(bytes(data))
    (c,) = checkpoints.find(str(path), workdir="")
    assert not c.valid and ("CRC" in c.reason or "failed" in c.reason)


def test_only_checkpoints_this_training_run_can_have_written():
    from runbook.checkpoints import Checkpoint, newest_valid, of_lineage

    def ck(name, step, mtime):
        return Checkpoint(f"/w/checkpoints/{name}", step, "torch_save", True, "zip intact", mtime)

    found = [
        ck("step_9.pt", 9, 5000.0),  # another job's, written after ours ended
        ck("step_6.pt", 6, 2000.0),  # ours
        ck("step_3.pt", 3, 100.0),
    ]  # an older run's, before our lineage began
    scoped = of_lineage(found, since=1000.0, until=3000.0)
    chosen, skipped = newest_valid(scoped)
    assert chosen.path.endswith("step_6.pt")
    assert [s.reason for s in skipped] == ["written after the failing job ended (another job's)"]
    assert "before this training run" in scoped[2].reason and not scoped[2].valid
    assert of_lineage(found, since=None, until=None) == found  # unknown bounds: nothing dropped
