"""The process's entry point: the `runbook` console script and `python -m runbook`.

What is here belongs to a process that starts, runs one verb and exits, never to a library
import of runbook (tests, runbook.instrument inside a training job), so it is kept out of
runbook.cli.

The garbage collector: start-up creates tens of thousands of objects that live until exit
(modules, functions, classes, click's option objects), none of them garbage. CPython still runs
a collection every 700 allocations over them, and at exit one more over everything; both are
work without a result. `bench/startup.py` measured them at about a sixth of `runbook diagnose`'s
start-up over `import click` on Python 3.10 (GC paused for the imports: -4 ms; the objects frozen
at exit: -6 ms of a 58 ms run). So the collector is paused while click and the root group load
(runbook.cli pauses it again for a verb's own modules) and is on for every verb's own work; at
exit the surviving objects are frozen (gc.freeze), so the final collection skips what only the
end of the process frees; a verb's own modules are frozen once loaded too (runbook.cli:
ONE_PROCESS_ONE_VERB), so the verb's collections scan only what the verb makes. Objects in reference cycles are then not finalized at exit, which
CPython never promised either: files are closed by `with`, temporary folders by atexit, and the
standard streams are flushed by the interpreter as before.
"""

from __future__ import annotations

import gc


def main() -> None:
    gc.disable()
    try:
        from runbook import cli

        cli.ONE_PROCESS_ONE_VERB = True
        run = cli.main
    finally:
        gc.enable()
    try:
        run()
    finally:
        gc.freeze()
