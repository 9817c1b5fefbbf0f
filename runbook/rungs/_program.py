"""A knob that is only the job's program's default (jobfiles.program): the default, and where a
rung adds the program's own flag (after its entry file on the training command), when that
default is known to be what the job ran with. Shared by the rungs that change a batch."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash


def program_default(script: str, prog, names: list[str], kind: str):
    """(the program's option among `names` with its default, the Hit to add flags after), or
    RungNotApplicable: no such option with a whole-number default; the script sets it under a
    spelling the site's [knobs] `kind` does not list; no place to add a flag; or a variable's
    words on the program's line that may set it."""
    d = prog.default_of(names)
    if d is None:
        what = kind.replace("_", "-")
        raise RungNotApplicable(
            f"{prog.entry} has no {what} option with a whole-number default ({prog.why})"
        )
    said = bash.maybe(script, list(d.aliases or (d.flag,)))
    if said is not None:
        raise RungNotApplicable(
            f"the script sets {said.name} {said.value}, {prog.entry}'s option, which [knobs] "
            f"{kind} does not list",
            hint=f"add {said.name} to [knobs] {kind} in the site config",
        )
    entry = bash.word(script, prog.entry)
    if entry is None or script[entry.end : entry.end + 1] in ("'", '"'):
        raise RungNotApplicable(
            f"{prog.entry} is not a word on the command line runbook can add {d.flag} after "
            "(quoted, or only in a variable)",
            hint=f"set {d.flag} on the training command by hand",
        )
    # A variable's words on the program's line may carry the option (`$EXTRA_ARGS`, `"$@"`):
    # the default is then not known to be the value the job ran with.
    for i, w in enumerate(rest := bash.words_after(script, entry.end)):
        if w.lstrip("\"'").startswith("$") and (i == 0 or not rest[i - 1].startswith("-")):
            raise RungNotApplicable(
                f"{prog.entry}'s arguments include {w}, which runbook cannot read: it may set "
                f"{d.flag}, so its default ({d.value}) is not known to be what ran"
            )
    return d, entry
