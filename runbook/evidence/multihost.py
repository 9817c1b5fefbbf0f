"""Output collected over several nodes, split back into one part per host.

On-call collects node outputs with parallel shells, and each tool frames them its own way:
- pdsh and `clush` (unbuffered) prefix every line: `gpu-01: <line>`;
- `clush -b` gathers identical outputs under a header between rules: `-----\\ngpu-[01-02] (2)\\n-----`,
  and a node alone under its bare name (`-----\\ngpu-01\\n-----`); pdsh's `dshbak` writes the
  same rules around a bare name, and `dshbak -c` around a folded set with no count
  (`gpu-[01,03]`), as captured from the real tools (tests/data/corpus/ops/multihost.jsonl);
- scripts and people write a header per host: `== gpu-01 ==`, `==> gpu-01 <==` (tail), `### gpu-01`;
- ansible ad-hoc: `gpu-01 | CHANGED | rc=0 >>`.
A parser that sees the framing as data rejects the whole input; one that ignores it mixes the
nodes. This module takes the framing off and keeps each host's lines apart, so each part is parsed
as the single-node output it is. Pure functions of text.
"""

from __future__ import annotations

import re

_HOST = r"[A-Za-z0-9][\w.\-\[\],]*"
_HEADERS = [
    re.compile(r"^\s*={2,}>?\s*(?P<host>" + _HOST + r")\s*<?={2,}\s*$"),  # == h ==, ==> h <==
    re.compile(r"^\s*#{2,}\s*(?P<host>" + _HOST + r")\s*#*\s*$"),  # ### h
    re.compile(r"^(?P<host>" + _HOST + r") \| [A-Z]+ \| rc=-?\d{1,9} >>\s*$"),  # ansible
]
_RULE = re.compile(r"^\s*-{6,}\s*$")
# Between two rules: a node or folded node set, with clush's count `(N)` when it gathers several.
_CLUSH_HOSTS = re.compile(r"^\s*(?P<host>" + _HOST + r")(?:\s+(?P<count>\(\d{1,9}\)))?\s*$")
# pdsh/clush line prefix. A colon and one space after a bare name: `Process ID : 1` (space
# before the colon), `| 0 ...` and CSV rows do not match.
_PREFIX = re.compile(r"^(?P<host>[A-Za-z][\w.\-]{0,62}): (?P<rest>.*)$")
# Words that end in ": " in single-node outputs and are not hosts.
_NOT_HOSTS = {"warning", "error", "note", "info", "debug", "timestamp", "gpu", "nvrm", "kernel"}


# The shells' own word about a node, on stderr, which a paste of `2>&1` interleaves with the
# output: pdsh's `pdsh@login01: gpu-09: ssh exited with exit code 255`, clush's `clush: gpu-09:
# exited with exit code 255` (captured from both: tests/cluster/parallel_shells.py). `dshbak`
# gathers pdsh's under a header of their own, `pdsh@login01`, as `gpu-09: ssh exited ...`.
_TOOL = re.compile(r"^\s*(?:pdsh@[\w.\-]+|clush): (?P<host>" + _HOST + r"): (?P<why>\S.*)$")
_TOOL_HEADER = re.compile(r"^\s*pdsh@[\w.\-]+\s*$")
_HOST_SAYS = re.compile(r"^\s*(?P<host>" + _HOST + r"): (?P<why>\S.*)$")


def split(text: str) -> list[tuple[str | None, str]]:
    """[(host, text)] in input order; one (None, text) when the input has no per-host framing.
    The shells' own messages (`tool_messages`) are not any node's output and are left out."""
    lines, _ = _without_tool_messages((text or "").splitlines())
    parts = _by_headers(lines)
    if parts is not None:
        return parts
    parts = _by_prefix(lines)
    if parts is not None:
        return parts
    return [(None, text or "")]


def tool_messages(text: str) -> dict[str, str]:
    """{node: what pdsh or clush said of it} (`ssh exited with exit code 255`): a node named
    here gave no output, or not all of it, so its health from this paste is unknown."""
    return _without_tool_messages((text or "").splitlines())[1]


def _without_tool_messages(lines: list[str]) -> tuple[list[str], dict[str, str]]:
    kept: list[str] = []
    said: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _TOOL.match(line):
            said.setdefault(m.group("host"), m.group("why").strip())
            i += 1
            continue
        if (
            _RULE.match(line)
            and i + 2 < len(lines)
            and _TOOL_HEADER.match(lines[i + 1])
            and _RULE.match(lines[i + 2])
        ):
            # dshbak's block of pdsh's own messages: up to the next header's rule.
            i += 3
            while i < len(lines) and not _RULE.match(lines[i]):
                if m := _HOST_SAYS.match(lines[i]):
                    said.setdefault(m.group("host"), m.group("why").strip())
                i += 1
            continue
        kept.append(line)
        i += 1
    return kept, said


def _by_headers(lines: list[str]) -> list[tuple[str | None, str]] | None:
    out: list[tuple[str | None, list[str]]] = []
    found = False
    i = 0
    while i < len(lines):
        line = lines[i]
        host = None
        for rx in _HEADERS:
            if m := rx.match(line):
                host = m.group("host")
                break
        if host is None and _RULE.match(line) and i + 2 < len(lines):
            m = _CLUSH_HOSTS.match(lines[i + 1])
            # A bare word between rules is a title in a single-node output unless it looks like
            # a cluster node's name (a number in it) or clush counted it.
            named = m is not None and bool(m.group("count") or re.search(r"\d", m.group("host")))
            if m is not None and named and _RULE.match(lines[i + 2]):
                host, i = m.group("host"), i + 2
        if host is not None:
            found = True
            out.append((host, []))
        elif out:
            out[-1][1].append(line)
        else:
            out.append((None, [line]))
        i += 1
    if not found:
        return None
    return [
        (h, "\n".join(body)) for h, body in out if h is not None or any(s.strip() for s in body)
    ]


def _by_prefix(lines: list[str]) -> list[tuple[str | None, str]] | None:
    """Every non-empty line prefixed `host: ` (pdsh, clush): the lines regrouped per host, in the
    order the hosts first appear (parallel shells interleave the nodes' lines)."""
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return None
    hosts: dict[str, list[str]] = {}
    for ln in body:
        m = _PREFIX.match(ln)
        if m is None or m.group("host").lower() in _NOT_HOSTS:
            return None
        hosts.setdefault(m.group("host"), []).append(m.group("rest"))
    return [(h, "\n".join(rest)) for h, rest in hosts.items()]
