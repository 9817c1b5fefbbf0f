"""The hung-job runbook's pure parts, on recorded real outputs (tests/data/hang/SOURCES.md):
py-spy dumps of a real 4-rank gloo job where one rank hangs in data loading, py-spy's own error
messages, and `scontrol listpids` of the test cluster; then who is different, the verdicts, the
plan, and the playbook."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from runbook.errors import ConfigError
from runbook.evidence import stacks
from runbook.evidence.collect import CheckpointEvidence, LineageEvidence
from runbook.hang_diagnosis import classify_hang
from runbook.planning.plan import make_hang_plan
from runbook.playbook import load_hang
from runbook.site import SiteConfig
from tests.conftest import corpus_records

DATA = Path(__file__).resolve().parents[1] / "data" / "hang"
HF = (Path(__file__).resolve().parents[1] / "data" / "sbatch" / "hf_accelerate.sbatch").read_text()


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def corpus(relpath: str, record_id: str) -> str:
    return next(r["text"] for r in corpus_records(relpath) if r["id"] == record_id)


# Real outputs of ../shared/corpus: a card with ECC on and no errors, a GPU fallen off the bus.
ECC_CLEAN = corpus("ops/nvidia_smi_remap_ecc.jsonl", "remap-dcgmexporter-16-v100-oldformat-partial")
XID_79 = corpus("ops/xid_dmesg.jsonl", "xid-nvsentinel-155-b")


def test_a_recorded_dump_gives_the_main_threads_frames_innermost_first():
    st = stacks.parse_pyspy(recorded("pyspy-dump0.txt"))
    assert st.pid == 16724 and not st.error
    assert st.python.startswith("v3.11.7")
    main = st.main_thread()
    assert main is not None and main.name == "MainThread" and main.state == "idle"
    assert [f.function for f in main.frames] == [
        "all_reduce",
        "_exception_logger.<locals>.wrapper",
        "main",
        "<module>",
    ]
    assert main.frames[0].file == "torch/distributed/distributed_c10d.py"
    assert main.frames[0].line == 3252


def test_the_hanging_rank_stands_in_data_loading():
    main = stacks.parse_pyspy(recorded("pyspy-dump3.txt")).main_thread()
    assert main is not None and main.frames[0].function == "fetch_shard_from_storage"


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("pyspy-err_perm.txt", "Permission Denied"),
        ("pyspy-err_notpython.txt", "Failed to find python version"),
        ("pyspy-err_nopid.txt", "Failed to get process executable name"),
    ],
)
def test_py_spys_errors_are_kept_as_the_reason(name, says):
    st = stacks.parse_pyspy(recorded(name))
    assert not st.threads and says in st.error


def test_locals_and_native_frames_do_not_break_the_frames():
    text = (
        "Process 7: python train.py\nPython v3.10.12 (/usr/bin/python3.10)\n\n"
        'Thread 0x7F2D8A4F7740 (active+gil): "MainThread"\n'
        "    wait (threading.py:320)\n"
        "        Arguments:\n            self: <Condition at 0x7f>\n"
        "    cudaStreamSynchronize (libcudart.so.12)\n"
        "    step (my trainer/loop.py:88)\n"
    )
    main = stacks.parse_pyspy(text).main_thread()
    assert main is not None and main.state == "active+gil"
    assert [f.text() for f in main.frames] == [
        "wait (threading.py:320)",
        "cudaStreamSynchronize (libcudart.so.12:?)",
        "step (my trainer/loop.py:88)",
    ]


def test_listpids_names_each_srun_tasks_global_id_and_no_rank_for_the_batch_script():
    procs = stacks.parse_listpids(recorded("scontrol-listpids.txt"))
    assert {p.pid: p.global_id for p in procs.values() if p.global_id is not None} == {
        1061: 0,
        1062: 1,
    }
    batch = [p for p in procs.values() if p.step == "batch"]
    assert len(batch) == 3 and all(p.global_id is None for p in batch)  # "task 0" of no world


def sections_for(node: str, dumps: dict[int, str], listpids: str, *, code=0) -> dict:
    """A node's capture as the capture script frames it: our own section markers around the
    recorded outputs."""
    sec = {
        "kernel_log": ("", 0),
        "ecc": (ECC_CLEAN, 0),
        "apps": ("pid, used_gpu_memory [MiB], gpu_uuid", 0),
        "step_pids": (listpids, code),
        "procs": ("", 0),
    }
    for pid, name in dumps.items():
        sec[f"stack {pid}"] = (recorded(name), 0)
    return sec


def listpids(rows: list[tuple[int, int | None]], job: int = 9) -> str:
    lines = ["PID      JOBID    STEPID   LOCALID GLOBALID"]
    for pid, rank in rows:
        g = "-" if rank is None else str(rank)
        lines.append(f"{pid:<8} {job:<8} 0        {g:<7} {g}")
    return "\n".join(lines)


def four_ranks(*, straggler="pyspy-dump3.txt", kernel: str = ""):
    one = stacks.capture_from_sections(
        "gpu-01",
        sections_for(
            "gpu-01",
            {16724: "pyspy-dump0.txt", 16725: "pyspy-dump1.txt"},
            listpids([(16724, 0), (16725, 1)]),
        ),
    )
    two_sections = sections_for(
        "gpu-02",
        {16726: "pyspy-dump2.txt", 16727: straggler},
        listpids([(16726, 2), (16727, 3)]),
    )
    if kernel:
        two_sections["kernel_log"] = (kernel, 0)
    two = stacks.capture_from_sections("gpu-02", two_sections)
    return {"gpu-01": one, "gpu-02": two}


def classify(caps, lines=(), world=4):
    return classify_hang(
        caps,
        log_lines=list(lines),
        world_size=world,
        nodes=["gpu-01", "gpu-02"],
        tasks_per_node=2,
        straggler_max_share=0.25,
    )


def test_the_rank_outside_the_majority_is_the_straggler_and_its_node_the_suspect():
    d = classify(four_ranks())
    assert d.verdict == "straggler_rank"
    assert [(s["rank"], s["node"]) for s in d.suspects] == [(3, "gpu-02")]
    assert d.suspect_nodes == ["gpu-02"]
    majority = next(g for g in d.groups if g.majority)
    assert sorted(m.rank for m in majority.members) == [0, 1, 2]
    assert majority.signature[0].startswith("all_reduce")
    assert "fetch_shard_from_storage" in d.suspects[0]["why"]


def test_an_xid_on_the_suspects_node_makes_it_a_gpu_fault():
    d = classify(four_ranks(kernel=XID_79))
    assert d.verdict == "gpu_fault" and d.suspect_nodes == ["gpu-02"]


def test_all_ranks_in_one_collective_with_transport_errors_is_network():
    caps = four_ranks(straggler="pyspy-dump1.txt")
    line = "gpu-02:1234:1290 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.12 with error 12"
    d = classify(caps, lines=["step 40 loss 1.2", line])
    assert d.verdict == "network" and d.network_lines == [line]
    assert d.suspect_nodes == ["gpu-02"]  # the only node the lines name


def test_all_ranks_alike_and_nothing_else_is_unknown_and_says_so():
    d = classify(four_ranks(straggler="pyspy-dump1.txt"))
    assert d.verdict == "unknown" and not d.suspects
    assert any("same place" in r for r in d.reasons)


def test_a_tie_has_no_majority_and_names_nobody():
    caps = four_ranks()
    caps["gpu-01"].ranks[1].stack = caps["gpu-02"].ranks[1].stack  # two and two
    d = classify(caps)
    assert d.verdict == "unknown" and not d.suspects
    assert any("no majority" in r for r in d.reasons)


def test_a_rank_with_no_process_is_a_suspect_on_its_block_node():
    caps = four_ranks(straggler="pyspy-dump1.txt")
    caps["gpu-02"].ranks = caps["gpu-02"].ranks[:1]  # rank 3's process is gone
    d = classify(caps)
    assert d.verdict == "straggler_rank" and d.missing_ranks == [3]
    assert d.suspects[0]["node"] == "gpu-02" and d.suspects[0]["pid"] is None


def test_a_node_not_reached_is_unknown_never_healthy():
    caps = four_ranks(straggler="pyspy-dump1.txt")
    caps["gpu-02"] = stacks.NodeCapture(node="gpu-02", error="gpu-02: connection refused")
    d = classify(caps)
    assert d.verdict == "unknown" and d.missing_ranks == []  # not all nodes read: none missing
    assert any("not reached" in u for u in d.unknown)


def test_listpids_refused_is_reported_as_unread():
    sec = sections_for(
        "gpu-01", {}, "scontrol: error: stepd_connect to 9.0 failed: Permission denied", code=1
    )
    cap = stacks.capture_from_sections("gpu-01", sec)
    assert "step_pids" in cap.unavailable and "Permission denied" in cap.unavailable["step_pids"]
    assert cap.ranks == []


def test_a_dataloader_worker_is_not_a_rank():
    caps = four_ranks()
    sec = sections_for(
        "gpu-01",
        {16724: "pyspy-dump0.txt", 16725: "pyspy-dump1.txt", 16800: "pyspy-dump3.txt"},
        listpids([(16724, 0), (16725, 1), (16800, None)]),
    )
    sec["procs"] = ("proc 16800 16724 pt_data_worker", 0)
    caps["gpu-01"] = stacks.capture_from_sections("gpu-01", sec)
    d = classify(caps)
    assert d.ranks_seen == 4 and [s["rank"] for s in d.suspects] == [3]


def test_more_outliers_than_the_straggler_share_are_not_named():
    caps = four_ranks()
    # rank 2 stands in a third place: two ranks apart from the majority of two, over 0.25 x 4
    other = stacks.parse_pyspy(recorded("pyspy-dump2.txt").replace("all_reduce (", "broadcast ("))
    caps["gpu-02"].ranks[0].stack = other
    d = classify(caps)
    assert d.verdict == "unknown" and not d.suspects
    assert any("straggler share" in r for r in d.reasons)


# -- the plan -----------------------------------------------------------------------------------
JOB = SimpleNamespace(
    job_id="41",
    work_dir="/scratch/run",
    excluded=[],
    resources={"nodes": "2", "ntasks": "4"},
    num_nodes=2,
    num_tasks=4,
    partition="gpu",
)


def hang_plan(d, tried=()):
    return make_hang_plan(
        d,
        load_hang(),
        SiteConfig(),
        job=JOB,
        script=HF,
        run=LineageEvidence(tried=list(tried)),
        checkpoints=CheckpointEvidence(),
    )


def test_a_straggler_is_excluded_and_the_rerun_carries_the_debug_settings():
    p = hang_plan(classify(four_ranks()))
    assert p.rung == "exclude_suspect" and p.acts
    assert "--exclude=gpu-02" in p.sbatch_args and p.drain is None
    assert p.env["NCCL_DEBUG"] == "INFO" and p.env["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1"
    assert int(p.env["TORCH_NCCL_TRACE_BUFFER_SIZE"]) > 0


def test_a_repeat_on_the_lineage_escalates():
    p = hang_plan(classify(four_ranks()), tried=[("40", "exclude_suspect")])
    assert p.needs_human and p.rung == "escalate" and not p.acts


def test_a_gpu_fault_drains_the_suspect_node():
    p = hang_plan(classify(four_ranks(kernel=XID_79)))
    assert p.rung == "drain_and_exclude" and p.drain == "gpu-02"


def test_unknown_resubmits_with_the_debug_settings_and_no_exclusion():
    p = hang_plan(classify(four_ranks(straggler="pyspy-dump1.txt")))
    assert p.rung == "resubmit_debug" and p.exclude == []
    assert not any(a.startswith("--exclude") for a in p.sbatch_args)
    assert p.env["NCCL_DEBUG"] == "INFO"


def test_not_running_is_not_a_verdict_any_ladder_acts_on():
    from runbook.hang_diagnosis import HangDiagnosis

    p = hang_plan(HangDiagnosis(verdict="not_running"))
    assert not p.acts and "report only" in p.why


def test_a_malformed_hang_playbook_is_a_config_error_naming_it(tmp_path):
    text = Path(load_hang().path).read_text().replace("NCCL_DEBUG:", "1NCCL DEBUG:")
    (tmp_path / "hang.yaml").write_text(text)
    with pytest.raises(ConfigError, match="hang.yaml"):
        load_hang(str(tmp_path))


def test_the_capture_is_one_command_with_every_untrusted_value_an_argument():
    site = SiteConfig()
    argv = stacks.capture_argv("123", site.probes, site.hang, "0")
    assert argv[:2] == ["sh", "-c"] and "123" in argv[4:]
    assert "123" not in argv[2]  # the job id is never spliced into the script
    assert argv[5] == "py-spy" and argv[6] == ""  # no sudo unless the site says so


def test_recorded_captures_of_the_test_cluster_name_the_hung_rank():
    """The whole output of the capture's one exec on each node of a real hung job on the test
    cluster (tests/data/hang/SOURCES.md), through the real section parser."""
    from runbook.evidence.gpu_health import split_sections

    caps = {
        n: stacks.capture_from_sections(n, split_sections(recorded(f"capture-{n}.txt")))
        for n in ("gpu-01", "gpu-02")
    }
    assert sorted(r.rank for c in caps.values() for r in c.ranks) == [0, 1, 2, 3]
    # the batch script (slurm_script) is task 0 of the batch step: never a rank, never "unread"
    assert not any(k.startswith("pid ") for c in caps.values() for k in c.unavailable)
    d = classify(caps)
    assert d.verdict == "straggler_rank"
    assert [(s["rank"], s["node"]) for s in d.suspects] == [(3, "gpu-02")]
    # the stand-ins were told nothing: node health is unknown, and said to be
    assert any("ecc" in u for u in d.unknown)


# -- the sweep's stall check ---------------------------------------------------------------------
def stall_site(minutes: float):
    import dataclasses

    site = SiteConfig()
    return dataclasses.replace(site, hang=dataclasses.replace(site.hang, stall_minutes=minutes))


def job_logs(raw: str, step: int | None, quiet_s: float | None = None):
    from runbook.evidence.collect import JobLogs
    from runbook.evidence.launcher_log import LaunchReport

    return JobLogs(LaunchReport(), step + 1 if step is not None else None, [], raw, quiet_s)


RUNNING = SimpleNamespace(job_id="77", state="RUNNING")


def test_a_step_that_stands_still_across_sweeps_is_a_stall(tmp_path):
    from runbook import state
    from runbook.sweep import stalled

    conn = state.open_db(tmp_path / "runbook.db")
    site = stall_site(10)
    logs = job_logs("0: step 5/10 loss 0.2", 5, quiet_s=3600)
    assert stalled(site, conn, RUNNING, logs, now=1000.0) is None  # first seen: 0 s
    assert stalled(site, conn, RUNNING, logs, now=1000.0 + 9 * 60) is None
    why = stalled(site, conn, RUNNING, logs, now=1000.0 + 11 * 60)
    assert why is not None and "still step 5" in why
    moved = job_logs("0: step 6/10", 6)
    assert stalled(site, conn, RUNNING, moved, now=1000.0 + 12 * 60) is None  # progress resets


def test_without_steps_the_logs_age_decides_and_zero_minutes_never_looks(tmp_path):
    from runbook import state
    from runbook.sweep import stalled

    conn = state.open_db(tmp_path / "runbook.db")
    assert stalled(stall_site(10), conn, RUNNING, job_logs("", None, 601), 0.0) is not None
    assert stalled(stall_site(10), conn, RUNNING, job_logs("", None, 599), 0.0) is None
    assert stalled(stall_site(10), conn, RUNNING, job_logs("", None, None), 0.0) is None
    assert stalled(stall_site(0), conn, RUNNING, job_logs("", None, 10**6), 0.0) is None


def test_a_watchdog_timeout_while_the_job_runs_is_a_hang_at_once(tmp_path):
    from runbook import state
    from runbook.sweep import stalled

    conn = state.open_db(tmp_path / "runbook.db")
    # A real log of the shared corpus whose ranks timed out in an all-reduce.
    text = corpus("ops/launcher_logs.jsonl", "launch-diffusers-12422-blocking-wait")
    line = next(ln for ln in text.splitlines() if "Watchdog caught" in ln)
    why = stalled(stall_site(30), conn, RUNNING, job_logs(line, 40), 0.0)
    assert why is not None and "timed out" in why
    ended = SimpleNamespace(job_id="78", state="FAILED")
    assert stalled(stall_site(30), conn, ended, job_logs(line, 40), 0.0) is None


# -- the flight recorder, served by runbook.instrument (tests/data/hang/SOURCES.md) -------------
def test_a_recorded_flight_record_gives_the_last_collective():
    fr = stacks.parse_flight_record(3, recorded("fr-rank3.json"))
    assert (fr.last_seq, fr.last_op, fr.error) == (2, "gloo:all_reduce", "")
    assert stacks.parse_flight_record(0, recorded("fr-rank0.json")).last_seq == 3
    bad = stacks.parse_flight_record(1, "not json {")
    assert bad.last_seq is None and bad.error.startswith("not JSON")
    old = stacks.parse_flight_record(1, '{"error": "AttributeError: no _dump_fr_trace_json"}')
    assert old.last_seq is None and "AttributeError" in old.error


def with_flight(caps, same_stack=False):
    for cap in caps.values():
        for r in cap.ranks:
            cap.flight[r.rank] = stacks.parse_flight_record(
                r.rank, recorded(f"fr-rank{r.rank}.json")
            )
            if same_stack:  # every rank in all_reduce: only the recorder tells them apart
                r.stack = stacks.parse_pyspy(recorded("pyspy-dump0.txt"))
    return caps


def test_the_flight_recorder_names_the_rank_behind_when_the_stacks_alone_cannot():
    d = classify(with_flight(four_ranks(), same_stack=True))
    assert d.verdict == "straggler_rank"
    assert [(s["rank"], s["node"]) for s in d.suspects] == [(3, "gpu-02")]
    assert "#2" in d.suspects[0]["why"] and "#3" in d.suspects[0]["why"]
    assert d.flight[3]["last_seq"] == 2 and d.flight[0]["last_seq"] == 3
    majority = next(g for g in d.groups if g.majority)
    assert majority.contract()["collective"].startswith("gloo:all_reduce #3")


def test_a_flight_record_read_for_some_ranks_only_does_not_split_the_majority():
    # The CI case: the recorder answered for ranks 1 and 3 only. Rank 1 waits in all_reduce like
    # ranks 0 and 2; its record alone must not set it apart (which made two outliers, "not one
    # straggler", and verdict unknown).
    caps = with_flight(four_ranks())
    for cap in caps.values():
        for rank in [r.rank for r in cap.ranks if r.rank in (0, 2)]:
            del cap.flight[rank]
    d = classify(caps)
    assert d.verdict == "straggler_rank", d.reasons
    assert [(s["rank"], s["node"]) for s in d.suspects] == [(3, "gpu-02")]
    assert any("flight recorder: read for ranks 1, 3 of 4 only" in u for u in d.unknown)


def test_a_refused_py_spy_says_what_to_grant():
    sec = sections_for("gpu-01", {16724: "pyspy-err_perm.txt"}, listpids([(16724, 0)]))
    cap = stacks.capture_from_sections("gpu-01", sec)
    why = cap.unavailable["pid 16724"]
    assert "Permission Denied" in why and "[hang] sudo = true" in why
    d = classify({"gpu-01": cap}, world=1)
    assert d.verdict == "unknown" and d.ranks_seen == 0
