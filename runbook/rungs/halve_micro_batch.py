"""halve_micro_batch: the micro-batch halved (or set to the failure's fit), the gradient
accumulation raised so the global batch stays the same (docs/design.md §3.2); in the script, a
runbook template's variables, or a config file the script names."""

from __future__ import annotations

import re

from runbook.errors import RunbookError, RungNotApplicable
from runbook.jobfiles import bash
from runbook.jobfiles import configs as cfg
from runbook.jobfiles.config_patch import Change, JobFiles, RungPlan, copies
from runbook.rungs import SCRIPT, Ask, RungDef, Situation
from runbook.rungs._program import program_default, unset_default


def _target(fit) -> int | None:
    """The fitted micro-batch (planning.fit) when the fit is a point; None: plain halving."""
    return fit.micro_batch if fit is not None and fit.known else None


def _applies(s: Situation) -> str | None:
    """Passed over when the fit, with the fixed cost known, predicts no smaller micro-batch fits."""
    f = s.fit
    if f is not None and f.known and f.micro_batch is None:
        return f.reasons[-1]
    return None


def _again(s: Situation) -> bool:
    """A fit from two failed attempts of the lineage that names a micro-batch: the rung may be
    taken again with it (its first try under-predicted; the second is measured)."""
    return s.fit is not None and s.fit.source == "lineage" and s.fit.micro_batch is not None


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


def whole(v) -> int | None:
    """A whole number, as a config or a command-line word states it (`16`, "16"); else None."""
    if isinstance(v, str) and re.fullmatch(r"\d+", v):
        return int(v)
    return v if type(v) is int else None


def new_sizes(m, a, target: int | None = None) -> tuple[int, int] | str:
    """(micro-batch, accumulation) after the rung, the global batch kept: m / 2 (or the fit's
    `target`) and a x m / new; or why there are none."""
    if type(m) is not int or type(a) is not int or a < 1:
        return f"micro-batch {m!r} with accumulation {a!r} is not a pair of whole numbers"
    try:
        new = new_micro_batch(m, target, a)
    except RungNotApplicable as e:
        return e.message
    return new, a * m // new


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """micro-batch / 2 (or the fitted `target`) with the global batch unchanged: Megatron-style
    scripts state the global batch (the framework derives accumulation), HF-style ones state
    accumulation (scaled here by old / new); an accumulation computed from the micro-batch in the
    script follows by itself."""
    knobs, target = ask.knobs, _target(ask.fit)
    micro = bash.one(
        script, bash.names(knobs, "micro_batch"), "micro-batch", bash.names(knobs, "global_batch")
    )
    m = bash.int_value(script, micro)
    if m is None:
        raise RungNotApplicable(
            f"micro-batch {micro.name}={micro.value} is not a number runbook can halve"
        )
    accum0 = bash.maybe(script, bash.names(knobs, "grad_accum"))
    new = new_micro_batch(m, target, bash.int_value(script, accum0) if accum0 else None)
    site = bash.literal_site(script, micro)
    edits = [(site, str(new))]
    changes = [f"micro-batch {m} -> {new} ({micro.name})"]
    gbs = bash.maybe(script, bash.names(knobs, "global_batch"))
    accum = bash.maybe(script, bash.names(knobs, "grad_accum"))
    a_stated = bash.int_value(script, accum) if accum is not None else None
    if gbs is not None and accum is not None and a_stated is not None:
        # All three stated (DeepSpeed checks train_batch_size = micro x accumulation x world at
        # start): the accumulation grows by m / new, the global batch stays.
        a2 = a_stated * m // new
        edits.append((bash.literal_site(script, accum), str(a2)))
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
        a = bash.int_value(script, accum)
        var_names = [n for n in (micro.name, site.name) if re.fullmatch(r"[A-Za-z_]\w*", n)]
        source = bash.defining_text(script, accum)  # ${GRADIENT_ACC} -> $((BATCH / MICRO / GPUS))
        if any(re.search(rf"\b{v}\b", source) for v in var_names) and (
            a is None or not re.fullmatch(r"\d+", source)
        ):
            checks = [
                f"accumulation {accum.name}={accum.value} is computed from the micro-batch"
                + (f" ({source})" if source != accum.value else "")
                + ": it follows by itself"
            ]
        elif a is None:
            raise RungNotApplicable(
                f"gradient accumulation {accum.name}={accum.value} is neither a number nor "
                "computed from the micro-batch"
            )
        else:
            a2 = a * m // new
            edits.append((bash.literal_site(script, accum), str(a2)))
            changes.append(f"gradient accumulation {a} -> {a2} ({accum.name})")
            checks = [
                f"global batch: {m} x {a} = {new} x {a2} = {m * a} per data-parallel "
                "rank, unchanged"
            ]
    elif (added := _accum_added(script, ask, m, new)) is not None:
        edits.append(added[0])
        changes.append(added[1])
        checks = [added[2]]
    else:
        raise RungNotApplicable(
            "the script states neither a global batch nor gradient accumulation: halving the "
            "micro-batch would halve the global batch (it changes the science)",
            hint="add the script's accumulation knob to [knobs] grad_accum",
        )
    return bash.replace(script, edits), changes, checks


def _accum_added(script: str, ask: Ask, m: int, new: int):
    """The program's accumulation option, unset by the script: its default is in force, and the
    flag is added after the entry file at default x m / new. (edit, change, check), or None."""
    unset = unset_default(script, ask.program, bash.names(ask.knobs, "grad_accum"))
    if unset is None:
        return None
    d, entry = unset
    a2 = d.value * m // new
    return (
        (entry, f" {d.flag} {a2}"),
        f"gradient accumulation {d.value} -> {a2} ({d.flag} added: the default, {d.where})",
        f"global batch: {m} x {d.value} = {new} x {a2} = {m * d.value} per data-parallel rank, "
        "unchanged",
    )


def _template(vars2: dict, ask: Ask, changes: list, checks: list) -> None:
    """The template's micro-batch set to `micro_batch` (the fit) or halved, the accumulation
    raised to keep the global batch (or the global batch stated and unchanged)."""
    m = vars2.get("micro_batch")
    if not isinstance(m, int):
        raise RungNotApplicable(f"micro_batch is {m!r}: it cannot be halved exactly")
    a = vars2.get("grad_accum") if "global_batch" not in vars2 else None
    m2 = new_micro_batch(m, _target(ask.fit), a if isinstance(a, int) else None)
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


def halve_accumulation_only(script: str, knobs, expected: int) -> tuple[str, list[str], list[str]]:
    """Double the script's gradient accumulation (the micro-batch is halved elsewhere: in a
    config file the script names)."""
    accum = bash.one(script, knobs.grad_accum, "gradient-accumulation")
    a = bash.int_value(script, accum)
    if a is None or a != expected:
        raise RungNotApplicable(
            f"accumulation {accum.name}={accum.value} is not a number runbook can double"
        )
    site = bash.literal_site(script, accum)
    new = bash.replace(script, [(site, str(a * 2))])
    return new, [f"accumulation {a} -> {a * 2} ({accum.name})"], []


def _program(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    """micro-batch / 2 (or the fit) where the micro-batch is the job's program's default: the
    program's own flag added after its entry file at the new value, with its accumulation flag
    raised to keep the global batch (stated in the script: changed there; else the program's
    default, added too). A program with neither an accumulation nor a global-batch option
    cannot keep the global batch: refused."""
    prog, knobs = ask.program, ask.knobs
    micro, entry = program_default(script, prog, bash.names(knobs, "micro_batch"), "micro_batch")
    m, accum_names = micro.value, bash.names(knobs, "grad_accum")
    accum_hit = bash.maybe(script, accum_names + prog.takes(accum_names))
    accum_default = prog.default_of(accum_names)
    a = bash.int_value(script, accum_hit) if accum_hit else None
    if accum_hit is not None and a is None:
        raise RungNotApplicable(
            f"gradient accumulation {accum_hit.name}={accum_hit.value} is not a number"
        )
    a = a if a is not None or accum_default is None else accum_default.value
    global_names = bash.names(knobs, "global_batch")
    glob = bash.maybe(script, global_names) or prog.default_of(global_names)
    if a is None and glob is None:
        raise RungNotApplicable(
            f"{prog.entry} takes no gradient accumulation option ({prog.why}): halving its "
            f"micro-batch ({micro.flag}, default {m}) would halve the global batch",
            hint="add gradient accumulation to the program, or lower the batch by hand",
        )
    new = new_micro_batch(m, _target(ask.fit), a if glob is None else None)
    added = f" {micro.flag} {new}"
    changes = [f"micro-batch {m} -> {new} ({micro.flag} added: the default, {micro.where})"]
    edits = []
    if glob is not None:
        said = getattr(glob, "flag", None) or getattr(glob, "name", "")
        checks = [f"global batch stated ({said}): unchanged; the program derives accumulation"]
    else:
        a2 = a * m // new
        if accum_hit is not None:
            edits.append((bash.literal_site(script, accum_hit), str(a2)))
            changes.append(f"gradient accumulation {a} -> {a2} ({accum_hit.name})")
        else:
            added += f" {accum_default.flag} {a2}"
            changes.append(
                f"gradient accumulation {a} -> {a2} ({accum_default.flag} added: the "
                f"default, {accum_default.where})"
            )
        checks = [f"global batch: {m} x {a} = {new} x {a2} = {m * a} per data-parallel rank"]
    new_script = bash.replace(script, [*edits, (entry, added)])
    # Read back: the program's flag in the patched script holds what was meant.
    got = bash.maybe(new_script, [micro.flag])
    if got is None or bash.int_value(new_script, got) != new:
        raise RungNotApplicable(f"re-reading the patched script did not find {micro.flag} {new}")
    checks.append(f"{prog.entry} takes {micro.flag} ({prog.why})")
    return new_script, changes, checks


def _override(job: JobFiles) -> RungPlan | None:
    """The micro-batch set on the command line over a config it names (torchtitan's
    `--training.local_batch_size 4` over its TOML's `local_batch_size`), and the global batch or
    the accumulation only in that config: the flag halved in the script, the config's global
    batch kept (the framework derives accumulation) or its accumulation doubled in a copy. None
    when the script states them itself (the script's own edit) or no config does."""
    if {"global_batch", "grad_accum"} & set(job.in_script):
        return None
    glob, accum = job.in_configs.get("global_batch"), job.in_configs.get("grad_accum")
    if glob is None and (accum is None or not accum.number):
        return None
    knob = bash.one(job.script, bash.names(job.knobs, "micro_batch"), "micro-batch")
    m = bash.int_value(job.script, knob)
    if m is None or m < 2 or m % 2:
        return RungPlan(
            RUNG.id,
            False,
            f"micro-batch {knob.name} {knob.value} cannot be halved exactly; take the next rung",
        )
    site = bash.literal_site(job.script, knob)
    new_script = bash.replace(job.script, [(site, str(m // 2))])
    after: dict = {"micro_batch": m // 2}
    edits: dict = {}
    if glob is not None:
        checks = [
            f"global batch stated as {glob.key}={glob.value} in {glob.file}:{glob.line}: "
            f"unchanged; the framework derives accumulation ({knob.name} on the command line "
            "overrides the config's micro-batch)"
        ]
    elif accum is not None:
        a = accum.number or 0
        edits[accum.file] = [(accum, a * 2)]
        after["grad_accum"] = a * 2
        checks = [f"global batch {m} x {a} = {m // 2} x {a * 2} per data-parallel rank"]
    return copies(RUNG.id, job.name, job.script, new_script, job.files, edits, after, checks)


def _hydra(job: JobFiles, f, micro) -> RungPlan:
    """The micro-batch in a Hydra config chosen by name: halved by an override on the command
    line after `--config-name` (Hydra reads configs from its config path only, so no copy), the
    global batch it states kept (NeMo derives accumulation), or its accumulation doubled."""
    m, rid = micro.number or 0, RUNG.id
    if m < 2 or m % 2:
        return RungPlan(
            rid,
            False,
            f"micro-batch {micro.key}={micro.value} in {f.name} cannot be halved exactly; take "
            "the next rung",
        )
    text = f.text or ""
    overrides = [f"{cfg.dotted_key(text, micro)}={m // 2}"]
    after = {"micro_batch": m // 2}
    glob, accum = job.in_configs.get("global_batch"), job.in_configs.get("grad_accum")
    if glob is not None:
        checks = [
            f"global batch stated as {cfg.dotted_key(text, glob) if glob.file == f.name else glob.key}"
            f"={glob.value} in {glob.file}: unchanged; the framework derives accumulation"
        ]
    elif accum is not None and accum.number and accum.file == f.name:
        overrides.append(f"{cfg.dotted_key(text, accum)}={accum.number * 2}")
        after["grad_accum"] = accum.number * 2
        checks = [f"global batch {m} x {accum.number} = {m // 2} x {accum.number * 2}"]
    else:
        return RungPlan(
            rid,
            False,
            f"{f.name} states neither a global batch nor an accumulation: halving "
            f"{micro.key} would change the global batch; set it by hand with the framework's "
            "accumulation",
        )
    at = bash.word(job.script, f.hydra_after)
    if at is None:
        return RungPlan(
            rid,
            False,
            f"{f.hydra_after} is not a word on the command line runbook can add an override "
            f"after; add {' '.join(overrides)} by hand",
        )
    new = bash.replace(job.script, [(at, " " + " ".join(overrides))])
    checks.append(bash.bash_n(new, original=job.script))
    return RungPlan(
        rid,
        True,
        changes=[Change(job.name, job.name, job.script, new)],
        values_after=after,
        checks=checks,
        lands=[
            f"Hydra override{'s' * (len(overrides) > 1)} {' '.join(overrides)} after "
            f"{f.hydra_after} ({f.name} left as it is)"
        ],
    )


def _configs(job: JobFiles) -> RungPlan | None:
    """halve_micro_batch where the micro-batch lives in a config: the copy with it halved (and the
    accumulation doubled where it is stated, in a config or in the script), the script pointed
    at the copies, the global batch re-read from what was patched."""
    if "micro_batch" in job.in_script:
        return _override(job)
    if "micro_batch" not in job.in_configs:
        return None
    script, files, found, in_script = job.script, job.files, job.in_configs, job.in_script
    rid = RUNG.id
    micro = found["micro_batch"]
    hydra = next((f for f in files if f.name == micro.file and f.hydra_after), None)
    if hydra is not None:
        return _hydra(job, hydra, micro)
    m = micro.number or 0
    if m < 2 or m % 2:
        return RungPlan(
            rid,
            False,
            f"micro-batch {micro.key}={micro.value} in {micro.file} "
            "cannot be halved exactly; take the next rung",
        )
    accum = found.get("grad_accum")
    glob = found.get("global_batch") or in_script.get("global_batch")
    edits: dict[str, list[tuple[cfg.ConfigKnob, int]]] = {micro.file: [(micro, m // 2)]}
    new_script = script
    checks = []
    after = {"micro_batch": m // 2}
    if accum is not None and accum.number:
        edits.setdefault(accum.file, []).append((accum, accum.number * 2))
        after["grad_accum"] = accum.number * 2
        checks.append(
            f"global batch {m} x {accum.number} = {m // 2} x {accum.number * 2} per "
            "data-parallel rank"
        )
    elif "grad_accum" in in_script and in_script["grad_accum"].value:
        a = in_script["grad_accum"]
        try:
            new_script, _, _ = halve_accumulation_only(new_script, job.knobs, a.value or 0)
        except RunbookError as e:
            return RungPlan(rid, False, str(e).splitlines()[0])
        after["grad_accum"] = (a.value or 0) * 2
        checks.append(
            f"global batch {m} x {a.value} = {m // 2} x {(a.value or 0) * 2} per "
            "data-parallel rank (accumulation in the script)"
        )
    elif glob is not None:
        gv = glob.number if isinstance(glob, cfg.ConfigKnob) else glob.value
        checks.append(
            f"global batch stated as {glob.key}={gv}: unchanged; the framework derives accumulation"
        )
    else:
        return RungPlan(
            rid,
            False,
            f"micro-batch {micro.key} is in {micro.file} but neither an "
            "accumulation nor a global batch is stated anywhere runbook can read: "
            "halving it would change the global batch",
        )
    return copies(rid, job.name, script, new_script, files, edits, after, checks)


RUNG = RungDef(
    "halve_micro_batch",
    SCRIPT,
    "micro-batch / 2 and gradient accumulation x 2 (where the script sets the global "
    "batch instead, only the micro-batch); the global batch stays the same",
    template_vars=("micro_batch", "grad_accum"),
    shrinks_activations=True,
    fitted=True,
    applies=_applies,
    again=_again,
    script=_script,
    template=_template,
    configs=_configs,
    program=_program,
)
