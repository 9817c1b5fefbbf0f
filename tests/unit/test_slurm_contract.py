"""`SlurmClient` is the real contract: every backend class has every method of the protocol with a
compatible signature, read from the classes themselves (pyslurm itself need not load here); and
the pyslurm backend's delegated reads really go to its submitter."""

from __future__ import annotations

import inspect
from datetime import datetime

import pytest

from runbook.slurm.cli_backend import CliSlurm
from runbook.slurm.client import SlurmClient
from runbook.slurm.pyslurm_backend import PyslurmBackend

PROTOCOL = {
    name: fn for name, fn in vars(SlurmClient).items() if callable(fn) and not name.startswith("_")
}


def test_protocol_names_what_the_code_calls():
    assert {
        "job",
        "failed_jobs",
        "known_jobs",
        "batch_script",
        "batch_scripts",
        "node_state",
        "find_lineage",
        "cancel",
        "drain",
        "submit",
        "cancel_argv",
        "drain_argv",
        "submit_argv",
        "ping",
        "version",
    } <= set(PROTOCOL)


@pytest.mark.parametrize("backend", [CliSlurm, PyslurmBackend])
@pytest.mark.parametrize("method", sorted(PROTOCOL))
def test_backend_implements(backend, method):
    impl = getattr(backend, method, None)
    assert impl is not None, f"{backend.__name__} lacks {method}"
    want = [p for p in inspect.signature(PROTOCOL[method]).parameters if p != "self"]
    got = [p for p in inspect.signature(impl).parameters if p != "self"]
    assert got[: len(want)] == want, (backend.__name__, method, got, want)


def test_pyslurm_backend_delegates_what_pyslurm_does_not_carry():
    """Submission, and a task of an array or a het job's component by its own id, go to the
    commands (runbook config show names them); everything else is pyslurm's, checked on the
    real cluster by tests/integration/test_slurm_backends.py."""
    calls = []

    class Submitter:
        def __getattr__(self, name):
            def record(*args):
                calls.append((name, *args))
                return [] if name == "known_jobs" else {} if name == "batch_scripts" else "ok"

            return record

    b = PyslurmBackend.__new__(PyslurmBackend)  # without loading pyslurm
    b.submitter = Submitter()
    b.job("41_3")
    b.job("41+1")
    b.cancel("41_3")
    b.batch_scripts(["41_3"])
    b.submit("/tmp/x.sbatch", ["--nodes=2"], {})
    assert [c[0] for c in calls] == ["job", "job", "cancel", "batch_scripts", "submit"]


def test_a_window_of_finished_jobs_ends_past_now_unless_told():
    """A job that ended in the very second of the query, or by a controller clock running ahead
    of this host's, must fall inside the sweep's window."""
    from datetime import timedelta

    from runbook.slurm.client import window_end

    before = datetime.now()
    assert window_end(None) >= before + timedelta(minutes=4)
    given = datetime(2026, 1, 2, 3, 4, 5)
    assert window_end(given) == given
