"""Reading a plain job script: where bash runs nothing (comments, here-documents), where a knob
is set (a flag, a shell variable, a key of a config the script writes), the number it holds
(through variables and `${VAR:-N}` defaults), and the edit of it in place; `bash -n`. The rungs
use it; it knows no rung."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile

from runbook.errors import InputError, RungNotApplicable
from runbook.jobfiles.templates import read_header
from runbook.record import record


@record
class Hit:
    name: str
    value: str
    start: int  # offsets of the value in the script text
    end: int


@record(frozen=True)
class Heredoc:
    """A here-document: its body's offsets in the script, the command that reads it, and
    whether bash expands `$VAR` in it (an unquoted delimiter)."""

    start: int
    end: int
    command: str
    expands: bool
    live: bool  # fed to `read`: a variable's value the script then runs


@functools.lru_cache(maxsize=32)  # a pure function of the text; every knob lookup needs it
def _lex(script: str) -> tuple[tuple[tuple[int, int], ...], tuple[Heredoc, ...]]:
    """Comments (an unquoted # that starts a word, to the end of the line; `#SBATCH` directives
    excepted) and here-documents, following quotes and line continuations."""
    spans: list[tuple[int, int]] = []
    docs: list[Heredoc] = []
    i, n = 0, len(script)
    quote = ""
    pending: list[tuple[str, bool, bool, str, bool]] = []  # word, <<-, live, command, expands
    while i < n:
        c = script[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or script[i - 1] in " \t\n;&|()"):
            end = script.find("\n", i)
            end = n if end < 0 else end
            if not script.startswith("#SBATCH", i):
                spans.append((i, end))
            i = end
            continue
        elif c == "<" and script.startswith("<<", i) and not script.startswith("<<<", i):
            m = re.match(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_]\w*)\2", script[i:])
            if m:
                line_end = script.find("\n", i)
                line = script[script.rfind("\n", 0, i) + 1 : n if line_end < 0 else line_end]
                command = re.split(r"[;&|]", script[script.rfind("\n", 0, i) + 1 : i])[-1]
                live = re.match(r"\s*read\b", command) is not None
                pending.append((m.group(3), m.group(1) == "-", live, line, not m.group(2)))
                i += m.end()
                continue
        elif c == "\n" and pending:
            j = i + 1
            for word, strip_tabs, live, command, expands in pending:
                body_start = j
                while j < n:
                    line_end = script.find("\n", j)
                    line_end = n if line_end < 0 else line_end
                    line = script[j:line_end]
                    if (line.lstrip("\t") if strip_tabs else line) == word:
                        docs.append(Heredoc(body_start, j, command, expands, live))
                        j = line_end + 1
                        break
                    j = line_end + 1
                else:
                    docs.append(Heredoc(body_start, min(j, n), command, expands, live))
                if not live:
                    spans.append((body_start, min(j, n)))
            pending = []
            i = j
            continue
        i += 1
    return tuple(spans), tuple(docs)


def inert_spans(script: str) -> list[tuple[int, int]]:
    """Where bash runs nothing: comments (`#SBATCH` directives are comments too, and sbatch reads
    them itself) and here-document bodies. A knob in these spans is history or documentation,
    never the value the job uses, except in a config the script writes (config_heredocs). A
    here-doc that feeds `read` is not inert: its body is a variable's value that the script then
    runs (OpenRLHF's `read -r -d '' training_commands <<EOF`)."""
    return list(_lex(script)[0])


# A here-document the script writes to a file: `cat > ds.json <<EOF`, `cat <<EOF > x.yaml`,
# `tee x.yaml <<EOF`. Its body is a config the job reads, so its knobs are knobs.
_WRITES_FILE = re.compile(r"^\s*(?:cat\b[^\n]*>|tee\b)")


def config_heredocs(script: str) -> list[Heredoc]:
    """The configs the script writes itself, as here-documents."""
    return [d for d in _lex(script)[1] if not d.live and _WRITES_FILE.match(d.command)]


# A config key's value in a written config: a number, a quoted number, or a shell expansion
# bash fills in when the here-document is unquoted ($MBS, ${MBS}, ${MBS:-4}).
_CONFIG_VALUE = r"\$\{[A-Za-z_]\w*(?::?[-=]\d{1,9})?\}|\$[A-Za-z_]\w*|\"\d{1,9}\"|\d{1,9}(?![\w.])"


def _config_hits(script: str, name: str) -> list[Hit]:
    """`name` as a key (JSON, YAML or TOML) in the configs the script writes itself."""
    k = re.escape(name)
    pattern = re.compile(rf'(?m)(?:"{k}"[ \t]*:|^[ \t-]*{k}[ \t]*[:=])[ \t]*(?P<v>{_CONFIG_VALUE})')
    hits = []
    for d in config_heredocs(script):
        for m in pattern.finditer(script, d.start, d.end):
            if m.group("v").startswith("$") and not d.expands:
                continue  # a quoted here-doc writes `$MBS` as it stands: no number
            hits.append(Hit(name, m.group("v"), m.start("v"), m.end("v")))
    return hits


def _inert(spans: list[tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in spans)


_YACS = re.compile(r"[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)+")


def find(script: str, names: list[str]) -> list[Hit]:
    spans = inert_spans(script)
    hits = []
    for name in names:
        if name.startswith("-"):
            pattern = rf"(?<![\w-]){re.escape(name)}(?:=|[ \t]+)(?P<v>[^\s\\;|&]+)"
        elif _YACS.fullmatch(name):  # yacs' KEY VALUE pairs after the program (SlowFast, Swin)
            pattern = rf"(?<![\w.$-]){re.escape(name)}[ \t]+(?P<v>[^\s\\;|&]+)"
        elif "." in name:  # a Hydra-style override anywhere on the command line (+, ++ too)
            pattern = rf"(?<![\w.-])\+{{0,2}}{re.escape(name)}=(?P<v>[^\s\\;|&\"']+)"
        else:
            # $(( arithmetic )) and quoted values may hold spaces
            # An empty assignment (`export PYTORCH_ALLOC_CONF=`) is one too: it wins over an
            # export added above it, so it must be the one that is changed.
            value = r"\$\(\([^\n]*?\)\)|\"[^\"\n]*\"|'[^'\n]*'|[^\s;#]+|(?=[\s;#]|$)"
            pattern = rf"(?m)^[ \t]*(?:export[ \t]+)?{re.escape(name)}=(?P<v>{value})"
        for m in re.finditer(pattern, script):
            if not _inert(spans, m.start()):
                hits.append(Hit(name, m.group("v"), m.start("v"), m.end("v")))
        if not name.startswith("-") and "." not in name:
            hits.extend(_config_hits(script, name))
    return sorted(hits, key=lambda h: h.start)


def word(script: str, token: str) -> Hit | None:
    """The first place `token` is a whole word in what bash runs (the entry file on the training
    command: `torchrun ... train.py`), as a Hit of no value just after it."""
    spans = inert_spans(script)
    pattern = rf"(?<![^\s\"'=]){re.escape(token)}(?=[\s\"';|&]|$)"
    for m in re.finditer(pattern, script):
        if not _inert(spans, m.start()):
            return Hit(token, "", m.end(), m.end())
    return None


def entry_word(script: str, entry: str) -> Hit | None:
    """Where the job's command names its program: the entry file as written, or, for a module
    run with `-m` (`-m open_clip_train.main`), its dotted name."""
    hit = word(script, entry)
    if hit is None and entry.endswith(".py"):
        dotted = entry[:-3].replace("/", ".").removesuffix(".__main__")
        hit = word(script, dotted)
    return hit


def command_end(script: str, at: int) -> int:
    """Where the command that `at` is in ends (lines joined by a trailing backslash)."""
    end = at
    while True:
        nl = script.find("\n", end)
        if nl < 0:
            return len(script)
        if script[end:nl].rstrip(" \t").endswith("\\"):
            end = nl + 1
            continue
        return nl


def words_after(script: str, at: int) -> list[str]:
    """The words from `at` to the end of its command (lines joined by a trailing backslash)."""
    return [w for w in re.split(r"[\s\\]+", script[at : command_end(script, at)]) if w]


def flag_present(script: str, names: list[str]) -> str | None:
    for name in names:
        if name.startswith("-") and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", script):
            return name
    return None


_DEFAULTED = re.compile(r"\$\{([A-Za-z_]\w*):?[-=](\d{1,9})\}")


def int_value(script: str, hit: Hit, depth: int = 0) -> int | None:
    """The integer a knob holds: a literal, a shell variable assigned a literal, or the default
    of `${VAR:-N}` / `${VAR:=N}` when the script assigns VAR nothing (the job's environment
    could, which runbook cannot see from here: said in the checks); or shell arithmetic of such
    variables (`GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`, InternVL's
    scripts), computed as bash computes it."""
    site = literal_site(script, hit)
    v = site.value.strip("\"'")
    if re.fullmatch(r"\d{1,9}", v):
        return int(v)
    m = _ARITH.fullmatch(v)
    return _arith(script, m.group(1), depth) if m and depth < 8 else None


_ARITH = re.compile(r"\$\(\(([\w\s$+*/()-]{1,200})\)\)")
_TOKEN = re.compile(r"\s*(?:(\d{1,9})|\$?\{?([A-Za-z_]\w*)\}?|([-+*/()]))")


def _arith(script: str, expr: str, depth: int) -> int | None:
    """bash's $(( )) over whole numbers and variables the script assigns: + - * / and
    parentheses, / truncating toward zero. None for anything else (a variable with no number, a
    division by zero)."""
    out: list[str] = []
    pos = 0
    while pos < len(expr.rstrip()):
        m = _TOKEN.match(expr, pos)
        if m is None:
            return None
        pos = m.end()
        if m.group(2):
            hits = find(script, [m.group(2)])
            n = int_value(script, hits[0], depth + 1) if hits else None
            if n is None:
                return None
            out.append(str(n))
        else:
            out.append(m.group(1) or m.group(3))
    return _evaluate(out)


def _evaluate(tokens: list[str]) -> int | None:
    """Integer arithmetic of + - * / ( ) by precedence (no eval of the job's text)."""
    pos = 0

    def atom() -> int | None:
        nonlocal pos
        if pos >= len(tokens):
            return None
        t = tokens[pos]
        pos += 1
        if t == "(":
            v = expr()
            if pos >= len(tokens) or tokens[pos] != ")":
                return None
            pos += 1
            return v
        if t == "-":
            v = atom()
            return None if v is None else -v
        return int(t) if t.isdigit() else None

    def level(sub, ops: str) -> int | None:
        nonlocal pos
        v = sub()
        while v is not None and pos < len(tokens) and tokens[pos] in ops:
            op = tokens[pos]
            pos += 1
            v = _apply(op, v, sub())
        return v

    def term() -> int | None:
        return level(atom, "*/")

    def expr() -> int | None:
        return level(term, "+-")

    v = expr()
    return v if pos == len(tokens) else None


def _apply(op: str, v: int, w: int | None) -> int | None:
    if w is None or (op == "/" and w == 0) or max(abs(v), abs(w)) >= 2**52:
        return None
    return v + w if op == "+" else v - w if op == "-" else v * w if op == "*" else int(v / w)


def defining_text(script: str, hit: Hit, depth: int = 0) -> str:
    """The text a knob's value comes from: its own, or that of the variable it names, followed
    to the assignment that holds something other than another variable."""
    v = hit.value.strip("\"'")
    m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", v)
    if m and depth < 8:
        for a in find(script, [m.group(1)]):
            return defining_text(script, a, depth + 1)
    return v


def literal_site(script: str, hit: Hit, depth: int = 0) -> Hit:
    """Where to change the knob: its own literal, the literal of the variable it names (last
    assignment that runs before use wins; runbook takes the first one, as scripts set knobs once),
    or the default in `${VAR:-N}`."""
    v = hit.value.strip("\"'")
    if depth > 8:  # A=$B, B=$A: no literal to be found
        return hit
    m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", v)
    if m:
        for a in find(script, [m.group(1)]):
            return literal_site(script, a, depth + 1)
    d = _DEFAULTED.search(hit.value)
    if d and d.group(0) == v:
        # `MBS=${MBS:-4}` names itself: the default is the literal, not that same assignment.
        assigned = [a for a in find(script, [d.group(1)]) if a.start != hit.start]
        if assigned:
            return literal_site(script, assigned[0], depth + 1)
        off = hit.start + d.start(2)
        return Hit(d.group(1), d.group(2), off, off + len(d.group(2)))
    return hit


def replace(script: str, edits: list[tuple[Hit, str]]) -> str:
    for hit, new in sorted(edits, key=lambda e: e[0].start, reverse=True):
        script = script[: hit.start] + new + script[hit.end :]
    return script


@functools.lru_cache(maxsize=1)
def _config_keys() -> dict[str, tuple[str, ...]]:
    from runbook.jobfiles.configs import catalogue

    cat = catalogue()
    kinds = ("micro_batch", "grad_accum", "global_batch", "eval_batch", "eval_accumulation")
    return {k: getattr(cat, k) for k in kinds}


def names(knobs, kind: str) -> list[str]:
    """The names a knob of `kind` goes by: the site's flags and shell variables, then the
    catalogue's config keys (found in configs the script writes itself)."""
    own = list(getattr(knobs, kind))
    return own + [k for k in _config_keys().get(kind, ()) if k not in own]


def maybe(script: str, names: list[str]) -> Hit | None:
    hits = find(script, names)
    return hits[0] if hits else None


def one(
    script: str, names: list[str], what: str, globals_: tuple[str, ...] | list[str] = ()
) -> Hit:
    hit = maybe(script, names)
    only = maybe(script, list(globals_)) if hit is None and globals_ else None
    if only is not None:
        raise RungNotApplicable(
            f"the script states only the global batch ({only.name} {only.value}, the batch of "
            f"all GPUs): there is no {what} to halve with it kept, and no accumulation"
        )
    if hit is None:
        raise RungNotApplicable(
            f"the job script has no {what} knob (looked for {', '.join(names)})",
            hint="add the name the script uses to [knobs] in the site config",
        )
    return hit


# At most MAX_DIGITS digits, as every parser here: a longer number is noise, not a size.
SBATCH_MEM = re.compile(r"(?m)^#SBATCH[ \t]+--mem=(\d{1,18})([KMGT]?)\b")
_MEM_UNIT_MIB = {"K": 1 / 1024, "M": 1.0, "": 1.0, "G": 1024.0, "T": 1024.0**2}  # Slurm: MB default


def job_mem_mib(script: str) -> float | None:
    """The host RAM the job asks for, in MiB: a runbook-rendered job's `mem_mib`, else the
    script's `#SBATCH --mem=`; None when neither says (e.g. --mem on the sbatch command line)."""
    header = read_header(script)
    if header:
        mem = header[1].get("mem_mib")
        return float(mem) if isinstance(mem, int) and not isinstance(mem, bool) else None
    m = SBATCH_MEM.search(script)
    return int(m.group(1)) * _MEM_UNIT_MIB[m.group(2)] if m else None


def bash_errors(text: str) -> list[str]:
    """What `bash -n` says of a script (empty: it parses), file names and line numbers left out
    so that the same error before and after a patch reads the same."""
    with tempfile.NamedTemporaryFile("w", suffix=".sbatch", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run(["bash", "-n", f.name], capture_output=True, text=True, timeout=30)
    finally:
        os.unlink(f.name)
    if r.returncode == 0:
        return []
    lines = r.stderr.replace(f.name, "job.sbatch").strip().splitlines() or ["bash -n failed"]
    return [re.sub(r"^job\.sbatch: line \d+: ", "", ln) for ln in lines]


def bash_n(text: str, original: str | None = None) -> str:
    """`bash -n`: the patched script must parse, or, when the original already did not, add no
    error of its own. Returns the sentence for the checks."""
    after = bash_errors(text)
    before = bash_errors(original) if original is not None and after else []
    if not after:
        return "bash -n: the patched script parses"
    if before and sorted(after) == sorted(before):
        return (
            f"bash -n: the ORIGINAL script already fails ({'; '.join(before)}); the patch "
            "adds no new error"
        )
    if before:
        raise InputError(
            f"the patch would add a bash error: before {before}, after {after}",
            hint="nothing was written or submitted; patch the script by hand",
        )
    raise InputError(
        f"the patched job script does not parse (bash -n): {'; '.join(after)}",
        hint="a [knobs] pattern matched something it should not; nothing was written or "
        "submitted; patch it by hand",
    )


def effective_batch(script: str, knobs) -> dict:
    """Micro-batch, accumulation and global batch as the script states them, read afresh (the
    check after a patch never trusts the list of edits it made)."""
    out: dict[str, int | str | None] = {}
    for key, kind in (
        ("micro", "micro_batch"),
        ("accum", "grad_accum"),
        ("global", "global_batch"),
    ):
        hits = find(script, names(knobs, kind))
        out[key] = int_value(script, hits[0]) if hits else None
        out[key + "_text"] = hits[0].value if hits else None
    return out


# Launcher flags that state the world size as numbers (accelerate, torchrun, deepspeed); a flag
# that reads Slurm's own variables ($SLURM_NNODES) follows the new allocation by itself.
NODE_COUNT_FLAGS = ["--num_machines", "--num-machines", "--nnodes", "--num_nodes", "--num-nodes"]
PROCESS_COUNT_FLAGS = ["--num_processes", "--num-processes"]
