"""A job's knobs where it keeps them, and a rung's edit of its config files: the knobs found in
the script (flags, variables) and in the config files it names (a YAML, JSON or TOML the
training reads, jobfiles.configs finds), and the copies of those configs with a knob changed,
each re-read from what was written, the script pointed at the copies. Knows no rung: a rung's
`configs` edit (runbook.rungs) calls `copies`."""

from __future__ import annotations

import difflib
import re
from dataclasses import field
from typing import Any

from runbook.jobfiles import bash
from runbook.jobfiles import configs as cfg
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
        hits = bash.find(script, bash.names(knobs, key))
        if hits:
            h = hits[0]
            kind = "flag" if h.name.startswith("-") else "env"
            out[key] = Knob(
                bash.int_value(script, h), name, _line(script, h.start), h.name, kind, h.value
            )
    return out


def config_knobs(files: list[cfg.ConfigFile], cat: cfg.Catalogue) -> dict[str, cfg.ConfigKnob]:
    """The first numeric knob of each kind across the named configs ("auto" and other
    non-numbers defer to elsewhere: not a knob here). Where no catalogued name is a micro-batch,
    a YAML's keys are named by what they say (asking.roles: `train.batch_size` beside
    `train.grad_accum`), only with an accumulation or a global batch to keep beside it."""
    out: dict[str, cfg.ConfigKnob] = {}
    for f in files:
        if f.text is None:
            continue
        for key in KNOB_NAMES:
            for k in cfg.find_knobs(f.name, f.text, getattr(cat, key)):
                if k.number is not None and key not in out:
                    out[key] = k
    if "micro_batch" not in out:
        for f in files:
            # Not a Hydra app's config: its command line's overrides win over the file's values.
            yaml_file = f.name.lower().endswith((".yaml", ".yml")) and not f.hydra_after
            if f.text is not None and yaml_file:
                out = {**_named_by_roles(f), **out}
                if "micro_batch" in out:
                    break
    return out


def _named_by_roles(f: cfg.ConfigFile) -> dict[str, cfg.ConfigKnob]:
    import yaml

    from runbook.asking.parse_only import flatten
    from runbook.asking.roles import roles

    try:
        doc = yaml.safe_load(f.text or "")
    except yaml.YAMLError:
        return {}
    if not isinstance(doc, dict):
        return {}
    r = roles(flatten(doc))
    if r.micro is None or (r.accum is None and r.global_ is None):
        return {}
    out = {}
    for kind, dotted in (
        ("micro_batch", r.micro),
        ("grad_accum", r.accum),
        ("global_batch", r.global_),
    ):
        if dotted is None:
            continue
        leaf = dotted.rsplit(".", 1)[-1]
        at = cfg.find_knobs(f.name, f.text or "", (leaf,))
        # The key once in the file (a copy is re-read by its key), where the YAML says it is.
        if len(at) != 1 or at[0].number is None or cfg.dotted_key(f.text or "", at[0]) != dotted:
            return {}
        out[kind] = at[0]
    return out


def sourced_knobs(script: str, files: list[cfg.ConfigFile], knobs) -> dict[str, cfg.ConfigKnob]:
    """A knob the script passes as a variable it never assigns (`--micro-batch-size $MBS`),
    assigned a number in a script it sources (`MBS=4` in `env.sh`): that assignment, as a config
    knob of the sourced file (changed in a copy, the `source` line pointed at it)."""
    out: dict[str, cfg.ConfigKnob] = {}
    shell = [f for f in files if f.text is not None and cfg.is_shell(f.name)]
    for key in KNOB_NAMES if shell else ():
        hit = bash.maybe(script, bash.names(knobs, key))
        if hit is None or bash.int_value(script, hit) is not None:
            continue
        m = re.fullmatch(
            r"[\"']?\$\{?([A-Za-z_]\w*)\}?[\"']?", bash.literal_site(script, hit).value
        )
        if m is None:
            continue
        for f in shell:
            found = cfg.find_knobs(f.name, f.text or "", (m.group(1),))
            if found and found[0].number is not None:
                out[key] = found[0]
                break
    return out


def copies(rid, name, script, new_script, files, edits, after, checks) -> RungPlan:
    """Each config's copy with its edits, re-read (the value is where the knob was, and
    nothing else moved), and the script pointed at the copies."""
    changes = []
    texts = {f.name: f.text for f in files if f.text is not None}
    by_name = {f.name: f for f in files}
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
        new_script = cfg.point_at_copy(new_script, by_name[fname], new_name)
    changes.insert(0, Change(name, name, script, new_script))
    checks.append(bash.bash_n(new_script, original=script))
    return RungPlan(rid, True, changes=changes, values_after=after, checks=checks)


@record
class JobFiles:
    """A job's files as a rung's `configs` edit reads them: the script (its name in the plan),
    the config files it names, the knobs found in each (script_knobs, config_knobs), the site's
    knob names and the catalogue of config keys."""

    script: str
    name: str
    files: list[cfg.ConfigFile]
    knobs: Any
    cat: cfg.Catalogue
    in_script: dict[str, Knob] = field(default_factory=dict)
    in_configs: dict[str, cfg.ConfigKnob] = field(default_factory=dict)

    @classmethod
    def read(cls, script: str, name: str, files: list[cfg.ConfigFile], knobs, cat=None):
        cat = cat or cfg.catalogue()
        in_script, sourced = script_knobs(script, name, knobs), sourced_knobs(script, files, knobs)
        return cls(
            script,
            name,
            files,
            knobs,
            cat,
            {k: v for k, v in in_script.items() if k not in sourced},
            config_knobs(files, cat) | sourced,
        )
