"""Job scripts: render runbook templates, and patch a job for the next rung of the ladder.

Two kinds of job script:
- rendered by `runbook submit` from a jinja2 template: the script's header records the template
  and its variables, so patching is exact: re-render with changed variables;
- plain scripts: patched through the knob names of the site config (training flags, shell
  variables, `#SBATCH` lines). A knob the script does not have is an error that says so.

Nothing here touches disk except `bash -n` on a temporary copy: the caller gets the new text, the
unified diff and the checks that passed, and writes through the action executor.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import field
from pathlib import Path

import jinja2
import jinja2.meta
from jinja2.sandbox import SandboxedEnvironment

from runbook import rungs
from runbook.errors import InputError, UsageError
from runbook.evidence.program import ProgramOptions
from runbook.record import record
from runbook.rungs import ALLOC_VARS

HEADER_TEMPLATE = "# runbook:template="
HEADER_VARS = "# runbook:vars="


class RungNotApplicable(UsageError):
    """This rung cannot be applied to this job (micro-batch already 1, knob already set...)."""


# -- templates ----------------------------------------------------------------------------------
class _Unquoted(str):
    """A value the template author asked to render as is (several words, say)."""


def _shell_safe(value):
    """Every rendered value is shell-quoted (a safe one stays bare): variables are job names,
    paths and checkpoint locations, and a path holding `$(...)` must not run on the rerun. Quotes
    are understood by bash and by sbatch's #SBATCH parser alike, mid-word too."""
    if isinstance(value, _Unquoted):
        return str(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return str(value)
    return shlex.quote(str(value)) if value != "" else ""


def _env() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        finalize=_shell_safe,
    )
    env.filters["unquoted"] = lambda v: _Unquoted(v)
    return env


def parse_vars(pairs: list[str]) -> dict:
    """`k=v` strings; integers and floats become numbers, so `{{ micro_batch // 2 }}` works."""
    out: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise UsageError(f"--var {pair!r}: expected NAME=VALUE with a Python identifier NAME")
        if re.fullmatch(r"-?\d+", value):
            out[key] = int(value)
        elif re.fullmatch(r"-?\d+\.\d*", value):
            out[key] = float(value)
        else:
            out[key] = value
    return out


def render(template_path: str, variables: dict) -> str:
    """Render a template into a job script whose header records the template and variables."""
    path = Path(template_path).resolve()
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(
            f"template {template_path}: cannot read: {e.strerror or e}",
            hint="check the path; the job's recorded template may have moved",
        ) from None
    try:
        text = _env().from_string(source).render(**variables)
    except jinja2.UndefinedError as e:
        raise UsageError(
            f"template {template_path}: {e.message}",
            hint=f"give it with --var NAME=VALUE (given: {', '.join(sorted(variables)) or 'none'})",
        ) from None
    except jinja2.TemplateSyntaxError as e:
        raise InputError(
            f"template {template_path}, line {e.lineno}: {e.message}",
            hint="fix the template and run again; nothing was submitted",
        ) from None
    except jinja2.exceptions.SecurityError as e:
        raise InputError(
            f"template {template_path}: refused by the sandbox: {e}",
            hint="templates may only use variables and filters; move logic into the job script",
        ) from None
    header = [f"{HEADER_TEMPLATE}{path}", f"{HEADER_VARS}{json.dumps(variables, sort_keys=True)}"]
    lines = text.splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    return "".join(lines[:at] + [h + "\n" for h in header] + lines[at:])


def template_variables(template_path: str) -> set[str]:
    """Every variable a template refers to (with a default or not)."""
    try:
        source = Path(template_path).read_text(encoding="utf-8")
    except OSError:
        return set()
    return jinja2.meta.find_undeclared_variables(_env().parse(source))


def read_header(script: str) -> tuple[str, dict] | None:
    """(template path, variables) of a runbook-rendered script, or None for a plain one."""
    template = variables = None
    for line in script.splitlines()[:20]:
        if line.startswith(HEADER_TEMPLATE):
            template = line[len(HEADER_TEMPLATE) :].strip()
        elif line.startswith(HEADER_VARS):
            try:
                variables = json.loads(line[len(HEADER_VARS) :])
            except json.JSONDecodeError:
                return None
    return (template, variables) if template and isinstance(variables, dict) else None


# -- knobs in plain scripts ---------------------------------------------------------------------
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


def _find(script: str, names: list[str]) -> list[Hit]:
    spans = inert_spans(script)
    hits = []
    for name in names:
        if name.startswith("-"):
            pattern = rf"(?<![\w-]){re.escape(name)}(?:=|[ \t]+)(?P<v>[^\s\\;|&]+)"
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


def _flag_present(script: str, names: list[str]) -> str | None:
    for name in names:
        if name.startswith("-") and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", script):
            return name
    return None


_DEFAULTED = re.compile(r"\$\{([A-Za-z_]\w*):?[-=](\d{1,9})\}")


def _int_value(script: str, hit: Hit) -> int | None:
    """The integer a knob holds: a literal, a shell variable assigned a literal, or the default
    of `${VAR:-N}` / `${VAR:=N}` when the script assigns VAR nothing (the job's environment
    could, which runbook cannot see from here: said in the checks)."""
    site = _literal_site(script, hit)
    v = site.value.strip("\"'")
    if re.fullmatch(r"\d{1,9}", v):
        return int(v)
    return None


def _literal_site(script: str, hit: Hit, depth: int = 0) -> Hit:
    """Where to change the knob: its own literal, the literal of the variable it names (last
    assignment that runs before use wins; runbook takes the first one, as scripts set knobs once),
    or the default in `${VAR:-N}`."""
    v = hit.value.strip("\"'")
    if depth > 8:  # A=$B, B=$A: no literal to be found
        return hit
    m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", v)
    if m:
        for a in _find(script, [m.group(1)]):
            return _literal_site(script, a, depth + 1)
    d = _DEFAULTED.search(hit.value)
    if d and d.group(0) == v:
        # `MBS=${MBS:-4}` names itself: the default is the literal, not that same assignment.
        assigned = [a for a in _find(script, [d.group(1)]) if a.start != hit.start]
        if assigned:
            return _literal_site(script, assigned[0], depth + 1)
        off = hit.start + d.start(2)
        return Hit(d.group(1), d.group(2), off, off + len(d.group(2)))
    return hit


def _replace(script: str, edits: list[tuple[Hit, str]]) -> str:
    for hit, new in sorted(edits, key=lambda e: e[0].start, reverse=True):
        script = script[: hit.start] + new + script[hit.end :]
    return script


@record
class Patch:
    rung: str
    old: str
    new: str
    changes: list[str] = field(default_factory=list)  # one sentence each, for the report
    checks: list[str] = field(default_factory=list)  # what was verified before writing
    template: str | None = None
    variables: dict | None = None
    # Patched copies of config files the script names (their name in the new script -> text),
    # and each copy's diff against the original: written beside the new script, never in place.
    files: dict[str, str] = field(default_factory=dict)
    file_diffs: list[str] = field(default_factory=list)

    def diff(self, name: str = "job.sbatch") -> str:
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
        ) + "".join(self.file_diffs)


@functools.lru_cache(maxsize=1)
def _config_keys() -> dict[str, tuple[str, ...]]:
    from runbook.evidence.configs import catalogue

    cat = catalogue()
    kinds = ("micro_batch", "grad_accum", "global_batch", "eval_batch", "eval_accumulation")
    return {k: getattr(cat, k) for k in kinds}


def names(knobs, kind: str) -> list[str]:
    """The names a knob of `kind` goes by: the site's flags and shell variables, then the
    catalogue's config keys (found in configs the script writes itself)."""
    own = list(getattr(knobs, kind))
    return own + [k for k in _config_keys().get(kind, ()) if k not in own]


def _maybe(script: str, names: list[str]) -> Hit | None:
    hits = _find(script, names)
    return hits[0] if hits else None


def _one(script: str, names: list[str], what: str) -> Hit:
    hit = _maybe(script, names)
    if hit is None:
        raise RungNotApplicable(
            f"the job script has no {what} knob (looked for {', '.join(names)})",
            hint="add the name the script uses to [knobs] in the site config",
        )
    return hit


def new_micro_batch(m: int, target: int | None, accum: int | None) -> int:
    """The micro-batch the rung sets: the fitted one (planning.fit) when given, else m / 2; a
    RungNotApplicable when it would not keep the global batch exact."""
    if target is None:
        if m < 2 or m % 2:
            raise RungNotApplicable(
                f"micro-batch is {m}: it cannot be halved exactly; take the next rung"
            )
        return m // 2
    if not 1 <= target < m or (m * (accum or 1)) % target or (not accum and m % target):
        raise RungNotApplicable(
            f"the fitted micro-batch {target} does not keep micro-batch {m} x accumulation "
            f"{accum or 1} exact"
        )
    return target


def halve_micro_batch(
    script: str, knobs, target: int | None = None
) -> tuple[str, list[str], list[str]]:
    """micro-batch / 2 (or the fitted `target`) with the global batch unchanged: Megatron-style
    scripts state the global batch (the framework derives accumulation), HF-style ones state
    accumulation (scaled here by old / new); an accumulation computed from the micro-batch in the
    script follows by itself."""
    micro = _one(script, names(knobs, "micro_batch"), "micro-batch")
    m = _int_value(script, micro)
    if m is None:
        raise RungNotApplicable(
            f"micro-batch {micro.name}={micro.value} is not a number runbook can halve"
        )
    accum0 = _maybe(script, names(knobs, "grad_accum"))
    new = new_micro_batch(m, target, _int_value(script, accum0) if accum0 else None)
    site = _literal_site(script, micro)
    edits = [(site, str(new))]
    changes = [f"micro-batch {m} -> {new} ({micro.name})"]
    gbs = _maybe(script, names(knobs, "global_batch"))
    accum = _maybe(script, names(knobs, "grad_accum"))
    a_stated = _int_value(script, accum) if accum is not None else None
    if gbs is not None and accum is not None and a_stated is not None:
        # All three stated (DeepSpeed checks train_batch_size = micro x accumulation x world at
        # start): the accumulation grows by m / new, the global batch stays.
        a2 = a_stated * m // new
        edits.append((_literal_site(script, accum), str(a2)))
        changes.append(f"gradient accumulation {a_stated} -> {a2} ({accum.name})")
        checks = [
            f"global batch stated by {gbs.name}={gbs.value}: unchanged, and micro-batch x "
            f"accumulation kept: {m} x {a_stated} = {new} x {a2}"
        ]
    elif gbs is not None:
        checks = [
            f"global batch stated by {gbs.name}={gbs.value}: unchanged; the framework "
            "derives accumulation"
        ]
    elif accum is not None:
        a = _int_value(script, accum)
        var_names = [n for n in (micro.name, site.name) if re.fullmatch(r"[A-Za-z_]\w*", n)]
        if a is None and any(re.search(rf"\b{v}\b", accum.value) for v in var_names):
            checks = [
                f"accumulation {accum.name}={accum.value} is computed from the micro-batch: "
                "it follows by itself"
            ]
        elif a is None:
            raise RungNotApplicable(
                f"gradient accumulation {accum.name}={accum.value} is neither a number nor "
                "computed from the micro-batch"
            )
        else:
            a2 = a * m // new
            edits.append((_literal_site(script, accum), str(a2)))
            changes.append(f"gradient accumulation {a} -> {a2} ({accum.name})")
            checks = [
                f"global batch: {m} x {a} = {new} x {a2} = {m * a} per data-parallel "
                "rank, unchanged"
            ]
    else:
        raise RungNotApplicable(
            "the script states neither a global batch nor gradient accumulation: halving the "
            "micro-batch would halve the global batch (it changes the science)",
            hint="add the script's accumulation knob to [knobs] grad_accum",
        )
    return _replace(script, edits), changes, checks


def halve_eval_batch(script: str, knobs) -> tuple[str, list[str], list[str]]:
    """The evaluation's batch / 2 (an OOM in evaluation: docs/design.md §3.1); at 1, HF Trainer's
    eval_accumulation_steps lowered to 1 (predictions leave the GPU after every batch). The
    training batch is not touched, so the global batch stays as it is."""
    checks = ["the training batch (micro-batch, accumulation, global batch) is not touched"]
    ev = _maybe(script, names(knobs, "eval_batch"))
    e = _int_value(script, ev) if ev is not None else None
    if ev is not None and e is not None and e >= 2:
        new = e // 2
        edits = [(_literal_site(script, ev), str(new))]
        return _replace(script, edits), [f"evaluation batch {e} -> {new} ({ev.name})"], checks
    acc = _maybe(script, names(knobs, "eval_accumulation"))
    a = _int_value(script, acc) if acc is not None else None
    if acc is not None and a is not None and a > 1:
        edits = [(_literal_site(script, acc), "1")]
        return (
            _replace(script, edits),
            [f"eval_accumulation_steps {a} -> 1 ({acc.name}): predictions leave the GPU each step"],
            checks,
        )
    if ev is None:
        raise RungNotApplicable(
            "the job script has no evaluation batch knob (looked for "
            + ", ".join(names(knobs, "eval_batch"))
            + ")",
            hint="add the name the script uses to [knobs] eval_batch in the site config",
        )
    raise RungNotApplicable(
        f"the evaluation batch {ev.name}={ev.value} cannot be halved (it is 1 or not a number), "
        "and no eval_accumulation_steps above 1 is set"
    )


# HF TrainingArguments' batch flags: a command line that passes one runs an HF Trainer, whose
# argument parser takes eval_accumulation_steps too, spelled the same way (underscores or dashes).
_HF_BATCH_FLAGS = [
    "--per_device_eval_batch_size",
    "--per-device-eval-batch-size",
    "--per_device_train_batch_size",
    "--per-device-train-batch-size",
]


def eval_accumulation_to_one(script: str, knobs) -> tuple[str, list[str], list[str]]:
    """HF Trainer's eval_accumulation_steps set to 1 (an OOM in evaluation where every batch's
    predictions stay on the GPU until it ends: docs/design.md §3.1): they move to the CPU after each
    batch. A value above 1 is lowered; where the script sets none, the flag is added next to the
    Trainer's batch flag on its command line, in that flag's spelling. The batches, evaluation's
    and training's, are not touched."""
    checks = ["the evaluation batch and the training batch are not touched"]
    acc = _maybe(script, names(knobs, "eval_accumulation"))
    if acc is not None:
        a = _int_value(script, acc)
        if a is None:
            raise RungNotApplicable(
                f"{acc.name} is {acc.value!r}, not a number runbook can lower",
                hint=f"set {acc.name} to 1 where the script gives it that value",
            )
        if a <= 1:
            raise RungNotApplicable(
                f"{acc.name} is already {a}: the predictions already leave the GPU after every "
                "batch",
                hint="what runs out is more than the kept predictions: read the evaluation loop",
            )
        edits = [(_literal_site(script, acc), "1")]
        return (
            _replace(script, edits),
            [
                f"eval_accumulation_steps {a} -> 1 ({acc.name}): predictions leave the GPU each batch"
            ],
            checks,
        )
    # Beside the evaluation's batch flag where there is one, else the training's.
    anchor = next(
        iter(_find(script, _HF_BATCH_FLAGS[:2]) + _find(script, _HF_BATCH_FLAGS[2:])), None
    )
    if anchor is None:
        raise RungNotApplicable(
            "the job script sets no eval_accumulation_steps and passes no HF Trainer batch flag "
            f"to add it beside (looked for {', '.join(names(knobs, 'eval_accumulation'))}, "
            f"{', '.join(_HF_BATCH_FLAGS)})",
            hint="set eval_accumulation_steps=1 where the job builds its TrainingArguments",
        )
    flag = "--eval-accumulation-steps" if "-" in anchor.name[2:] else "--eval_accumulation_steps"
    added = f"{flag}{'=' if script[anchor.start - 1] == '=' else ' '}1"
    new = script[: anchor.end] + " " + added + script[anchor.end :]
    return new, [f"{added} added after {anchor.name}: predictions leave the GPU each batch"], checks


def resize_world(script: str, knobs, world: tuple[int, int]) -> tuple[str, list[str], list[str]]:
    """Another node count, the same global batch: the data-parallel size changes by new/old
    (nodes hold equal shares of it), so gradient accumulation changes by old/new, only when that
    is exact. A script that states the global batch lets the framework derive accumulation; it
    must then still divide. Shrinking (shrink_world) and growing back (grow_world) alike."""
    old, new = world
    micro = _maybe(script, knobs.micro_batch)
    m = _int_value(script, micro) if micro is not None else None
    gbs = _maybe(script, knobs.global_batch)
    if gbs is not None:
        g = _int_value(script, gbs)
        if g is None or m is None:
            raise RungNotApplicable(
                f"the global batch {gbs.name}={gbs.value} or the micro-batch is not a number: "
                f"runbook cannot check it still divides on {new} nodes"
            )
        edits, changes = _launcher_world(script, old, new)
        return (
            _replace(script, edits),
            changes,
            [
                f"global batch stated by {gbs.name}={g}: unchanged on {new} of {old} nodes; "
                f"the framework derives accumulation (micro-batch {m})"
            ],
        )
    accum = _maybe(script, knobs.grad_accum)
    a = _int_value(script, accum) if accum is not None else None
    if accum is None or a is None:
        raise RungNotApplicable(
            "the script states neither a global batch nor a numeric gradient accumulation: "
            f"{new} nodes instead of {old} would change the global batch (it changes the science)"
        )
    if (a * old) % new:
        raise RungNotApplicable(
            f"accumulation {a} x {old}/{new} nodes = {a * old / new:g} is not a whole number: "
            f"the global batch cannot stay the same on {new} nodes"
        )
    b = a * old // new
    edits = [(_literal_site(script, accum), str(b))]
    changes = [f"gradient accumulation {a} -> {b} ({accum.name}) for {new} of {old} nodes"]
    more, more_changes = _launcher_world(script, old, new)
    return (
        _replace(script, edits + more),
        changes + more_changes,
        [f"global batch per node-share: {a} x {old} = {b} x {new} = {a * old}, unchanged"],
    )


# Launcher flags that state the world size as numbers (accelerate, torchrun, deepspeed); a flag
# that reads Slurm's own variables ($SLURM_NNODES) follows the new allocation by itself.
NODE_COUNT_FLAGS = ["--num_machines", "--num-machines", "--nnodes", "--num_nodes", "--num-nodes"]
PROCESS_COUNT_FLAGS = ["--num_processes", "--num-processes"]


def _launcher_world(script: str, old: int, new: int) -> tuple[list[tuple[Hit, str]], list[str]]:
    """The launcher's own node and process counts, scaled to `new` of `old` nodes."""
    edits, changes = [], []
    for hit in _find(script, NODE_COUNT_FLAGS + PROCESS_COUNT_FLAGS):
        v = _int_value(script, hit)
        if v is None:
            continue
        if hit.name in NODE_COUNT_FLAGS:
            if v != old:
                raise RungNotApplicable(
                    f"{hit.name} is {v} while the job has {old} nodes: runbook cannot tell "
                    "the launcher's world from here"
                )
            nv = new
        elif (v * new) % old:
            raise RungNotApplicable(f"{hit.name} {v} x {new}/{old} nodes is not a whole number")
        else:
            nv = v * new // old
        edits.append((_literal_site(script, hit), str(nv)))
        changes.append(f"{hit.name} {v} -> {nv}")
    return edits, changes


def halve_accumulation_only(script: str, knobs, expected: int) -> tuple[str, list[str], list[str]]:
    """Double the script's gradient accumulation (the micro-batch is halved elsewhere: in a
    config file the script names)."""
    accum = _one(script, knobs.grad_accum, "gradient-accumulation")
    a = _int_value(script, accum)
    if a is None or a != expected:
        raise RungNotApplicable(
            f"accumulation {accum.name}={accum.value} is not a number runbook can double"
        )
    site = _literal_site(script, accum)
    new = _replace(script, [(site, str(a * 2))])
    return new, [f"accumulation {a} -> {a * 2} ({accum.name})"], []


_OFF = {"false": "true", "False": "True", "FALSE": "TRUE", "0": "1", "no": "yes", "off": "on"}


def enable_activation_checkpointing(
    script: str, knobs, program: ProgramOptions | None = None
) -> tuple[str, list[str], list[str]]:
    flags = [n for n in knobs.activation_checkpointing if n.startswith("-")]
    # Given with an explicit off value (`--gradient_checkpointing false`, HF's boolean
    # arguments take one): off, and turned on where it is written.
    off = [h for h in _find(script, flags) if h.value.strip("\"'") in _OFF]
    if off:
        h = off[0]
        on = _OFF[h.value.strip("\"'")]
        new = _replace(script, [(h, on)])
        return new, [f"activation checkpointing on ({h.name} {h.value} -> {on})"], []
    present = _flag_present(script, knobs.activation_checkpointing)
    if present:
        raise RungNotApplicable(f"activation checkpointing is already on ({present})")
    if not flags:
        raise RungNotApplicable("[knobs] activation_checkpointing names no flag to add")
    micro = _one(script, [n for n in knobs.micro_batch if n.startswith("-")], "training command")
    flag, why = _flag_the_program_takes(program, flags)
    # After the micro-batch flag's value: on the training command line, whatever the launcher.
    at = Hit(micro.name, "", micro.end, micro.end)
    new = _replace(script, [(at, f" {flag}")])
    return new, [f"activation checkpointing on ({flag} added to the training command)"], [why]


def _flag_the_program_takes(program: ProgramOptions | None, flags: list[str]) -> tuple[str, str]:
    """The first of the site's activation-checkpointing flags the job's program takes (its own
    source, read by evidence.program): a flag it does not take would fail the rerun at its
    argument parser, so none is added on a guess. (the flag, the check that says so)"""
    if program is None or program.flags is None:
        entry = (program and program.entry) or "the job's program"
        why = (program and program.why) or "its source was not read"
        raise RungNotApplicable(
            f"cannot tell whether {entry} takes {' or '.join(flags)}: {why}",
            hint="add the flag by hand where the program takes it, or give the job's folder",
        )
    taken = next((f for f in flags if f in program.flags), None)
    if taken is None:
        raise RungNotApplicable(
            f"{program.entry} takes none of {', '.join(flags)} ({program.why}): activation "
            "checkpointing cannot be switched on from its command line",
            hint="switch it on in the program's own code or config, or name the program's flag "
            "in [knobs] activation_checkpointing",
        )
    return taken, f"{program.entry} takes {taken} ({program.why})"


def set_allocator(script: str, setting: str) -> tuple[str, list[str], list[str]]:
    """Allocator settings under both variable names, merged with what the script already sets."""
    current = {}
    for name in ALLOC_VARS:
        for h in _find(script, [name]):
            current[name] = h
    existing = ""
    if current:
        existing = next(iter(current.values())).value.strip("\"'")
    items = [s for s in existing.split(",") if s]
    key = setting.split(":")[0]
    items = [s for s in items if s.split(":")[0] != key] + [setting]
    value = ",".join(items)
    if existing and existing == value and len(current) == len(ALLOC_VARS):
        raise RungNotApplicable(f"allocator already set to {value}")
    edits = [(h, value) for h in current.values()]
    new = _replace(script, edits)
    missing = [n for n in ALLOC_VARS if n not in current]
    if missing:
        lines = new.splitlines(keepends=True)
        at = 0
        for i, line in enumerate(lines):  # after the shebang, header and #SBATCH block
            if line.startswith("#!") or line.startswith("#SBATCH") or line.startswith("# runbook:"):
                at = i + 1
        block = [f"export {n}={value}  # set by runbook\n" for n in missing]
        new = "".join(lines[:at] + block + lines[at:])
    return (
        new,
        [f"allocator: {' and '.join(ALLOC_VARS)}={value}"],
        ["both variable names set (PyTorch 2.9 reads only PYTORCH_CUDA_ALLOC_CONF for CUDA)"],
    )


def raise_sharding(script: str, knobs) -> tuple[str, list[str], list[str]]:
    hit = _one(script, knobs.sharding, "sharding")
    value = _int_value(script, hit)
    if value is None:
        raise RungNotApplicable(f"sharding {hit.name}={hit.value} is not a number")
    top = 3 if "zero" in hit.name.lower() else None
    if top is not None and value >= top:
        raise RungNotApplicable(f"{hit.name} is already {value}, the highest ZeRO stage")
    new = value + 1 if top is not None else value * 2
    return (
        _replace(script, [(_literal_site(script, hit), str(new))]),
        [f"sharding {hit.name} {value} -> {new}"],
        [],
    )


def set_resume(script: str, env_name: str, flag: str, path: str, knobs):
    """Point the rerun at a checkpoint: the script's own assignment of the resume variable if it
    has one (an `export` in the script would override the environment), else a flag added to the
    training command, else nothing to change here (the environment carries it)."""
    quoted = shlex.quote(path)
    hits = _find(script, [env_name]) if env_name else []
    if hits:
        return _replace(script, [(h, quoted) for h in hits]), f"{env_name}={path}"
    if flag:
        micro = _one(
            script, [n for n in knobs.micro_batch if n.startswith("-")], "training command"
        )
        at = Hit(micro.name, "", micro.end, micro.end)
        return _replace(script, [(at, f" {flag} {quoted}")]), f"{flag} {path}"
    return script, None


# At most MAX_DIGITS digits, as every parser here: a longer number is noise, not a size.
_SBATCH_MEM = re.compile(r"(?m)^#SBATCH[ \t]+--mem=(\d{1,18})([KMGT]?)\b")
_MEM_UNIT_MIB = {"K": 1 / 1024, "M": 1.0, "": 1.0, "G": 1024.0, "T": 1024.0**2}  # Slurm: MB default


def job_mem_mib(script: str) -> float | None:
    """The host RAM the job asks for, in MiB: a runbook-rendered job's `mem_mib`, else the
    script's `#SBATCH --mem=`; None when neither says (e.g. --mem on the sbatch command line)."""
    header = read_header(script)
    if header:
        mem = header[1].get("mem_mib")
        return float(mem) if isinstance(mem, int) and not isinstance(mem, bool) else None
    m = _SBATCH_MEM.search(script)
    return int(m.group(1)) * _MEM_UNIT_MIB[m.group(2)] if m else None


def raise_mem(script: str) -> tuple[str, list[str], list[str]]:
    m = _SBATCH_MEM.search(script)
    if not m:
        raise RungNotApplicable("the script has no `#SBATCH --mem=` line to raise")
    value = int(m.group(1)) * 2
    hit = Hit("--mem", m.group(1), m.start(1), m.end(1))
    return (
        _replace(script, [(hit, str(value))]),
        [f"--mem {m.group(1)}{m.group(2)} -> {value}{m.group(2)}"],
        [],
    )


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
        hits = _find(script, names(knobs, kind))
        out[key] = _int_value(script, hits[0]) if hits else None
        out[key + "_text"] = hits[0].value if hits else None
    return out


def check_global_batch(old: str, new: str, knobs) -> str:
    """The global batch of the patched script, recomputed from it, equals the original's."""
    a, b = effective_batch(old, knobs), effective_batch(new, knobs)
    if a == b:
        return "global batch: micro-batch, accumulation and global batch unchanged"
    if a["global"] is not None or b["global"] is not None:
        if a["global"] == b["global"]:
            return f"global batch stated as {a['global']} before and after: unchanged"
        raise InputError(
            f"the patch changes the stated global batch ({a['global']} -> {b['global']})",
            hint="nothing was written; patch it by hand",
        )
    if None not in (a["micro"], a["accum"], b["micro"], b["accum"]):
        before, after = a["micro"] * a["accum"], b["micro"] * b["accum"]
        if before == after:
            return (
                f"global batch re-read from the patched script: {b['micro']} x {b['accum']} "
                f"= {a['micro']} x {a['accum']} = {before} per data-parallel rank"
            )
        raise InputError(
            f"the patched script's micro-batch x accumulation is {after}, the "
            f"original's {before}: the global batch would change",
            hint="nothing was written; patch it by hand",
        )
    if a["accum"] is None and a["accum_text"] and a["accum_text"] == b["accum_text"]:
        return (
            f"accumulation {a['accum_text']} is computed in the script from the micro-batch "
            "and was left as it is"
        )
    raise InputError(
        "the global batch of the patched script cannot be re-read to check it",
        hint="state the micro-batch and accumulation as numbers, or patch by hand",
    )


# Script rungs with a patcher of their own; allocator rungs share set_allocator (rungs.REGISTRY
# says which setting), node rungs resubmit the script as it is.
RUNG_PATCHERS = {
    "halve_micro_batch": lambda s, k: halve_micro_batch(s, k),
    "halve_eval_batch": lambda s, k: halve_eval_batch(s, k),
    "eval_accumulation": lambda s, k: eval_accumulation_to_one(s, k),
    "raise_mem": lambda s, k: raise_mem(s),
    "raise_sharding": lambda s, k: raise_sharding(s, k),
}


def _patch_plain(
    script: str,
    rung: str,
    knobs,
    world: tuple[int, int] | None = None,
    micro_batch: int | None = None,
    program=None,
) -> tuple[str, list[str], list[str]]:
    r = rungs.get(rung)
    if rung == "unchanged":
        return script, [], []
    if rung == "halve_micro_batch":
        return halve_micro_batch(script, knobs, micro_batch)
    if rungs.resizes_world(rung):
        if not world:
            raise RungNotApplicable("the job's node count is not known")
        return resize_world(script, knobs, world)
    if r is not None and r.allocator:
        return set_allocator(script, r.allocator)
    if rung == "activation_checkpointing":
        return enable_activation_checkpointing(script, knobs, program)
    if rung in RUNG_PATCHERS:
        return RUNG_PATCHERS[rung](script, knobs)
    raise RungNotApplicable(f"runbook has no job-script patch for rung {rung}")


def _template_micro_batch(vars2: dict, changes: list, checks: list, micro_batch) -> None:
    """The template's micro-batch set to `micro_batch` (the fit) or halved, the accumulation
    raised to keep the global batch (or the global batch stated and unchanged)."""
    m = vars2.get("micro_batch")
    if not isinstance(m, int):
        raise RungNotApplicable(f"micro_batch is {m!r}: it cannot be halved exactly")
    a = vars2.get("grad_accum") if "global_batch" not in vars2 else None
    m2 = new_micro_batch(m, micro_batch, a if isinstance(a, int) else None)
    vars2["micro_batch"] = m2
    changes.append(f"micro_batch {m} -> {m2}")
    if "global_batch" in vars2:
        checks.append(f"global_batch={vars2['global_batch']} unchanged")
    elif isinstance(a, int):
        vars2["grad_accum"] = a * m // m2
        changes.append(f"grad_accum {a} -> {a * m // m2}")
        checks.append(f"global batch {m} x {a} = {m2} x {a * m // m2}, unchanged")
    else:
        raise RungNotApplicable("the template has neither global_batch nor grad_accum")


def _template_world(vars2: dict, changes: list, checks: list, world: tuple[int, int]) -> None:
    """The template's nodes resized, its accumulation scaled to keep the global batch."""
    before, after = world
    a, n = vars2.get("grad_accum"), vars2.get("nodes")
    if "global_batch" in vars2:
        checks.append(f"global_batch={vars2['global_batch']} unchanged on {after} nodes")
    elif not isinstance(a, int) or not before or (a * before) % after:
        raise RungNotApplicable(
            f"grad_accum {a!r} x {before}/{after} nodes is not a whole number: the global batch "
            f"cannot stay the same on {after} nodes"
        )
    else:
        vars2["grad_accum"] = a * before // after
        changes.append(f"grad_accum {a} -> {vars2['grad_accum']} for {after} of {before} nodes")
        checks.append(f"global batch {a} x {before} = {vars2['grad_accum']} x {after}, unchanged")
    if isinstance(n, int):
        vars2["nodes"] = after
        changes.append(f"nodes {n} -> {after}")


def _patch_template(
    script: str,
    rung: str,
    template: str,
    variables: dict,
    extra: dict | None = None,
    world: tuple[int, int] | None = None,
    micro_batch: int | None = None,
) -> Patch:
    vars2 = dict(variables)
    vars2.update(extra or {})
    changes: list[str] = []
    checks: list[str] = []
    if rung == "halve_micro_batch":
        _template_micro_batch(vars2, changes, checks, micro_batch)
    elif rung == "halve_eval_batch":
        e = vars2.get("eval_batch")
        if not isinstance(e, int) or e < 2:
            raise RungNotApplicable(f"the template's eval_batch is {e!r}: it cannot be halved")
        vars2["eval_batch"] = e // 2
        changes.append(f"eval_batch {e} -> {e // 2}")
        checks.append("the training batch is not touched")
    elif rung == "eval_accumulation":
        a = vars2.get("eval_accumulation")
        if not isinstance(a, int) or a < 2:
            raise RungNotApplicable(
                f"the template's eval_accumulation is {a!r}, not a number above 1 to lower to 1",
                hint="give the template an eval_accumulation variable, or set "
                "eval_accumulation_steps=1 in the job by hand",
            )
        vars2["eval_accumulation"] = 1
        changes.append(f"eval_accumulation {a} -> 1")
        checks.append("the evaluation batch and the training batch are not touched")
    elif rung == "activation_checkpointing":
        if vars2.get("activation_checkpointing") in (True, 1, "1", "true", "True"):
            raise RungNotApplicable("activation checkpointing is already on")
        vars2["activation_checkpointing"] = 1
        changes.append("activation_checkpointing 0 -> 1")
    elif rung == "raise_mem":
        mem = vars2.get("mem_mib")
        if not isinstance(mem, int):
            raise RungNotApplicable(f"the template's mem_mib is {mem!r}, not a number to raise")
        vars2["mem_mib"] = mem * 2
        changes.append(f"mem_mib {mem} -> {mem * 2}")
    elif rungs.resizes_world(rung):
        _template_world(vars2, changes, checks, world or (0, 0))
    elif rung == "unchanged":
        pass
    elif (setting := rungs.allocator_setting(rung)) is not None:
        items = [s for s in str(vars2.get("alloc_conf", "")).split(",") if s]
        items = [s for s in items if s.split(":")[0] != setting.split(":")[0]] + [setting]
        vars2["alloc_conf"] = ",".join(items)
        changes.append(f"alloc_conf -> {vars2['alloc_conf']}")
    else:
        raise RungNotApplicable(f"rung {rung} has no template variable")
    new = render(template, vars2)
    for name in ALLOC_VARS:
        if rungs.allocator_setting(rung) and name not in new:
            new, more, _ = set_allocator(new, vars2["alloc_conf"])
            changes.extend(more)
            break
    return Patch(rung, script, new, changes, checks, template, vars2)


def patch(
    script: str,
    rung: str,
    knobs,
    *,
    resume=None,
    world=None,
    micro_batch=None,
    fallback=None,
    program=None,
) -> Patch:
    """The job script for `rung` ("unchanged" for a resubmission as is), checked (bash -n,
    global batch) but not written. `resume` (a CheckpointsSection and a path) points the rerun at
    its checkpoint: the template variable, the script's own assignment, or a flag. `fallback`
    (called with the script's reason) makes the patch where the script holds no knob for the
    rung: planning.config_patch.patch passes the config files the script names. `world` (nodes
    before, after) is for the rungs that resize the world (shrink_world, grow_world);
    `program` (evidence.program.ProgramOptions) for a rung that adds a flag the job's program
    must take."""
    header = read_header(script)
    # The template variable carries the resume path only on a runbook-rendered job whose
    # template has it; every other script is told in its own words (set_resume below).
    extra: dict = {}
    r = rungs.get(rung)
    if header and r is not None and (r.template_vars or rung == "unchanged"):
        template, variables = header
        if resume and resume[0].resume_var in template_variables(template):
            extra = {resume[0].resume_var: resume[1]}
        p = _patch_template(script, rung, template, variables, extra, world, micro_batch)
        if extra:
            p.changes.append(f"resume from {resume[1]} ({resume[0].resume_var})")
    else:
        try:
            new, changes, checks = _patch_plain(script, rung, knobs, world, micro_batch, program)
            p = Patch(rung, script, new, changes, checks)
        except RungNotApplicable as e:
            if fallback is None:
                raise
            p = fallback(why=e.message)  # the knob in a config the script names (config_patch)
    if resume and not extra:
        p.new, how = set_resume(
            p.new, resume[0].resume_env, resume[0].resume_flag, resume[1], knobs
        )
        if how:
            p.changes.append(f"resume from {resume[1]} ({how})")
    if p.new == p.old and rung != "unchanged":
        raise RungNotApplicable(f"rung {rung} would not change the script")
    p.checks.append(bash_n(p.new, original=script))
    if not header and not p.files and not rungs.resizes_world(rung):
        # a config patch checked the batch on its copies; a resize checks with the nodes
        p.checks.append(check_global_batch(script, p.new, knobs))
    return p
