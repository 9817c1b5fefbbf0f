"""Slurm's text outputs, read as pure functions: sacct in any shape and `scontrol show job`.

sacct: fixed width with a dashed header rule (values cut to the column width end in `+`), or
`--parsable2` (`|`), with or without a header, or one bare column. scontrol: `Key=Value` pairs, one
line (`-o`) or many; `Reason=` may run to the end of its line with spaces.
"""

from __future__ import annotations

import re
from dataclasses import field

from runbook.errors import InputError
from runbook.evidence.framing import ANSI_RE, FENCE_RE, first_quote_marker
from runbook.lazyre import lazy
from runbook.record import record
from runbook.slurm.hostlist import expand

JOB_STATES = [
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "COMPLETING",
    "CONFIGURING",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PENDING",
    "PREEMPTED",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "RESIZING",
    "RESV_DEL_HOLD",
    "REVOKED",
    "RUNNING",
    "SIGNALING",
    "SPECIAL_EXIT",
    "STAGE_OUT",
    "STOPPED",
    "SUSPENDED",
    "TIMEOUT",
]

_EXIT_RE = lazy(r"^-?\d{1,18}(?!\d):-?\d{1,18}(?!\d)$")
_JOBID_RE = lazy(
    r"^\d{1,18}(?!\d)(?:_\d{1,18}(?!\d)|_\[[^\]]*\])?(?:\+\d{1,18}(?!\d))?(?:\.[\w+]+)?\+?$|^[\w\[\]-]+\.(?:bat|ext)\+$"
)
_HEADER_NAMES = {
    "jobid": "jobid",
    "jobidraw": "jobid",
    "state": "state",
    "exitcode": "exit_code",
    "nodelist": "nodes",
    "jobname": "name",
    "user": "user",
    "partition": "partition",
    "account": "account",
    "alloccpus": "alloc_cpus",
    "start": "start",
    "end": "end",
    "elapsed": "elapsed",
    "comment": "comment",
    "derivedexitcode": "derived_exit_code",
    "workdir": "work_dir",
    "nnodes": "nnodes",
    "ntasks": "ntasks",
    "reqtres": "req_tres",
    "alloctres": "alloc_tres",
    "maxrss": "max_rss",
    "submit": "submit",
    "timelimit": "timelimit",
}


def expand_state(value: str) -> str:
    """`OUT_OF_ME+` -> OUT_OF_MEMORY, `CANCELLED by 0` -> CANCELLED."""
    v = value.strip().split(" ")[0]
    if v.endswith("+"):
        stem = v[:-1]
        matches = [s for s in JOB_STATES if s.startswith(stem)]
        return matches[0] if len(matches) == 1 else v
    return v


def _is_state(value: str) -> bool:
    v = value.strip().split(" ")[0]
    return v in JOB_STATES or (v.endswith("+") and any(s.startswith(v[:-1]) for s in JOB_STATES))


@record
class SlurmJobText:
    """A job's record read from pasted sacct or scontrol text."""

    format: str  # sacct-fixed | sacct-parsable | sacct-column | scontrol
    job_id: str | None = None
    state: str | None = None
    exit_code: str | None = None
    nodes: list[str] | None = None
    reason: str | None = None
    fields: dict[str, str] = field(default_factory=dict)  # scontrol: every Key=Value
    rows: list[dict[str, str]] = field(default_factory=list)  # sacct: every row, steps included
    jobs: list[dict[str, str]] = field(default_factory=list)  # sacct: one row per job (no steps)
    # sacct: the first step that failed or was ended by a signal (its id, name, state, exit code)
    # where the allocation itself reads COMPLETED: a step's end the job's own state hides.
    failed_step: dict[str, str] | None = None

    def contract(self) -> dict:
        out = {
            "job_id": self.job_id,
            "state": self.state,
            "exit_code": self.exit_code,
            "nodes": self.nodes,
        }
        return {**out, "failed_step": self.failed_step} if self.failed_step else out

    def step_said(self) -> str | None:
        """The failed step in words, its signal named: `step 8812.0 (python) ended FAILED with
        exit code 0:10: signal 10 (SIGUSR1)`."""
        st = self.failed_step
        if not st:
            return None
        name = f" ({st['name']})" if st.get("name") else ""
        code = st.get("exit_code") or ""
        said = f"step {st.get('jobid')}{name} ended {st.get('state') or 'with'}"
        if code:
            said += f" with exit code {code}"
        sig = signal_of(code)
        return said + (f": signal {sig[0]} ({sig[1]})" if sig else "")


def signal_of(code: str) -> tuple[int, str] | None:
    """(number, name) of the signal in Slurm's `exit:signal` code, or None (no signal)."""
    import signal

    _, _, sig = (code or "").partition(":")
    if not sig.isdigit() or int(sig) == 0:
        return None
    try:
        return int(sig), signal.Signals(int(sig)).name
    except ValueError:
        return int(sig), "an unknown signal"


# States a step ends in that are no clean end.
_STEP_FAILED = {"FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED"}


def _failed_step(rows: list[dict[str, str]]) -> dict[str, str] | None:
    for r in rows:
        if not _is_step(r.get("jobid", ""), r.get("name")):
            continue
        state = (r.get("state") or "").split()[0] if r.get("state") else ""
        code = r.get("exit_code") or ""
        if state in _STEP_FAILED or (code and code != "0:0"):
            return {k: r.get(k) or "" for k in ("jobid", "name", "state", "exit_code")}
    return None


def _is_step(jobid: str, name: str | None = None) -> bool:
    # A width-truncated step id ("123.bat+", "2681683_420+") hides its ".batch": the name says it.
    return "." in jobid or (jobid.endswith("+") and name in {"batch", "extern"})


def _finish(fmt: str, rows: list[dict[str, str]]) -> SlurmJobText:
    for r in rows:
        if "state" in r:
            r["state"] = expand_state(r["state"])
    jobs = [r for r in rows if not _is_step(r.get("jobid", ""), r.get("name"))]
    out = SlurmJobText(format=fmt, rows=rows, jobs=jobs)
    if rows and "jobid" not in rows[0]:
        # No job id column: sacct prints the job first, then its steps (.batch, .extern, .0).
        out.state, out.exit_code = rows[0].get("state"), rows[0].get("exit_code")
        return out
    ids = list(dict.fromkeys(r["jobid"] for r in jobs if r.get("jobid")))
    if len(ids) > 1:
        return out  # several jobs: a list, not one verdict
    main = jobs[-1] if jobs else (rows[0] if rows else {})  # the last row is the final state
    out.job_id = main.get("jobid")
    out.state = main.get("state")
    out.exit_code = main.get("exit_code")
    if (out.state or "").startswith("COMPLETED"):
        out.failed_step = _failed_step(rows)
    if main.get("nodes") and main["nodes"] not in {"None assigned", "(null)"}:
        out.nodes = expand(main["nodes"])
    return out


# A fixed-width table's rule line (its indent, if any, is the table's).
_RULE = lazy(r"^(?P<q>[ \t]*)-{3,}(?:[ \t]+-{3,})*[ \t]*$", needs="-")
# A row's first cell: a job id, a step, an array task, a width-truncated id, or a redaction.
_ROW_ID = lazy(r"^[\w\[\]+*.-]+$")


def _fixed_tables(lines: list[str | None]) -> list[list[str]]:
    """Every fixed-width table in a paste: its header, rule and rows. `lines`: the paste's
    non-blank lines, with None where a shell prompt or the person's own words stood. A table
    ends there, at the next table's header, or at a line without the table's indent."""
    tables = []
    for i, line in enumerate(lines):
        if line is None or i == 0 or (m := _RULE.match(line)) is None:
            continue
        header = lines[i - 1]
        if header is None or not header.startswith(m["q"]) or not header.strip():
            continue
        cut = len(m["q"])
        table = [header[cut:], line[cut:]]
        for j in range(i + 1, len(lines)):
            row = lines[j]
            after = lines[j + 1] if j + 1 < len(lines) else None
            if row is None or not row.startswith(m["q"]) or (after and _RULE.match(after)):
                break
            table.append(row[cut:])
        tables.append(table)
    return tables


def _parse_fixed(tables: list[list[str]]) -> SlurmJobText:
    rows = []
    for header, rule, *body in tables:
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
        names = [
            _HEADER_NAMES.get(header[a:b].strip().lower(), header[a:b].strip().lower())
            for a, b in spans
        ]
        cols = _Columns(spans)
        for line in body:
            first = line.split(None, 1)[0] if line.strip() else ""
            if _ROW_ID.match(first):  # not a label or a note written between the rows
                rows.append(_fixed_row(line, cols, names))
    return _finish("sacct-fixed", rows)


class _Columns:
    """A table's column ends, and for every text position the column whose end is nearest (the
    first, on a tie), computed once per table: placing a row's cells is then one lookup per
    cell, whatever the number of columns."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.ends = [b for _, b in spans]
        self.index = {b: i for i, b in enumerate(self.ends)}
        self.shapes: dict[bytes, list[str]] = {}  # a row's shape -> the columns of its cells
        self.near: list[int] = []
        k = 0
        for x in range(self.ends[-1] + 1):
            while k + 1 < len(self.ends) and self.ends[k + 1] - x < x - self.ends[k]:
                k += 1
            self.near.append(k)

    def misfit(self, ends: list[int], shift: int) -> int:
        near, at, last = self.near, self.ends, len(self.near) - 1
        return sum(abs(at[near[min(max(e + shift, 0), last)]] - e - shift) for e in ends)


_CELL = lazy(r"\S+")
# Every byte of an ASCII line to "x", but the characters str.split() separates cells at.
_SHAPE = bytes(32 if chr(b).isspace() else 120 for b in range(256))
_SCONTROL = lazy(r"\b(?:JobId|JobState)=", needs="Job")


def _fixed_row(line: str, cols: _Columns, names: list[str]) -> dict[str, str]:
    """One fixed-width row. Cells can be empty and a pasted row can be shifted (a redacted job
    id), so cells are placed by their right edge (`_place`). Where a cell goes depends only on
    where the row's cells end, so rows of one shape are placed once."""
    texts = line.split()
    if len(texts) == len(names):
        return dict(zip(names, texts, strict=True))
    row = dict.fromkeys(names, "")
    if not texts:
        return row
    # The row's shape: where its cells are, whatever they say (ASCII only, so that a byte is a
    # character and the shape fixes every cell's position).
    shape = line.encode().translate(_SHAPE) if line.isascii() else None
    placed = cols.shapes.get(shape) if shape is not None else None
    if placed is None:
        placed = _place(tuple([m.end() for m in _CELL.finditer(line)]), cols, names)
        if shape is not None and len(cols.shapes) < 1000:  # rows of 1000 shapes: bounded
            cols.shapes[shape] = placed
    row.update(zip(placed, texts, strict=False))
    return row


def _place(ends: tuple[int, ...], cols: _Columns, names: list[str]) -> list[str]:
    """The column of each cell, given where the cells end. sacct left-aligns JobID and
    right-aligns the rest. The row's shift is the one of two that puts its cells' right edges on
    the columns' best: none (empty cells, the last ones included), or its last cell at the last
    column's end (a row shifted whole)."""
    placed = [names[0]]
    rest = list(ends[1:])
    if not rest:
        return placed
    # Most rows: every cell ends where a column ends, the empty ones simply missing.
    exact = [cols.index.get(e, -1) for e in rest]
    if exact[0] > 0 and all(a < b for a, b in zip(exact, exact[1:], strict=False)):
        return placed + [names[k] for k in exact]
    whole = cols.ends[-1] - ends[-1]
    shift = 0 if whole == 0 or cols.misfit(rest, 0) <= cols.misfit(rest, whole) else whole
    near, last, col = cols.near, len(cols.near) - 1, 0
    for end in rest:
        if col + 1 >= len(names):
            break
        # Ends are sorted: when the nearest column is before the next free one, that one is.
        col = max(near[min(max(end + shift, 0), last)], col + 1)
        placed.append(names[col])
    return placed


def _parse_parsable(lines: list[str]) -> SlurmJobText:
    first = [c.strip().lower() for c in lines[0].split("|")]
    if any(first) and all(c in _HEADER_NAMES for c in first if c):
        names = [_HEADER_NAMES.get(c, f"col{i}") for i, c in enumerate(first)]
        body = lines[1:]
    else:
        names = _infer_columns(lines)
        body = lines
    if "state" not in names and "jobid" not in names:
        raise InputError(
            f"'|'-separated text without a job id or state column (first line: {lines[0][:80]!r})",
            hint="give `sacct -P -o JobID,State,ExitCode,NodeList -j ID`",
        )
    rows = []
    for line in body:
        cells = line.split("|")
        rows.append({n: c.strip() for n, c in zip(names, cells, strict=False) if n})
    return _finish("sacct-parsable", rows)


def _infer_columns(lines: list[str]) -> list[str]:
    """Headerless --parsable2 (`-n`): name columns by what they hold."""
    cells = [line.split("|") for line in lines]
    width = max(len(c) for c in cells)
    names = []
    for i in range(width):
        col = [c[i].strip() for c in cells if i < len(c) and c[i].strip()]
        if col and all(_is_state(v) for v in col):
            names.append("state")
        elif col and all(_EXIT_RE.match(v) for v in col):
            names.append("exit_code" if "exit_code" not in names else "derived_exit_code")
        elif i == 0 and col and all(_JOBID_RE.match(v) for v in col):
            names.append("jobid")
        else:
            names.append(f"col{i}")
    return names


# `scontrol show job` values a user writes (names, paths, comments) may hold spaces and "=". In the
# multi-line form Slurm prints the job name last on the first line and each of these keys on a
# line of its own; in the one-line form (-o) each is followed by the same next keys, in Slurm's
# fixed order, so a value runs to the first of its successors, never to any "word=".
_TAIL = (
    "Command",
    "WorkDir",
    "AdminComment",
    "Comment",
    "StdErr",
    "StdIn",
    "StdOut",
    "Power",
    "TresPerNode",
    "TresPerTask",
    "MailUser",
    "MailType",
    "CpusPerTres",
    "MemPerTres",
    "NtasksPerTRES",
    "Container",
    "ContainerID",
    "OOMKillStep",
)
_FREE_TEXT = {"JobName": ("UserId",)} | {
    key: _TAIL[i + 1 :]
    for i, key in enumerate(_TAIL[:7])  # Command .. StdOut
}
_KEY = r"[A-Za-z][\w/:]*"
_PAIR = lazy(r"(?:^|\s)(" + _KEY + r")=(.*?)(?=\s+" + _KEY + r"=|$)")


def scontrol_records(text: str) -> list[dict[str, str]]:
    """Every job in `scontrol show job` output, multi-line or one-line (-o), as key -> value,
    read by Slurm's structure, not by splitting on spaces. In the multi-line form (what runbook
    itself asks for) a name or comment cannot pose as another field: the job name is the rest of
    the first line, and Command, WorkDir, Comment, StdErr, StdIn and StdOut are whole lines. The
    one-line form is ambiguous by nature; there a free-text value runs to the first key Slurm
    prints after it (_FREE_TEXT)."""
    lines = [ln for ln in text.replace("\r", "").split("\n") if ln.strip()]
    multi = any(ln[:1] in (" ", "\t") for ln in lines)
    records: list[dict[str, str]] = []
    for raw in lines:
        if raw.startswith("JobId=") or not records:  # a paste may start past the JobId line
            records.append({})
        line = raw.strip(" \t")
        key = line.partition("=")[0]
        if multi and key in _FREE_TEXT and key != "JobName":
            records[-1].setdefault(key, line[len(key) + 1 :].rstrip(" "))
        elif multi and line.startswith("JobId=") and (i := line.find(" JobName=")) >= 0:
            _scontrol_line(line[:i], records[-1])
            records[-1].setdefault("JobName", line[i + len(" JobName=") :])
        else:
            _scontrol_line(line, records[-1])
    return records


def key_values(line: str) -> dict[str, str]:
    """A line of Key=value pairs whose values hold no user text (`scontrol -o show node`): a
    value runs to the next " Key=" (Reason= with spaces included)."""
    return {m.group(1): m.group(2).strip() for m in _PAIR.finditer(line)}


def _scontrol_line(line: str, fields: dict[str, str]) -> None:
    rest = line
    while rest:
        m = re.match(r"(" + _KEY + r")=", rest)
        if not m:
            return
        key = m.group(1)
        body = rest[m.end() :]
        # The nearest key in Slurm's order that is there at all ends the value (so a comment
        # holding " StdOut=..." ends at the real StdErr that follows it).
        ends = [i for nxt in _FREE_TEXT.get(key, ()) if (i := body.find(f" {nxt}=")) >= 0][:1]
        if ends or (key in _FREE_TEXT and "=" not in body):
            cut = ends[0] if ends else len(body)
            fields.setdefault(key, body[:cut].rstrip(" ") if key != "JobName" else body[:cut])
            rest = body[cut:].lstrip(" ")
            continue
        pm = _PAIR.match(rest)
        if pm is None:
            return
        fields.setdefault(pm.group(1), pm.group(2).strip())
        rest = rest[pm.end() :].lstrip(" ")


def _parse_scontrol(text: str) -> SlurmJobText:
    records = scontrol_records(text) or [{}]
    fields = records[0]
    out = SlurmJobText(format="scontrol", fields=fields)
    out.job_id = fields.get("JobId")
    out.state = fields.get("JobState")
    out.exit_code = fields.get("ExitCode")
    out.reason = fields.get("Reason")
    nodes = fields.get("NodeList")
    if nodes and nodes != "(null)":
        out.nodes = expand(nodes)
    return out


# What a person pastes around the output: the prompt and the command line that made it
# ("user@login01:~$ sacct -P -j 12", "[me@login ~]$ scontrol show job 12", "# sacct ..."), and a
# bare prompt after it.
_PROMPT = r"(?:\[[^\]|\n]{0,120}\]|[^\s|]{0,120})[$#%>]"
_COMMAND_LINE = lazy(
    r"^\s*(?:" + _PROMPT + r"\s*)?(?:sudo\s+)?(?:sacct|scontrol|squeue|sinfo|seff|sshare)(?=\s|$)"
)
_BARE_PROMPT = lazy(r"^\s*" + _PROMPT + r"\s*$")


def _pasted_shell(line: str) -> bool:
    s = line.strip()
    return s.startswith("$ ") or bool(_COMMAND_LINE.match(s) or _BARE_PROMPT.match(s))


def parse(text: str, *, source: str = "input") -> SlurmJobText:
    """Read sacct or scontrol output. Raises InputError naming `source` when it is neither."""
    text = ANSI_RE.sub("", text).replace("\r", "")
    return _unquoted([ln.rstrip() for ln in text.splitlines() if ln.strip()], source)


def _unquoted(lines: list[str | None], source: str, depth: int = 0) -> SlurmJobText:
    """Output quoted line by line ("> ", a mail or forum quote, perhaps a quote of a quote)
    among the person's own words: the quoted lines are the output, the others end a table. When
    they are not (a quoted question above the output), the lines are read as they are."""
    q = first_quote_marker(lines)
    if q and depth < 4:
        quoted = [ln[len(q) :] if ln is not None and ln.startswith(q) else None for ln in lines]
        try:
            return _unquoted(quoted, source, depth + 1)
        except InputError:
            pass
    return _parse_lines([_unless_shell(ln) for ln in lines], source)


def _unless_shell(line: str | None) -> str | None:
    """None for what the person added: a prompt, a command line, a code fence."""
    return None if line is None or _pasted_shell(line) or FENCE_RE.match(line) else line


def _parse_lines(marked: list[str | None], source: str) -> SlurmJobText:
    """`marked`: the paste's non-blank lines, None where a shell prompt or a line of the
    person's own words stood."""
    lines = [ln for ln in marked if ln is not None]
    if not lines:
        raise InputError(f"{source}: empty, expected sacct or scontrol output")
    errors = [ln for ln in lines if re.match(r"^\s*(sacct|scontrol|slurm_\w+):\s*error", ln)]
    if errors and len(errors) == len(lines):
        raise InputError(
            f"{source}: Slurm reported an error, not job data: {errors[0].strip()}",
            hint="accounting may be down (slurmdbd unreachable); `sacctmgr ping` tells",
        )
    joined = "\n".join(lines)
    if ("JobId=" in joined or "JobState=" in joined) and _SCONTROL.search(joined):
        return _parse_scontrol(joined)
    if tables := _fixed_tables(marked):
        return _parse_fixed(tables)
    if any("|" in ln for ln in lines):
        return _parse_parsable(lines)
    if all(_is_state(ln) for ln in lines):
        return _finish("sacct-column", [{"state": ln.strip()} for ln in lines])
    raise InputError(
        f"{source}: not sacct or scontrol output (first line: {lines[0][:80]!r})",
        hint="give `sacct -P -o JobID,State,ExitCode,NodeList -j ID` or `scontrol show job ID`",
    )
