"""Stand-in for nvidia-smi and the kernel log on a test node, which has no GPU.

It prints a *recorded real output* chosen by the node's scenario file, and refuses (exit 97, a
message on stderr) any invocation the scenario does not list, so a probe that asks for something
the test did not plan for fails loudly instead of reading made-up text.

Scenario file: <state>/scenario/<node>.json, written by the tests (tests/cluster/scenario.py):
    {"commands": [{"tool": "nvidia-smi", "argv": ["-q", "-d", "ROW_REMAPPER,ECC"],
                   "stdout": "<recorded text>", "stderr": "", "exit": 0,
                   "source": "where the recording comes from"}]}
Every call is appended to <state>/calls/<node>.jsonl so tests can count probe round trips.
"""

import json
import os
import socket
import sys
import time

REFUSED = 97


def main() -> int:
    state, tool, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    node = socket.gethostname()
    path = os.path.join(state, "scenario", f"{node}.json")
    try:
        with open(path, encoding="utf-8") as f:
            commands = json.load(f).get("commands", [])
    except FileNotFoundError:
        commands = []
    match = next((c for c in commands if c.get("tool") == tool and c.get("argv") == args), None)
    _record(state, node, tool, args, match is not None)
    if match is None:
        expected = [" ".join([c.get("tool", "?"), *c.get("argv", [])]) for c in commands]
        sys.stderr.write(
            f"test-cluster stand-in on {node}: not told to expect `{' '.join([tool, *args])}`"
            f" (scenario {path}; expected: {expected or 'nothing'})\n"
        )
        return REFUSED
    # A slow answer, as a node under load gives one (a test needs a step that takes a while).
    time.sleep(float(match.get("delay_s", 0)))
    sys.stdout.write(match.get("stdout", ""))
    sys.stderr.write(match.get("stderr", ""))
    return int(match.get("exit", 0))


def _record(state: str, node: str, tool: str, args: list[str], matched: bool) -> None:
    calls = os.path.join(state, "calls")
    try:
        os.makedirs(calls, mode=0o1777, exist_ok=True)
        line = {
            "t": time.time(),
            "tool": tool,
            "argv": args,
            "matched": matched,
            "uid": os.getuid(),
        }
        with open(os.path.join(calls, f"{node}.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
    except OSError:
        pass  # counting calls is a test aid; never let it change what the stand-in prints


if __name__ == "__main__":
    sys.exit(main())
