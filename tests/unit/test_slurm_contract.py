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
    calls = []

    class Submitter:
        def known_jobs(self):
            calls.append("known_jobs")
            return []

        def batch_scripts(self, ids):
            calls.append(("batch_scripts", ids))
            return {}

        def find_lineage(self, parent, rung, since):
            calls.append(("find_lineage", parent, rung))
            return []

    b = PyslurmBackend.__new__(PyslurmBackend)  # without loading pyslurm
    b.submitter = Submitter()
    assert b.known_jobs() == [] and b.batch_scripts(["1"]) == {}
    assert b.find_lineage("7", "halve_micro_batch", datetime.now()) == []
    assert calls == [
        "known_jobs",
        ("batch_scripts", ["1"]),
        ("find_lineage", "7", "halve_micro_batch"),
    ]


def test_a_window_of_finished_jobs_ends_past_now_unless_told():
    """A job that ended in the very second of the query, or by a controller clock running ahead
    of this host's, must fall inside the sweep's window."""
    from datetime import datetime, timedelta

    from runbook.slurm.client import window_end

    before = datetime.now()
    assert window_end(None) >= before + timedelta(minutes=4)
    given = datetime(2026, 1, 2, 3, 4, 5)
    assert window_end(given) == given
