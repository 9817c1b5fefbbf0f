"""Proof that the test cluster's parts are real: Slurm schedules and accounts, sshd checks keys,
and the GPU stand-ins replay recorded outputs and refuse anything else."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest

from runbook.errors import HostKeyError, TransportError
from runbook.site import load_site
from runbook.transport.ssh import SshSettings, SshTransport
from tests.cluster.scenario import Scenario, calls, from_corpus
from tests.conftest import corpus_records
from tests.integration.slurm_helpers import sacct_row, sbatch, squeue_state, wait_until

pytestmark = pytest.mark.integration


def test_two_node_job_seen_in_squeue_then_sacct(cluster, tmp_path):
    out = tmp_path / "job-%j.out"
    job = sbatch(
        "-N2",
        "--ntasks-per-node=1",
        "--gres=gpu:2",
        f"--output={out}",
        "--wrap",
        "srun hostname; sleep 2",
    )
    wait_until(lambda: squeue_state(job) == "RUNNING", 30, f"job {job} RUNNING")
    # Accounting is eventually consistent: slurmctld queues start/end records to slurmdbd, and a
    # row can read COMPLETED before the start record's node list has landed.
    row = wait_until(
        lambda: (r := sacct_row(job)) and r["state"] == "COMPLETED" and "[" in r["nodes"] and r,
        60,
        f"job {job} COMPLETED on 2 nodes in sacct",
    )
    assert row["nodes"] in {"gpu-[01-02]", "gpu-[02-03]", "gpu-[01,03]"}
    printed = Path(str(out).replace("%j", job)).read_text().split()
    assert len(set(printed)) == 2 and all(h.startswith("gpu-0") for h in printed)


def test_scancel_of_a_running_job(cluster, tmp_path):
    job = sbatch("-N1", f"--output={tmp_path}/%j.out", "--wrap", "sleep 300")
    wait_until(lambda: squeue_state(job) == "RUNNING", 30, f"job {job} RUNNING")
    from tests.integration.slurm_helpers import sh

    sh("scancel", job)
    row = wait_until(
        lambda: (r := sacct_row(job)) and r["state"].startswith("CANCELLED") and r,
        30,
        f"job {job} CANCELLED in sacct",
    )
    assert row["state"].startswith("CANCELLED")


def devcluster_ssh(**changes) -> SshSettings:
    import dataclasses

    return dataclasses.replace(
        SshSettings.from_site(load_site("devcluster", environ={})), **changes
    )


def test_hostname_on_gpu02_over_paramiko_with_host_key_checking(cluster):
    t = SshTransport("gpu-02", devcluster_ssh())
    try:
        r = t.run(["hostname"])
        assert r.ok and r.stdout.strip() == "gpu-02"
        r2 = t.run(["id", "-un"])
        assert r2.stdout.strip() == "oncall"
        assert t.connects == 1 and t.execs == 2  # one connection reused
    finally:
        t.close()


def test_changed_host_key_is_refused(cluster, tmp_path):
    real = Path(cluster["RUNBOOK_CLUSTER_KNOWN_HOSTS"]).read_text().splitlines()
    # gpu-02 listed with another ed25519 key: what a reinstalled or impersonated node looks like.
    impostor = paramiko.Ed25519Key.from_private_key_file(cluster["RUNBOOK_CLUSTER_SSH_KEY"])
    lines = [ln for ln in real if not ln.startswith("gpu-02,")]
    lines.append(f"gpu-02,198.18.0.12 {impostor.get_name()} {impostor.get_base64()}")
    kh = tmp_path / "known_hosts"
    kh.write_text("\n".join(lines) + "\n")
    t = SshTransport("gpu-02", devcluster_ssh(known_hosts=str(kh)))
    with pytest.raises(HostKeyError) as e:
        t.run(["hostname"])
    msg = str(e.value)
    assert "CHANGED" in msg and "gpu-02" in msg and "SHA256:" in msg and "ssh-keygen -R" in msg


def test_unknown_host_key_is_refused_with_fingerprint(cluster, tmp_path):
    real = Path(cluster["RUNBOOK_CLUSTER_KNOWN_HOSTS"]).read_text().splitlines()
    kh = tmp_path / "known_hosts"
    kh.write_text("\n".join(ln for ln in real if not ln.startswith("gpu-02,")) + "\n")
    t = SshTransport("gpu-02", devcluster_ssh(known_hosts=str(kh)))
    with pytest.raises(HostKeyError, match=r"(?s)not in .*known_hosts.*ssh-ed25519 SHA256:"):
        t.run(["hostname"])
    # The refused key was not written anywhere.
    assert "gpu-02" not in kh.read_text()


def test_known_hosts_listing_only_the_node_name_is_enough(cluster, tmp_path):
    """Connecting by address (site address map) still checks the key listed under the node name."""
    real = Path(cluster["RUNBOOK_CLUSTER_KNOWN_HOSTS"]).read_text().splitlines()
    kh = tmp_path / "known_hosts"
    kh.write_text("\n".join(ln.replace(",198.18.0.12", "") for ln in real) + "\n")
    t = SshTransport("gpu-02", devcluster_ssh(known_hosts=str(kh)))
    try:
        assert t.run(["hostname"]).stdout.strip() == "gpu-02"
    finally:
        t.close()


def test_unreachable_node_is_a_bounded_clear_error(cluster):
    t = SshTransport(
        "gpu-99",
        devcluster_ssh(
            connect_timeout_s=1.0, connect_retries=0, addresses=(("gpu-99", "198.18.0.99"),)
        ),
    )
    with pytest.raises(TransportError, match="cannot connect to gpu-99"):
        t.run(["hostname"])


def test_recorded_nvidia_smi_served_on_a_node_and_unexpected_calls_refused(cluster):
    """No GPU here: gpu-01 replays a recorded real `nvidia-smi -q` (row remap pending) through the
    real path, sshd and all; an invocation the scenario did not list fails loudly."""
    state = Path(cluster["RUNBOOK_CLUSTER_STATE"])
    records = corpus_records("ops/nvidia_smi_remap_ecc.jsonl")
    argv = ["-q", "-d", "ROW_REMAPPER,ECC"]
    canned = from_corpus(records, "remap-gpud-80-uncorrectable-pending", "nvidia-smi", argv)
    scenario = Scenario(state, "gpu-01").expect(canned)
    scenario.write()
    before = len(calls(state, "gpu-01"))
    t = SshTransport("gpu-01", devcluster_ssh())
    try:
        r = t.run(["nvidia-smi", *argv])
        assert r.ok and r.stdout == canned.stdout
        refused = t.run(["nvidia-smi", "-q"])
        assert refused.exit_code == 97 and "not told to expect" in refused.stderr
        refused_dmesg = t.run(["dmesg"])
        assert refused_dmesg.exit_code == 97
    finally:
        t.close()
        scenario.clear()
    made = calls(state, "gpu-01")[before:]
    assert [c["matched"] for c in made] == [True, False, False]


def test_up_on_a_running_cluster_points_the_slurm_trigger_at_the_callers_runbook(cluster):
    """Issue 34 item 7: a cluster left up by another checkout or venv (one since deleted) is
    reused, and its Slurm trigger then calls this checkout's runbook, not that one."""
    import os
    import re
    import subprocess
    import sys

    from tests.conftest import CLUSTER_SH

    epilog = Path(cluster["RUNBOOK_CLUSTER_STATE"]) / "runbook-epilog.sh"
    text = epilog.read_text()
    epilog.write_text(re.sub(r"(?m)^RUNBOOK=.*$", "RUNBOOK=/gone/venv/bin/runbook", text))
    up = subprocess.run(
        ["bash", str(CLUSTER_SH), "up"], capture_output=True, text=True, timeout=600
    )
    assert up.returncode == 0, up.stderr[-2000:]
    assert "already up" in up.stderr  # reused, not restarted
    want = os.path.join(os.path.dirname(sys.executable), "runbook")
    assert re.search(rf"(?m)^RUNBOOK={re.escape(want)}$", epilog.read_text()), epilog.read_text()
