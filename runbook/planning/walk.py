"""The one reader of the playbook's ladder and causes (playbooks/oom.yaml): which rungs a verdict
takes, in order, and what a cause does to them. planning.ladder walks them for an incident (and
`runbook plan`); `runbook diagnose` names the first step from them. No rung id is written here:
each rung's properties are its module's (runbook.rungs)."""

from __future__ import annotations

from runbook import rungs


def candidates(verdict: str, ladder: dict) -> list:
    """The playbook rungs for a verdict in order; a continuing rung (fragmentation's
    true_oom_ladder) is replaced by the rungs of the ladder it continues with."""
    out = []
    for rung in ladder.get(verdict, ()):
        r = rungs.get(rung.id)
        if r is not None and r.continues_with:
            out.extend(ladder.get(r.continues_with, ()))
        else:
            out.append(rung)
    return out


def ordered(verdict: str, ladder: dict, pref) -> list:
    """The rungs walked for a verdict: the cause's `first` rungs (playbook.Rung, in the words of
    their modules), then the verdict's ladder (candidates)."""
    from runbook.playbook import Rung

    first = [Rung(rid, rungs.REGISTRY[rid].setting) for rid in (pref.first if pref else ())]
    return first + [c for c in candidates(verdict, ladder) if c.id not in {f.id for f in first}]


def preference(cause, causes: dict):
    """The playbook's preference for this cause (playbook.Preference), or None: the ladder as it
    is."""
    return causes.get(getattr(cause, "name", None) or "") if cause is not None else None


def for_a_person(pref) -> bool:
    """The cause's rung is a person's: no rung of the ladder can help."""
    r = rungs.get(pref.take or "") if pref is not None else None
    return r is not None and r.kind == rungs.HUMAN


def passes_over(pref, rung_id: str) -> bool:
    """The cause passes this rung over (its RungDef has the property the playbook names)."""
    r = rungs.get(rung_id)
    return bool(pref and pref.pass_over and r is not None and getattr(r, pref.pass_over))


def reasons(cause) -> str:
    return f"cause {cause.name}: " + "; ".join(cause.reasons)


def plan_rungs(ladder: dict, causes: dict) -> list[str]:
    """The rungs that change a job's files, in the playbook's order (its ladders, then the rungs
    its causes prefer or take): what `runbook plan` shows."""
    out: list[str] = []
    ids = [r.id for verdict in ladder for r in ladder[verdict]]
    ids += [rid for p in causes.values() for rid in (*p.first, p.take) if rid]
    for rid in ids:
        r = rungs.get(rid)
        if r is not None and r.kind in rungs.EDITS and rid not in out:
            out.append(rid)
    return out


def next_step_for_cause(cause, verdict: str, ladder: dict, causes: dict, *, with_allocator=False):
    """next_step() as the cause changes it (docs/design.md §3.1): a person for a cause no batch
    rung can help, the cause's own rung (an evaluation's batch), or the verdict's ladder without
    the rungs the cause passes over (an optimizer's state: the activation rungs)."""
    pref = preference(cause, causes)
    if pref is not None and pref.take and verdict in ladder:
        if for_a_person(pref):
            return {
                "rung": pref.take,
                "setting": f"{cause.name}: " + "; ".join(cause.reasons),
                "for_a_person": True,
                "then": [],
            }
        return {
            "rung": pref.take,
            "setting": rungs.REGISTRY[pref.take].setting,
            "for_a_person": False,
            "then": list(pref.then),
        }
    step = next_step(verdict, ladder, with_allocator=with_allocator)
    if pref is not None and (pref.pass_over or pref.first) and step is not None:
        order = ordered(verdict, ladder, pref)
        rest = [c.id for c in order if not passes_over(pref, c.id)]
        if rest:
            r = rungs.get(rest[0])
            step = {
                "rung": rest[0],
                "setting": r.setting if r else rest[0],
                "for_a_person": bool(r and r.kind == rungs.HUMAN),
                "then": rest[1:],
            }
    return step


def next_step(verdict: str, ladder: dict, *, with_allocator: bool = False) -> dict | None:
    """The first rung for a verdict, with the exact setting or flag, as `runbook diagnose`
    recommends it (offline: the lineage is unknown, so this is the ladder's first rung; `runbook
    oom` skips the rungs a job's lineage already tried)."""
    cands = candidates(verdict, ladder)
    if not cands:
        return None
    first = cands[0]
    r = rungs.get(first.id)
    setting = r.setting if r else first.what
    if with_allocator and r is not None and r.kind == rungs.SCRIPT:
        setting += "; and " + rungs.in_words(rungs.EXPANDABLE) + " (the unallocated pool is thin)"
    return {
        "rung": first.id,
        "setting": setting,
        "for_a_person": bool(first.human_only or (r is not None and r.kind == rungs.HUMAN)),
        "then": [c.id for c in cands[1:]],
    }
