"""The resizing rungs' shared edit (shrink_world, grow_world): another node count, the same
global batch."""

from __future__ import annotations

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.rungs import Ask, RungDef


def script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """Another node count, the same global batch: the data-parallel size changes by new/old
    (nodes hold equal shares of it), so gradient accumulation changes by old/new, only when that
    is exact. A script that states the global batch lets the framework derive accumulation; it
    must then still divide. Shrinking (shrink_world) and growing back (grow_world) alike."""
    if not ask.world:
        raise RungNotApplicable("the job's node count is not known")
    knobs, (old, new) = ask.knobs, ask.world
    micro = bash.maybe(script, knobs.micro_batch)
    m = bash.int_value(script, micro) if micro is not None else None
    gbs = bash.maybe(script, knobs.global_batch)
    if gbs is not None:
        g = bash.int_value(script, gbs)
        if g is None or m is None:
            raise RungNotApplicable(
                f"the global batch {gbs.name}={gbs.value} or the micro-batch is not a number: "
                f"runbook cannot check it still divides on {new} nodes"
            )
        edits, changes = _launcher_world(script, old, new)
        return (
            bash.replace(script, edits),
            changes,
            [
                f"global batch stated by {gbs.name}={g}: unchanged on {new} of {old} nodes; "
                f"the framework derives accumulation (micro-batch {m})"
            ],
        )
    accum = bash.maybe(script, knobs.grad_accum)
    a = bash.int_value(script, accum) if accum is not None else None
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
    edits = [(bash.literal_site(script, accum), str(b))]
    changes = [f"gradient accumulation {a} -> {b} ({accum.name}) for {new} of {old} nodes"]
    more, more_changes = _launcher_world(script, old, new)
    return (
        bash.replace(script, edits + more),
        changes + more_changes,
        [f"global batch per node-share: {a} x {old} = {b} x {new} = {a * old}, unchanged"],
    )


def _launcher_world(
    script: str, old: int, new: int
) -> tuple[list[tuple[bash.Hit, str]], list[str]]:
    """The launcher's own node and process counts, scaled to `new` of `old` nodes."""
    edits, changes = [], []
    for hit in bash.find(script, bash.NODE_COUNT_FLAGS + bash.PROCESS_COUNT_FLAGS):
        v = bash.int_value(script, hit)
        if v is None:
            continue
        if hit.name in bash.NODE_COUNT_FLAGS:
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
        edits.append((bash.literal_site(script, hit), str(nv)))
        changes.append(f"{hit.name} {v} -> {nv}")
    return edits, changes


def template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    """The template's nodes resized, its accumulation scaled to keep the global batch."""
    before, after = ask.world or (0, 0)
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


def rung(rung_id: str, kind: str, words: str, **more) -> RungDef:
    """A resizing rung: the node count and the accumulation change (the template's variables,
    the script's knobs), and --nodes/--ntasks are given anew on the resubmission."""
    return RungDef(
        rung_id,
        kind,
        words,
        template_vars=("grad_accum", "nodes"),
        sbatch_options=frozenset({"nodes", "ntasks"}),
        script=script,
        template=template,
        **more,
    )
