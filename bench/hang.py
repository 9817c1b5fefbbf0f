"""Benchmark: `runbook hang` from invocation to the resubmitted job, against the bare commands an
engineer would type for the same work, in the same run.

Target (issue #18): runbook / bare <= 1.5x, one SSH exec per node.

    bash tests/cluster/cluster.sh up && python3 bench/hang.py [--repeat 3]

Each round submits examples/train_oom with rank 3 hanging on gpu-02 twice, and waits until the
rank is in its stuck read: one job is handled by `runbook hang --yes` (a fresh process), the other
by the bare sequence: scontrol show job; per node, ssh scontrol listpids; per rank, ssh sudo
py-spy dump --pid; scancel; sbatch of the same script with --exclude and the debug variables.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.pipeline import VARS, failing_job, run, ssh_argv, summary  # noqa: E402
from runbook.site import load_site  # noqa: E402

HANG = {**VARS, "frag_mib_per_step": 0, "long_step": 6, "extra_args": "--hang-node gpu-02"}
MARKER = "loading shard 6"


def bare(job: str, work: Path, site) -> tuple[float, dict]:
    """What an engineer types, in order, each as its own command."""
    ssh, addr = ssh_argv(site), site.ssh.addresses
    t0, steps = time.perf_counter(), {}

    def step(name, *argv) -> str:
        t = time.perf_counter()
        out = run(*argv, check=False).stdout
        steps[name] = steps.get(name, 0) + time.perf_counter() - t
        return out

    step("scontrol show job", "scontrol", "show", "job", job)
    for node in ("gpu-01", "gpu-02"):
        listed = step("ssh listpids", *ssh, f"oncall@{addr[node]}", "scontrol", "listpids", job)
        for line in listed.splitlines()[1:]:
            f = line.split()
            if len(f) >= 5 and f[2].isdigit():  # a task of an srun step: a rank
                step(
                    "ssh py-spy dump",
                    *ssh,
                    f"oncall@{addr[node]}",
                    "sudo",
                    "-n",
                    site.hang.py_spy,
                    "dump",
                    "--pid",
                    f[0],
                )
    step("scancel", "scancel", job)
    script = work / "rerun.sbatch"
    script.write_text(run("scontrol", "write", "batch_script", job, "-").stdout)
    env = {**os.environ, "NCCL_DEBUG": "INFO", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1"}
    t = time.perf_counter()
    subprocess.run(
        ["sbatch", "--parsable", f"--chdir={work}", "--exclude=gpu-02", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    steps["sbatch"] = time.perf_counter() - t
    return time.perf_counter() - t0, steps


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    site = load_site("devcluster", environ={})
    ours, base, execs, step_times, bare_steps = [], [], [], {}, {}
    for _ in range(args.repeat):
        job, _work = failing_job("benchhang", HANG, MARKER)
        t = time.perf_counter()
        out = json.loads(
            run("runbook", "--site", "devcluster", "hang", job, "--yes", "--json").stdout
        )
        ours.append(time.perf_counter() - t)
        if out["verdict"] != "straggler_rank" or not out["new_job_id"]:
            raise SystemExit(f"runbook hang did not resubmit: {out['summary']}")
        report = json.loads((Path(out["folder"]) / "report.json").read_text())
        execs.append({h: v["execs"] for h, v in report["evidence"]["ssh"].items()})
        for s in report["timeline"]:
            step_times.setdefault(s["name"], []).append(s["finished"] - s["started"])
        run("scancel", out["new_job_id"], check=False)
        job2, work2 = failing_job("benchhangbare", HANG, MARKER)
        total, steps = bare(job2, work2, site)
        base.append(total)
        for k, v in steps.items():
            bare_steps.setdefault(k, []).append(v)
        for line in run("squeue", "-h", "-o", "%i").stdout.split():
            run("scancel", line, check=False)
    return summary(
        "runbook hang", step_times, bare_steps, ours, base, execs, "log read + one capture per node"
    )


if __name__ == "__main__":
    sys.exit(main())
