"""The micro-batch fix decided and proved by the job's own parser (issue 63): the program is
run parse-only on its command line; its parsed configuration names the micro-batch and the
accumulation (asking.roles); the edit is overrides appended to that command line in the
program's own spelling; the patched command line is parsed the same way and the two whole
configurations compared: the micro-batch halved (or fitted), the accumulation raised to keep
the global batch, and nothing else changed. Anything else is refused, showing the difference.

Pure but for `run` (argv in; exit code, stdout, stderr, seconds out), which the caller makes:
as the job's owner, in its folder, with its environment, no GPU, a time limit."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable
from dataclasses import field
from typing import Any

from runbook.asking import parse_only
from runbook.asking.parse_only import Parsed
from runbook.asking.roles import eval_batch, roles
from runbook.errors import RungNotApplicable
from runbook.jobfiles import command_line
from runbook.record import record
from runbook.rungs import halve_eval_batch, halve_micro_batch

Run = Callable[[list[str]], tuple[int, str, str, float]]
MAX_TRIES = 3  # spellings tried per fix: each is one parse of the program
PARSER_RUNG = halve_micro_batch.RUNG.id  # the rungs whose edit the program's parser decides
EVAL_RUNG = halve_eval_batch.RUNG.id
PARSER_RUNGS = (PARSER_RUNG, EVAL_RUNG)


@record
class Fixed:
    """A proved edit of the training command, or why there is none (`why`)."""

    script: str = ""
    values_after: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    lands: list = field(default_factory=list)
    why: str = ""
    asked: bool = False  # the program answered (a refusal from its answer, not a failure to ask)
    asker: Any = None  # how it was asked, and its answer to the job's own command line: a
    before: Any = None  # static edit is proved on the same parser (static_proof)
    entry: str = ""


@record
class Asker:
    """How to ask the job's program: its interpreter, how its entry is named ([file] or
    ["-m", module]), and how a command is run (as its owner)."""

    python: str
    head: list[str]
    run: Run
    how: str = ""

    def parse(self, words: list[str]) -> Parsed | str:
        try:
            rc, out, err, _ = self.run(parse_only.command(self.python, self.head, words))
        except OSError as e:
            return f"it could not be run ({e})"
        return parse_only.read(rc, out, err)

    def shown(self, words: list[str]) -> str:
        return " ".join(shlex.quote(w) for w in [self.python, *self.head, *words])


def difference(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """{key: (before, after)} of every value that differs, is added or is gone."""
    gone = object()
    keys = sorted(set(before) | set(after))
    out = {k: (before.get(k, gone), after.get(k, gone)) for k in keys}
    return {
        k: tuple(None if v is gone else v for v in pair)  # type: ignore[misc]
        for k, pair in out.items()
        if pair[0] != pair[1]
    }


def shown_difference(diff: dict[str, tuple[Any, Any]], limit: int = 8) -> str:
    items = [f"{k} {a!r} -> {b!r}" for k, (a, b) in list(diff.items())[:limit]]
    more = len(diff) - limit
    return ", ".join(items) + (f" and {more} more" if more > 0 else "") if items else "nothing"


def _spellings(p: Parsed, key: str, value: int) -> list[tuple[list[str], str]]:
    """Ways the program's command line may set `key` (words, the word they replace's key
    prefix), the parser's own option strings first."""
    opts = p.options.get(key) or []
    longs = [o for o in opts if o.startswith("--")] or [o for o in opts if o.startswith("-")]
    if longs:
        return [([longs[0], str(value)], "")]
    lib = p.library
    sub = str(p.values.get("subcommand") or "")
    plain = key[len(sub) + 1 :] if sub and key.startswith(sub + ".") else key
    if lib in ("hydra", "omegaconf"):
        return [([f"{key}={value}"], f"{key}=")]
    if lib == "tyro":
        return [
            ([f"--{plain.replace('_', '-')}", str(value)], ""),
            ([f"--{plain}", str(value)], ""),
        ]
    if lib in ("jsonargparse", "fire", "click"):
        return [([f"--{plain}={value}"], "")]
    return []


def _candidates(p: Parsed, want: dict[str, int]) -> list[tuple[list[str], list[str]]]:
    """(words to append, words of the command to replace) for the values in `want`."""
    if p.library == "mmengine" and "cfg_options" in p.options:
        opt = p.options["cfg_options"][-1]
        return [([opt, *(f"{k}={v}" for k, v in want.items())], [])]
    per_key = [_spellings(p, k, v) for k, v in want.items()]
    if not all(per_key):
        return []
    out = []
    for i in range(max(len(s) for s in per_key)):
        words: list[str] = []
        prefixes: list[str] = []
        for s in per_key:
            w, prefix = s[min(i, len(s) - 1)]
            words += w
            if prefix:
                prefixes.append(prefix)
        out.append((words, prefixes))
    return out[:MAX_TRIES]


def _want_eval(p: Parsed) -> tuple[dict[str, int], str] | str:
    """The evaluation's own batch halved (an OOM in evaluation), the training batch untouched;
    or why not (never the training batch in its place)."""
    key, why = eval_batch(p.values, p.options)
    if key is None:
        return why
    e = p.values[key]
    if e < 2:
        return f"the evaluation's batch {key} is {e}: it cannot be halved"
    return {
        key: e // 2
    }, "the training batch (micro-batch, accumulation, global batch) is not touched"


def _want(p: Parsed, hint: set[str], target: int | None) -> tuple[dict[str, int], str] | str:
    """The values the fix sets ({key: value}, what keeps the global batch), or why none."""
    r = roles(p.values, hint, p.options)
    if r.micro is None:
        return r.why
    m = p.values[r.micro]
    a = p.values[r.accum] if r.accum else None
    try:
        new = halve_micro_batch.new_micro_batch(m, target, a)
    except RungNotApplicable as e:
        return e.message
    if r.accum:
        want = {r.micro: new, r.accum: a * m // new}
        return want, f"global batch {m} x {a} = {new} x {a * m // new} per data-parallel rank"
    if r.global_:
        keep = f"{r.global_} {p.values[r.global_]} unchanged"
        return {r.micro: new}, f"{keep}: the program derives its accumulation from it (inferred)"
    return (f"the program's parsed configuration has the micro-batch {r.micro}={m} but neither "
            "an accumulation nor a global batch: halving it would change the global batch")  # fmt: skip


def _proved(ask: Asker, before: Parsed, after: Parsed | str, want: dict, words) -> str | None:
    """None where `after` differs from `before` in exactly `want`; else what differs."""
    if isinstance(after, str):
        return f"the patched command line was not parsed: {after}"
    diff = difference(before.values, after.values)
    extra = {k: d for k, d in diff.items() if k not in want}
    if extra:  # a value that differs between two parses of the same words is not the edit's
        again = ask.parse(words)
        if isinstance(again, Parsed):
            noisy = difference(before.values, again.values)
            extra = {k: d for k, d in extra.items() if k not in noisy}
    wrong = {k: diff.get(k, (before.values.get(k), before.values.get(k))) for k in want
             if after.values.get(k) != want[k]}  # fmt: skip
    if wrong or extra:
        return f"it parsed {shown_difference({**wrong, **extra})}"
    return None


def fix(
    script: str, entry: str, words: list[str], ask: Asker, hint: set[str], target=None,
    rung: str = PARSER_RUNG,
) -> Fixed:  # fmt: skip
    """The proved fix of the training command `words` (after its entry) in `script`: the
    micro-batch rung's, or the evaluation's batch (`rung` EVAL_RUNG)."""
    before = ask.parse(words)
    if isinstance(before, str):
        return Fixed(why=f"the program could not be asked ({ask.shown(words)}): {before}")
    answered: dict[str, Any] = {"asked": True, "asker": ask, "before": before, "entry": entry}
    decided = _want_eval(before) if rung == EVAL_RUNG else _want(before, hint, target)
    if isinstance(decided, str):
        return Fixed(why=f"asked its parser ({before.shown()}): {decided}", **answered)
    want, keeps = decided
    tried = []
    for add, replace in _candidates(before, want):
        drop = [w for w in words if any(w.startswith(p) for p in replace)]
        new_script = command_line.appended(script, entry, add, tuple(drop))
        new_words = [w for w in words if w not in drop] + add
        if new_script is None:
            return Fixed(why=f"the training command ({entry}) was not found to edit", **answered)
        after = ask.parse(new_words)
        differs = _proved(ask, before, after, want, words)
        if differs is None:
            return _fixed(before, after, want, keeps, add, new_script, ask, new_words, rung)
        tried.append(f"{' '.join(add)}: {differs}")
    if not tried:
        return Fixed(why=f"asked its parser ({before.shown()}): runbook knows no way to set "
                     f"{', '.join(want)} on its command line", **answered)  # fmt: skip
    return Fixed(why=f"the program's parser ({before.shown()}) did not take the edit as planned: "
                 + "; ".join(tried), **answered)  # fmt: skip


def _fixed(
    before: Parsed, after, want, keeps, add, new_script, ask: Asker, new_words, rung
) -> Fixed:
    values = list(want.values())
    after_values = {"eval_batch": values[0]} if rung == EVAL_RUNG else {"micro_batch": values[0]}
    if len(values) > 1:
        after_values["grad_accum"] = values[1]
    diff = difference(before.values, after.values)
    checks = [
        f"the program's parser ({before.shown()}) on the new command line: "
        f"{shown_difference(diff)}; nothing else of its {len(before.values)} values changed "
        f"(asked: {ask.shown(new_words)}{f'; {ask.how}' if ask.how else ''})",
        keeps,
    ]
    lands = [f"{' '.join(add)} appended to the training command, as its {before.library} parser "
             "reads them (the check below)"]  # fmt: skip
    return Fixed(new_script, after_values, checks, lands, asked=True)


def for_script(
    script: str, program, python: str, run: Run, how: str, knobs, fit=None, ran=None,
    rung: str = PARSER_RUNG,
) -> Fixed:  # fmt: skip
    """The parser-proved fix of a job script's training command. Its words: `ran` (how the
    failing rank's process named its program, and its exact words, read from /proc), else the
    script's own, where none is `$VAR` (the batch script's static reading cannot expand them).
    The overrides are appended to the script's command either way: the rerun's shell expands
    the same words, then runbook's after them."""
    from runbook.planning.ask import command_words

    entry = getattr(program, "entry", None)
    if ran is not None:  # the process names its program: that word is the script's entry
        entry = ran[0][-1]
    cmd = ran if ran is not None else command_words(script, entry) if entry else None
    if cmd is None or entry is None:
        return Fixed(why="the training command's words are not all literal (a shell variable "
                     "runbook cannot expand here), or its program was not found")  # fmt: skip
    head, words = cmd
    hint = {n for kind in ("micro_batch", "grad_accum") for n in getattr(knobs, kind, ())}
    target = fit.micro_batch if fit is not None and fit.known else None  # a point fit
    return fix(script, entry, words, Asker(python, head, run, how), hint, target, rung)


def decided(rung_id: str, static: Any, fixed: Fixed, script: str, name: str):
    """The plan of a rung once the program's parser was asked (config_patch.RungPlan): the
    parser's proved edit wins; where the parser answered but could not make the edit, the static
    reading's plan stands and says that it is not the parser's; a refusal says both."""
    from runbook.jobfiles.config_patch import Change, RungPlan

    if fixed.script:
        return RungPlan(rung_id, True, changes=[Change(name, name, script, fixed.script)],
                        values_after=fixed.values_after, checks=fixed.checks, lands=fixed.lands)  # fmt: skip
    if not fixed.asked:
        return static
    if static.applicable:
        new = static.changes[0].new if static.changes else script
        copies = any(c.file != name for c in static.changes)
        check, refusal = static_proof(fixed, new, static.lands, copies, rung_id)
        if refusal:
            return RungPlan(rung_id, False, f"{refusal} (asked first: {fixed.why})")
        return dataclasses.replace(static, checks=[*static.checks, check])
    return RungPlan(rung_id, False, refused_both(fixed, static.reason))


def refused_both(fixed: Fixed, static_reason: str) -> str:
    """Why a rung is refused when the program's parser answered and the files read statically
    could not make the edit either: both readings, the parser's first."""
    return f"{fixed.why} (and the files read statically: {static_reason})"


def static_proof(
    fixed: Fixed, new_script: str, changes: list[str], copies: bool = False, rung: str = PARSER_RUNG
) -> tuple[str, str | None]:
    """(a check, or a refusal) for the static reading's edit where the program's parser answered
    but could not make the edit itself: the patched command line parsed the same way. Its
    differences must all be the batch's roles (by the program's own names) with the global batch
    kept; an edit the parser rejects, or that changes anything else, is refused."""
    from runbook.planning.ask import command_words

    note = (f"not confirmed by the program's parser: {fixed.why}; the edit is the static "
            "reading's, in files its command line names")  # fmt: skip
    cmd = command_words(new_script, fixed.entry) if fixed.entry else None
    if cmd is None or fixed.before is None or copies:  # a copy is written with the rerun only:
        return note, None  # its values are re-read from its text (the static reading's check)
    before, said = fixed.before, "; ".join(changes) or "the static reading's edit"
    after = fixed.asker.parse(cmd[1])
    if isinstance(after, str):
        return "", f"the program's parser rejects the static reading's edit ({said}): {after}"
    diff = difference(before.values, after.values)
    if not diff:
        return note, None
    if rung == EVAL_RUNG:
        kept, extra = _eval_only(after, diff), set()
    else:
        r = roles(after.values, None, after.options)
        kept = _kept(before.values, after.values, r)
        extra = set(diff) - {r.micro, r.accum, r.global_}
    if extra or kept is not None:
        why = kept or f"{', '.join(sorted(extra))} changed too"
        return "", (f"the program's parser reads the static reading's edit ({said}) as "
                    f"{shown_difference(diff)}: {why}")  # fmt: skip
    return (f"the program's parser ({before.shown()}) on the new command line: "
            f"{shown_difference(diff)}; nothing else of its {len(before.values)} values changed "
            f"(asked: {fixed.asker.shown(cmd[1])})"), None  # fmt: skip


def _eval_only(after: Parsed, diff: dict) -> str | None:
    """None where the edit lowered only the evaluation's own batch (or its accumulation of
    predictions); else what else it changed."""
    key, _ = eval_batch(after.values, after.options)
    other = [k for k in diff if k != key and not ("eval" in k.lower() and "accum" in k.lower())]
    if other:
        return f"{', '.join(sorted(other))} changed: not the evaluation's own batch"
    lowered = all(isinstance(b, int) and isinstance(a, int) and b < a for a, b in diff.values())
    return None if lowered else "the evaluation's batch was not lowered"


def _kept(old: dict, new: dict, r) -> str | None:
    """None where the global batch is kept across the edit (by the parsed roles); else why not."""
    if r.micro is None:
        return "no parsed value is named as the micro-batch"
    m0, m1 = old.get(r.micro), new.get(r.micro)
    if r.accum is not None:
        a0, a1 = old.get(r.accum) or 1, new.get(r.accum) or 1
        if isinstance(m0, int) and isinstance(m1, int) and m0 * a0 == m1 * a1 and m1 < m0:
            return None
        return f"micro-batch x accumulation {m0} x {a0} became {m1} x {a1}"
    if r.global_ is not None and old.get(r.global_) == new.get(r.global_) and m1 != m0:
        return None
    return "nothing that keeps the global batch was parsed"
