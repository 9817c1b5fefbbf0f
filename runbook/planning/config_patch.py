"""A rung whose knob is in a config file the job script names (a YAML, JSON or TOML the training
reads, planning.configs finds): the copy with the knob changed, the script pointed at the copy,
and the values re-read from what was patched. `patch` is the job's patch for any rung: the
script's own knobs first (planning.sbatch_patch), then its configs."""

from __future__ import annotations

import difflib
import functools
from dataclasses import field

from runbook.errors import RunbookError
from runbook.evidence import configs as cfg
from runbook.planning import sbatch_patch as sp
from runbook.planning.sbatch_patch import Patch, RungNotApplicable
from runbook.record import record

KNOB_NAMES = ("micro_batch", "grad_accum", "global_batch")


@record
class Knob:
    value: int | None
    file: str
    line: int
    key: str
    kind: str  # flag | env | config | template
    text: str = ""  # the value as written

    def view(self) -> dict:
        return {
            "value": self.value,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "kind": self.kind,
            "as_written": self.text,
        }


@record
class Change:
    file: str
    new_file: str
    old: str
    new: str

    def view(self) -> dict:
        diff = "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.file}",
                tofile=f"b/{self.new_file}",
            )
        )
        return {"file": self.file, "new_file": self.new_file, "diff": diff}


@record
class RungPlan:
    id: str
    applicable: bool
    reason: str = ""
    changes: list[Change] = field(default_factory=list)
    values_after: dict = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)
    # Every place the change lands, in words: each edited value, and what goes on sbatch's
    # command line instead of into the script (a directive it overrides is said, not edited).
    lands: list[str] = field(default_factory=list)

    def view(self) -> dict:
        if not self.applicable:
            return {"id": self.id, "applicable": False, "reason": self.reason}
        return {
            "id": self.id,
            "applicable": True,
            "changes": [c.view() for c in self.changes],
            "values_after": self.values_after,
            "checks": self.checks,
            "lands": self.lands,
        }


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def script_knobs(script: str, name: str, knobs) -> dict[str, Knob]:
    out = {}
    for key in KNOB_NAMES:
        hits = sp._find(script, sp.names(knobs, key))
        if hits:
            h = hits[0]
            kind = "flag" if h.name.startswith("-") else "env"
            out[key] = Knob(
                sp._int_value(script, h), name, _line(script, h.start), h.name, kind, h.value
            )
    return out


def config_knobs(files: list[cfg.ConfigFile], cat: cfg.Catalogue) -> dict[str, cfg.ConfigKnob]:
    """The first numeric knob of each kind across the named configs ("auto" and other
    non-numbers defer to elsewhere: not a knob here)."""
    out: dict[str, cfg.ConfigKnob] = {}
    for f in files:
        if f.text is None:
            continue
        for key in KNOB_NAMES:
            for k in cfg.find_knobs(f.name, f.text, getattr(cat, key)):
                if k.number is not None and key not in out:
                    out[key] = k
    return out


def _halve_in_configs(
    script: str,
    name: str,
    files: list[cfg.ConfigFile],
    found: dict[str, cfg.ConfigKnob],
    in_script: dict[str, Knob],
    knobs,
) -> RungPlan:
    """halve_micro_batch where the micro-batch lives in a config: the copy with it halved (and the
    accumulation doubled where it is stated, in a config or in the script), the script pointed
    at the copies, the global batch re-read from what was patched."""
    rid = "halve_micro_batch"
    micro = found["micro_batch"]
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
    texts = {f.name: f.text for f in files if f.text is not None}
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
            new_script, _, _ = sp.halve_accumulation_only(new_script, knobs, a.value or 0)
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
    return _copies(rid, name, script, new_script, texts, edits, after, checks)


def _copies(rid, name, script, new_script, texts, edits, after, checks) -> RungPlan:
    """Each config's copy with its edits, re-read (the value is where the knob was, and
    nothing else moved), and the script pointed at the copies."""
    changes = []
    for fname, file_edits in edits.items():
        text = texts[fname]
        for knob, value in sorted(file_edits, key=lambda e: -e[0].start):
            text = cfg.replace_value(text, knob, value)
        new_name = cfg.copy_name(fname, rid)
        cat_keys = tuple(k.key for k, _ in file_edits)
        reread = {k.key: k.number for k in cfg.find_knobs(fname, text, cat_keys)}
        for knob, value in file_edits:
            if reread.get(knob.key) != value:
                return RungPlan(
                    rid,
                    False,
                    f"re-reading the patched copy of {fname} found "
                    f"{knob.key}={reread.get(knob.key)}, not {value}",
                )
        changes.append(Change(fname, new_name, texts[fname], text))
        new_script = cfg.point_script_at(new_script, fname, new_name)
    changes.insert(0, Change(name, name, script, new_script))
    checks.append(sp.bash_n(new_script, original=script))
    return RungPlan(rid, True, changes=changes, values_after=after, checks=checks)


def _checkpointing_in_configs(
    script: str, name: str, files: list[cfg.ConfigFile], cat: cfg.Catalogue
) -> RungPlan | None:
    """activation_checkpointing where a config holds the switch (`gradient_checkpointing:
    false`): the copy with it on; None when no config has the switch."""
    rid = "activation_checkpointing"
    for f in files:
        if f.text is None:
            continue
        for k in cfg.find_knobs(f.name, f.text, cat.activation_checkpointing):
            v = k.value.strip("\"'").lower()
            if v in ("true", "1", "yes"):
                return RungPlan(rid, False, f"{k.key} is already on in {f.name}:{k.line}")
            if v in ("false", "0", "no"):
                on = "1" if v == "0" else "true"
                text = f.text[: k.start] + on + f.text[k.end :]
                new_name = cfg.copy_name(f.name, rid)
                new_script = cfg.point_script_at(script, f.name, new_name)
                return RungPlan(
                    rid,
                    True,
                    changes=[
                        Change(name, name, script, new_script),
                        Change(f.name, new_name, f.text, text),
                    ],
                    values_after={k.key: True},
                    checks=[sp.bash_n(new_script, original=script)],
                )
    return None


def config_patch(script: str, rung: str, files: list[cfg.ConfigFile], knobs, *, why: str):
    """The Patch for a rung whose knob is in a config file the script names (for `runbook oom`):
    the new script pointed at the copies, and the copies. RungNotApplicable (the script's own
    reason, or the configs') when no config holds the knob."""
    cat = cfg.catalogue()
    in_script = script_knobs(script, "job script", knobs)
    in_configs = config_knobs(files, cat)
    planned: RungPlan | None = None
    if (
        rung == "halve_micro_batch"
        and "micro_batch" not in in_script
        and "micro_batch" in in_configs
    ):
        planned = _halve_in_configs(script, "job script", files, in_configs, in_script, knobs)
    elif rung == "activation_checkpointing":
        planned = _checkpointing_in_configs(script, "job script", files, cat)
    if planned is None or not planned.applicable:
        raise RungNotApplicable(planned.reason if planned else why)
    new_script = planned.changes[0].new
    copies = planned.changes[1:]
    changes = [
        f"{c.file}: a copy {c.new_file} with the change; the script points at it" for c in copies
    ]
    changes += [f"{k} -> {v}" for k, v in planned.values_after.items()]
    return Patch(
        rung,
        script,
        new_script,
        changes,
        list(planned.checks),
        files={c.new_file: c.new for c in copies},
        file_diffs=[c.view()["diff"] for c in copies],
    )


def patch(
    script: str,
    rung: str,
    knobs,
    *,
    resume=None,
    configs=None,
    world=None,
    micro_batch=None,
    program=None,
) -> Patch:
    """The job's patch for `rung` (planning.sbatch_patch.patch), with a knob the script does not
    hold looked for in the config `configs` it names, and changed in copies of them."""
    fallback = functools.partial(config_patch, script, rung, configs, knobs) if configs else None
    return sp.patch(
        script,
        rung,
        knobs,
        resume=resume,
        world=world,
        micro_batch=micro_batch,
        fallback=fallback,
        program=program,
    )
