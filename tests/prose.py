"""What a person reads, checked as text: no Python repr, no unit that contradicts its label, no
sentence said twice. Quoted material (the job's own log lines and code: `...` spans, fenced
blocks, traceback frames) is data and is left out of the check."""

from __future__ import annotations

import re

_QUOTED = re.compile(r"`[^`\n]*`|```.*?```|<pre>.*?</pre>|<code>.*?</code>", re.S)
_FRAME = re.compile(
    r"^\s+\S+:\d+ in \S+: "
)  # a traceback frame, as diagnose and the report list it
_REPRS = {
    "a Python list": re.compile(r"\[\d+(?:, \d+)*\]|\['"),
    "a Python dict": re.compile(r"\{'|'\w+': "),
    "a Python bool or None as a value": re.compile(r"(?<![=:\w/.-])(?:True|False|None)\b(?![=:])"),
}
# "rank(s)", "node(s)": a count said as a person would not (issue 55).
_EITHER = re.compile(r"\w\(s\)")
# A verdict's id inside a sentence ("gpu_fault and co_tenant cannot be ruled out"): the words
# are runbook.words.VERDICT_WORDS'. Ids in backticks, tables' id cells and headings are names.
_IDS = re.compile(r"(?<![\w*`])(?:true_oom|co_tenant|gpu_fault|host_oom|not_oom)(?![\w*`])")
# A label naming one unit, then a figure in the other before the sentence ends.
_UNIT = re.compile(r"\bin MiB\b(?:(?!\.\s)[^\n])*?\d GiB|\bin GiB\b(?:(?!\.\s)[^\n])*?\d MiB", re.I)


def _prose(text: str) -> str:
    kept = [ln for ln in _QUOTED.sub(" ", text).splitlines() if not _FRAME.match(ln)]
    return "\n".join(kept)


def defects(text: str) -> list[str]:
    prose = _prose(text)
    out = []
    for what, pattern in _REPRS.items():
        out += [f"{what}: {m.group(0)!r} in {_around(prose, m)!r}" for m in pattern.finditer(prose)]
    out += [f"unit against its label: {_around(prose, m)!r}" for m in _UNIT.finditer(prose)]
    out += [f"a count with (s): {_around(prose, m)!r}" for m in _EITHER.finditer(prose)]
    out += [
        f"an id in a sentence: {_around(prose, m)!r}"
        for line in prose.splitlines()
        if not line.lstrip().startswith(("|", "#"))  # a table's cells, a heading: names
        for m in _IDS.finditer(line)
        # A value after its label ("verdict: true_oom", "first failure: host_oom") is a name.
        if not re.search(r"(?:verdict|failure|verdicts):\s*$", line[: m.start()])
    ]
    seen: set[str] = set()
    for sentence in re.split(r"(?<=[.])\s+|\n+", prose):
        s = re.sub(r"\s+", " ", sentence).strip(" -*|")
        if len(s) < 30:
            continue
        if s in seen:
            out.append(f"said twice: {s!r}")
        seen.add(s)
    return out


def _around(text: str, m: re.Match) -> str:
    return text[max(m.start() - 40, 0) : m.end() + 40].replace("\n", " ")
