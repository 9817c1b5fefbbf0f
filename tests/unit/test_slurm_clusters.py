"""[slurm] cluster: `-M NAME` on every Slurm command runbook runs (issue 19, several clusters
behind one slurmdbd). Checked on the argv each call hands the transport."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from runbook.errors import UsageError
from runbook.slurm.cli_backend import SEP, CliSlurm


class Recorder:
    def __init__(self, stdout: str = ""):
        self.argvs: list[list[str]] = []
        self.stdout = stdout

    def run(self, argv, timeout=None):
        self.argvs.append(list(argv))
        return SimpleNamespace(exit_code=0, stdout=self.stdout, stderr="")


def test_every_command_carries_the_cluster():
    t = Recorder("123;alpha\n")
    c = CliSlurm(t, cluster="alpha")
    assert c.submit("/s/job.sbatch", ["--nodes=2"], {"X": "1"}) == "123"
    c.cancel("123")
    c.drain("gpu-01", "xid 79")
    t.stdout = f"CLUSTER: alpha\ngpu-01{SEP}idle\ngpu-02{SEP}drained\n"
    assert c.partition_nodes("gpu") == {"gpu-01": "idle", "gpu-02": "drained"}
    for argv in t.argvs:
        tool = next(
            i for i, w in enumerate(argv) if w in ("sbatch", "scancel", "scontrol", "sinfo")
        )
        assert argv[tool + 1 : tool + 3] == ["-M", "alpha"], argv
    assert t.argvs[0][:2] == ["env", "X=1"]  # the environment prefix stays in front


def test_no_cluster_no_flag_and_a_bad_name_is_refused():
    t = Recorder("7\n")
    CliSlurm(t).cancel("7")
    assert t.argvs == [["scancel", "7"]]
    with pytest.raises(UsageError):
        CliSlurm(t, cluster="alpha;rm -rf /")
