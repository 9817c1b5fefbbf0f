"""The training command's own words in a job script, and an edit of them: words appended where
the command's arguments end (before a redirection, a pipe, `&`, `;` or a comment), or one word
replaced in place. The parser-proved fix (runbook.asking.fix) edits a script only through here;
it knows no rung."""

from __future__ import annotations

import shlex

from runbook.jobfiles import bash

_STOPS = set("<>|&;")


def _args_end(text: str) -> int:
    """Where the arguments in `text` (the command after its entry word) end: the first unquoted
    redirection, operator or comment, less the blanks and line continuations before it."""
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 2
            continue
        elif (
            c in _STOPS
            or (c == "#" and (i == 0 or text[i - 1].isspace()))
            or c.isdigit()
            and text[i + 1 : i + 2] == ">"
            and (i == 0 or text[i - 1].isspace())
        ):
            break
        i += 1
    end = min(i, len(text))
    while end > 0 and (text[end - 1].isspace() or text[end - 1] == "\\"):
        end -= 1
    return end


def appended(script: str, entry: str, words: list[str], drop: tuple[str, ...] = ()) -> str | None:
    """The script with `words` appended to the training command's arguments and each word of
    `drop` (a word of that command as written, e.g. a Hydra override being replaced) removed;
    None where the command is not found or a word to drop is not one of its words."""
    hit = bash.entry_word(script, entry)
    if hit is None:
        return None
    end = bash.command_end(script, hit.end)
    body = script[hit.end : end]
    cut = _args_end(body)
    args = body[:cut]
    for w in drop:
        at = _word_at(args, w)
        if at is None:
            return None
        args = args[:at] + args[at + len(w) :].lstrip(" \t")
    added = " ".join(shlex.quote(w) for w in words)
    return script[: hit.end] + args.rstrip(" \t") + " " + added + body[cut:] + script[end:]


def _word_at(args: str, w: str) -> int | None:
    start = 0
    while (at := args.find(w, start)) >= 0:
        before = args[at - 1] if at else " "
        after = args[at + len(w) : at + len(w) + 1] or " "
        if before.isspace() and (after.isspace() or after == "\\"):
            return at
        start = at + 1
    return None
