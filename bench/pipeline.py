"""Benchmark: `runbook oom` from invocation to the resubmitted job, step by step, against the bare
commands an engineer would type for the same work, run in sequence in the same run.

Targets (issue #6): runbook / bare <= 1.5x; SSH exec round trips per incident reported.

    bash tests/cluster/cluster.sh up && python3 bench/pipeline.py [--repeat 3]

Each round submits the fragmentation scenario of examples/train_oom twice and waits for the real
OOM: one job is handled by `runbook oom --yes` (a fresh process, as on-call would run it), the
other by the bare sequence: scontrol show job; ssh <batch host> grep the log; ssh <oom node>
nvidia-smi -q -d ROW_REMAPPER,ECC, nvidia-smi and dmesg -T; scancel; sbatch of a patched script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from runbook.site import load_site  # noqa: E402
from tests.cluster.scenario import node_health  # noqa: E402

STATE = Path(os.environ.get("RUNBOOK_CLUSTER_STATE", "/var/tmp/runbook-devcluster"))
VARS = dict(
    nodes=2,
    ranks_per_node=2,
    mem_mib=400,
    steps=10,
    micro_batch=8,
    grad_accum=2,
    card_mib=81559,
    param_mib=20000,
    act_mib_per_sample=2000,
    frag_mib_per_step=6000,
    long_step=1,
    ckpt_every=4,
)


def run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-500:]}")
    return r


def failing_job(
    name: str, vars_: dict = VARS, marker: str = "Tried to allocate"
) -> tuple[str, Path]:
    work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-", dir=STATE / "jobs"))
    os.chmod(work, 0o755)
    args = [
        "runbook",
        "--site",
        "devcluster",
        "submit",
        str(REPO / "examples/train_oom/train.sbatch.j2"),
        "--sbatch-arg=--nodelist=gpu-[01-02]",
        "--json",
        f"--var=name={name}",
        f"--var=workdir={work}",
        f"--var=program={REPO}/examples/train_oom/train.py",
    ]
    args += [f"--var={k}={v}" for k, v in vars_.items()]
    job = json.loads(run(*args).stdout)["job_id"]
    log = work / f"{name}-{job}.out"
    deadline = time.time() + 180
    while marker not in (log.read_text() if log.exists() else ""):
        if time.time() > deadline:
            raise SystemExit(f"job {job}'s log never showed {marker!r}")
        time.sleep(0.5)
    return job, work


def ssh_argv(site) -> list[str]:
    """ssh as an engineer runs it against the test cluster: its key, its known_hosts, no prompt."""
    return [
        "ssh",
        "-i",
        site.ssh.identity_file,
        "-o",
        f"UserKnownHostsFile={site.ssh.known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
    ]


def bare(job: str, work: Path, site) -> tuple[float, dict]:
    """What an engineer types, in order, each as its own command."""
    ssh = ssh_argv(site)
    addr = site.ssh.addresses
    t0, steps = time.perf_counter(), {}

    def step(name, *argv):
        t = time.perf_counter()
        run(*argv, check=False)
        steps[name] = steps.get(name, 0) + time.perf_counter() - t

    step("scontrol show job", "scontrol", "show", "job", job)
    log = next(work.glob(f"*-{job}.out"))
    step(
        "ssh grep log",
        *ssh,
        f"oncall@{addr['gpu-01']}",
        "grep",
        "-n",
        "-E",
        "'out of memory|Error|Killed'",
        str(log).replace(" ", "\\ "),
    )
    step(
        "ssh nvidia-smi -q",
        *ssh,
        f"oncall@{addr['gpu-02']}",
        "nvidia-smi",
        "-q",
        "-d",
        "ROW_REMAPPER,ECC",
    )
    step("ssh nvidia-smi", *ssh, f"oncall@{addr['gpu-02']}", "nvidia-smi")
    step("ssh dmesg", *ssh, f"oncall@{addr['gpu-02']}", "dmesg", "-T")
    step("scancel", "scancel", job)
    script = work / "patched.sbatch"
    script.write_text(
        run("scontrol", "write", "batch_script", job, "-").stdout.replace(
            "PYTORCH_CUDA_ALLOC_CONF=", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        )
    )
    step("sbatch", "sbatch", "--parsable", f"--chdir={work}", str(script))
    return time.perf_counter() - t0, steps


def summary(verb: str, step_times, bare_steps, ours, base, execs, what: str) -> int:
    """Per-step medians of both sides, the totals, the ratio against the 1.5x target, the SSH
    execs; exit status 0 when the target is met."""
    med = statistics.median
    print(f"{verb}, per step (median):")
    for k, v in step_times.items():
        print(f"  {k:<14} {med(v) * 1000:7.1f} ms")
    print("bare commands, per step (median, summed over nodes and ranks):")
    for k, v in bare_steps.items():
        print(f"  {k:<18} {med(v) * 1000:7.1f} ms")
    print(f"{verb} (invocation to resubmitted job): median {med(ours):.2f}s {ours}")
    print(f"bare commands in sequence: median {med(base):.2f}s {base}")
    ratio = med(ours) / med(base)
    print(f"ratio runbook / bare: {ratio:.2f}x (target <= 1.5x)")
    print(f"SSH execs per incident: {execs} ({what})")
    print("PASS" if ratio <= 1.5 else "FAIL")
    return 0 if ratio <= 1.5 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    site = load_site("devcluster", environ={})
    ecc = (REPO / "tests/data/nvidia-smi/gpud-535.161.08-h100x8-first2.q.txt").read_text()
    healthy = node_health(
        STATE,
        "gpu-02",
        site.probes,
        kernel="",
        ecc=ecc,
        apps="No running processes found\n",
        source="bench",
    )
    healthy.write()
    ours, base, execs, step_times, bare_steps = [], [], [], {}, {}
    try:
        for _ in range(args.repeat):
            job, _work = failing_job("benchrb")
            t = time.perf_counter()
            out = json.loads(
                run(
                    "runbook", "--site", "devcluster", "oom", "--job", job, "--yes", "--json"
                ).stdout
            )
            ours.append(time.perf_counter() - t)
            report = json.loads((Path(out["folder"]) / "report.json").read_text())
            execs.append(sum(h["execs"] for h in report["evidence"]["ssh"].values()))
            for s in report["timeline"]:
                step_times.setdefault(s["name"], []).append(s["finished"] - s["started"])
            run("scancel", out["new_job_id"], check=False)
            job2, work2 = failing_job("benchbare")
            total, steps = bare(job2, work2, site)
            base.append(total)
            for k, v in steps.items():
                bare_steps.setdefault(k, []).append(v)
            run("squeue", "-h")  # leave nothing running
            for line in run("squeue", "-h", "-o", "%i").stdout.split():
                run("scancel", line, check=False)
    finally:
        healthy.clear()
    return summary("runbook oom", step_times, bare_steps, ours, base, execs, "logs + one probe")


if __name__ == "__main__":
    sys.exit(main())
