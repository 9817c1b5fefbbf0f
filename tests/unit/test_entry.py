"""The process entry point (runbook.entry): the garbage collector paused for start-up only.

A collector left off would leak every reference cycle of a long verb (`hook serve`, `oom` on a
big job); these check, in a process of its own, that each verb runs with it on, that a library
import of runbook.cli never touches it, and that the exit is still a normal one."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from runbook.cli import _collector_paused


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_verb_runs_with_the_collector_on_and_the_exit_runs_atexit_and_flushes():
    # The verb's own work (here a stand-in for cli.main) sees the collector on; at exit the
    # surviving objects are frozen, and atexit handlers and buffered output still happen.
    r = _python(
        "import atexit, gc, sys\n"
        "import runbook.cli as c\n"
        "def verb():\n"
        "    print('collector on during the verb:', gc.isenabled())\n"
        "    atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "    sys.stdout.write('buffered, not flushed')\n"
        "    raise SystemExit(7)\n"
        "c.main = verb\n"
        "from runbook.entry import main\n"
        "main()\n"
    )
    assert r.returncode == 7, r.stderr
    assert "collector on during the verb: True" in r.stdout
    assert "buffered, not flushed" in r.stdout
    assert "frozen at exit: True" in r.stdout


def test_python_m_runbook_goes_through_the_entry_point():
    r = _python(
        "import atexit, gc, runpy, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "sys.argv = ['runbook', '--help']\n"
        "runpy.run_module('runbook', run_name='__main__')\n"
    )
    assert r.returncode == 0, r.stderr
    assert "Usage: runbook" in r.stdout and "frozen at exit: True" in r.stdout


@pytest.mark.parametrize("on", [True, False])
def test_the_collector_is_as_it_was_after_a_pause_even_one_that_raised(on):
    was = gc.isenabled()
    try:
        gc.enable() if on else gc.disable()
        with _collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is on
        with pytest.raises(ImportError), _collector_paused():
            raise ImportError("a verb's module failed to load")
        assert gc.isenabled() is on
    finally:
        gc.enable() if was else gc.disable()


def test_loading_a_verb_in_a_library_process_leaves_the_collector_on():
    from runbook.cli import cli

    assert gc.isenabled()
    assert cli.get_command(None, "stats") is not None  # type: ignore[arg-type]
    assert gc.isenabled()
