"""A knob that is only the job's program's default (jobfiles.program): the default, and where a
rung adds the program's own flag (after its entry file on the training command), when that
default is known to be what the job ran with. Shared by the rungs that change a batch."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash

entry_word = bash.entry_word  # where the job's command names its program


def program_default(script: str, prog, names: list[str], kind: str):
    """(the program's option among `names` with its default, the Hit to add flags after), or
    RungNotApplicable: no such option with a whole-number default; the script sets it under a
    spelling the site's [knobs] `kind` does not list; no place to add a flag; or a variable's
    words on the program's line that may set it."""
    d = prog.default_of(names)
    everyone = prog.proven("global_batch") if kind == "micro_batch" else []
    if d is None and everyone:
        # The program's own words say its batch option is every GPU's: there is no micro-batch
        # to halve apart from it (pytorch/examples' imagenet: "the total batch size of all GPUs
        # on the current node").
        g = everyone[0]
        raise RungNotApplicable(
            f"{prog.entry}'s {'/'.join(g.flags)} is the batch of all GPUs ({g.where} says "
            f"{g.help[:90]!r}), and it has no micro-batch option of its own: halving it would "
            "halve the global batch"
        )
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
    entry = entry_word(script, prog.entry)
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


def unset_default(script: str, prog, names: list[str]):
    """(the program's option among `names` with its whole-number default, the Hit to add it
    after) where the script does not set it and nothing on the program's line may: the value in
    force is then the default (MAE's --accum_iter 1 under a script that sets only --batch_size).
    None otherwise."""
    if prog is None or prog.entry is None:
        return None
    d = prog.default_of(names)
    if d is None or bash.maybe(script, list(d.aliases or (d.flag,))) is not None:
        return None
    entry = entry_word(script, prog.entry)
    if entry is None or script[entry.end : entry.end + 1] in ("'", '"'):
        return None
    rest = bash.words_after(script, entry.end)
    if any(
        w.lstrip("\"'").startswith("$") and (i == 0 or not rest[i - 1].startswith("-"))
        for i, w in enumerate(rest)
    ):
        return None
    return d, entry
