"""Training knobs that live in the config files a job script names (YAML, JSON, TOML).

A script names its recipe on the command line (`--config recipes/x.yaml`, `--deepspeed ds.json`,
`--job.config_file train.toml`) or in a variable (`CONFIG=...`). Each such file is read as text,
and a knob is a `key: value` (YAML), `"key": value` (JSON) or `key = value` (TOML) line whose key
is in the knob catalogue (playbooks/knobs.yaml) and whose value is a number. Edits are made on
the text, at the value's exact place, so comments and layout survive; the user's file is never
edited: a patched copy is written beside it (named for the rung) and the script is pointed at it.
Pure functions of text; reading the files is `read_configs`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from runbook.datafiles import packaged_dir, read_yaml
from runbook.jobfiles.script_args import bind, from_arguments, positional
from runbook.record import record

MAX_CONFIG_BYTES = 4 << 20
# The suffix ends the word: `data/chat.jsonl` is no `data/chat.json` (issue 63).
_PATH_TOKEN = re.compile(
    r"""(?P<q>["']?)(?P<path>[^\s"'=;|&<>()]+\.(?:ya?ml|json|toml))(?![\w.-])(?P=q)"""
)
# An option whose name says it takes data, not settings (`--data x.json`, `--train_file
# t.json`, `--dataset_path d.yaml`): the file after it is the data the job reads, never a config.
_DATA_OPTION = re.compile(
    r"(?<![\w-])--?(?![\w-]*config)[\w-]*(?:data|_file|-file|files|manifest|annotations?)[\w-]*"
    r"[= \t]+$"
)
_VAR = re.compile(r"\$\{?([A-Za-z_]\w*|\d)\}?")
_ASSIGN = re.compile(r"""(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)=(["']?)([^"'\s;]*)\2""")


@record(frozen=True)
class Catalogue:
    micro_batch: tuple[str, ...]
    grad_accum: tuple[str, ...]
    global_batch: tuple[str, ...]
    activation_checkpointing: tuple[str, ...]
    eval_batch: tuple[str, ...] = ()
    eval_accumulation: tuple[str, ...] = ()


def catalogue(path: str | Path | None = None) -> Catalogue:
    """The knob catalogue shipped with runbook (or the one at `path`)."""
    p = Path(path) if path else Path(packaged_dir()) / "knobs.yaml"
    data = read_yaml(p, "knob catalogue", "reinstall runbook: the catalogue ships inside it")
    return Catalogue(**{k: tuple(data.get(k) or ()) for k in Catalogue.__dataclass_fields__})


@record
class ConfigKnob:
    """One knob in one config file: where it is, as text."""

    file: str  # as the script names it
    key: str
    value: str  # as written
    line: int  # 1-based
    start: int  # offset of the value in the file's text
    end: int

    @property
    def number(self) -> int | None:
        v = self.value.strip("\"'")
        return int(v) if re.fullmatch(r"\d{1,9}", v) else None


@record
class ConfigFile:
    name: str  # as the script names it
    path: str  # resolved
    text: str | None  # None: named but not readable
    why: str = ""  # why not readable
    knobs: list[ConfigKnob] = field(default_factory=list)
    # The path as the script writes it, where it differs from `name` (variables the job's own
    # arguments set: `recipes/$MODEL/$TASK/config_$SUFFIX.yaml`); a copy is pointed at there.
    written: str = ""
    # A Hydra config chosen by name (`--config-path P --config-name N`): changed by an override
    # on the command line after this token (`model.micro_batch_size=2`), never by a copy (Hydra
    # looks for configs in P only).
    hydra_after: str = ""


def named_configs(script: str, args: Sequence[str] | None = None) -> list[str]:
    """Config file paths the script names, resolved (config_tokens)."""
    return [resolved for _, resolved in config_tokens(script, args)]


def _assigns(script: str, args: Sequence[str] | None) -> dict[str, str]:
    """The script's variables runbook knows the value of."""
    # A variable assigned once, to a literal, is known; one assigned empty, from the job's
    # arguments, or several times (`MODEL=""` then `MODEL="$2"`) is not.
    seen: dict[str, set[str]] = {}
    for m in _ASSIGN.finditer(script):
        seen.setdefault(m.group(1), set()).add(m.group(3))
    for m in re.finditer(r"(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)=[\"']?\$", script):
        seen.setdefault(m.group(1), set()).add("$")
    assigns = {
        k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and next(iter(v)) not in ("", "$")
    }
    if args is not None:
        assigns |= positional(args) | bind(script, args)
    return assigns


def resolve_word(script: str, word: str, args: Sequence[str] | None = None) -> str | None:
    """`word` with the script's simple variables and the job's arguments substituted (as
    config_tokens does); None where a variable is still in it."""
    assigns = _assigns(script, args)
    for _ in range(4):
        word = _VAR.sub(lambda v: assigns.get(v.group(1), v.group(0)), word.strip("\"'"))
    return None if "$" in word else word


def config_tokens(script: str, args: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(as written, resolved) for each config file path the script names, with its own simple
    variables substituted (`CONFIG=recipes/x.yaml ... --config $CONFIG`) and those the job's
    own arguments `args` set (jobfiles.script_args), in order, each once. A path that still
    holds a variable (set from the environment, or from arguments not known) is kept as
    written: it names a config runbook cannot read from here."""
    assigns = _assigns(script, args)
    out: list[tuple[str, str]] = []
    for line in script.splitlines():
        code = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else ""
        for m in _PATH_TOKEN.finditer(code):
            if _DATA_OPTION.search(code[: m.start()]):
                continue
            written = path = m.group("path")
            for _ in range(4):  # CFG=$DIR/x.yaml, DIR=recipes/$MODEL: a few levels
                path = _VAR.sub(lambda v: assigns.get(v.group(1), v.group(0)), path)
            if path not in [r for _, r in out]:
                out.append((written, path))
    return out


def _key_pattern(suffix: str, key: str) -> re.Pattern:
    k = re.escape(key)
    if suffix == ".json":
        return re.compile(rf'"{k}"\s*:\s*(?P<v>"[^"\n]*"|-?\d[\d.eE+-]*|true|false|null)')
    if suffix == ".sh":
        return re.compile(
            rf"""(?m)^[ \t]*(?:export[ \t]+)?{k}=(?P<v>"\d+"|'\d+'|\d+)(?=[\s;#]|$)"""
        )
    if suffix == ".toml":
        return re.compile(rf"(?m)^[ \t]*{k}[ \t]*=[ \t]*(?P<v>\"[^\"\n]*\"|[^\s#]+)")
    # YAML keys may be quoted, and flow style ends a value with a comma (gpt-neox's configs:
    # `"train_micro_batch_size_per_gpu": 4,`).
    return re.compile(
        rf"(?m)^[ \t-]*(?P<q>[\"']?){k}(?P=q)[ \t]*:[ \t]*(?P<v>\"[^\"\n]*\"|'[^'\n]*'|[^\s#,]+)"
    )


def is_shell(name: str) -> bool:
    """A file read as shell assignments (a script the job sources), not YAML, JSON or TOML."""
    return Path(name).suffix.lower() not in (".json", ".toml", ".yaml", ".yml")


def find_knobs(name: str, text: str, keys: tuple[str, ...]) -> list[ConfigKnob]:
    """Every `keys` entry in a config file's text, in file order (a script the job sources:
    its shell variables, `KEY=N` or `export KEY=N`)."""
    suffix = Path(name).suffix.lower()
    suffix = ".yaml" if suffix == ".yml" else suffix
    if is_shell(name):
        suffix = ".sh"
    found = []
    for key in keys:
        for m in _key_pattern(suffix, key).finditer(text):
            line = text.count("\n", 0, m.start("v")) + 1
            found.append(ConfigKnob(name, key, m.group("v"), line, m.start("v"), m.end("v")))
    return sorted(found, key=lambda k: k.start)


# `source env.sh` / `. ./env.sh`: a script the job sources sets variables its command reads.
_SOURCED = re.compile(
    r"""(?m)^[ \t]*(?:source|\.)[ \t]+(["']?)(?P<path>[\w./-]+)\1[ \t]*(?:[;#].*)?$"""
)


def read_one(name: str, path: Path, **more) -> ConfigFile:
    """One file of the job's tree as the script names it, read as its owner could."""
    return _read(name, path, **more)


def _read(name: str, path: Path, **more) -> ConfigFile:
    """One config file as the script names it (`name`), read from `path`, or why it could not
    be (too large, missing, not UTF-8)."""
    from runbook.jobfiles import owner_read

    try:
        if owner_read.size(path) > MAX_CONFIG_BYTES:
            return ConfigFile(
                name, str(path), None, f"larger than {MAX_CONFIG_BYTES} bytes", **more
            )
        # As the job's owner could read it: a config copy reaches the rerun and the report.
        return ConfigFile(name, str(path), owner_read.read_text(path), **more)
    except (OSError, UnicodeDecodeError) as e:
        why = getattr(e, "strerror", None) or str(e)
        return ConfigFile(name, str(path), None, why, **more)


def sourced_scripts(script: str, workdir: str | Path) -> list[ConfigFile]:
    """The scripts the job script sources, by a path under its folder that can be read; one
    outside it (`~/.bashrc`, a module system) holds no knob of the job's and is left out."""
    out = []
    for m in _SOURCED.finditer(script):
        name = m.group("path")
        if Path(name).is_absolute() or ".." in Path(name).parts or name.startswith("~"):
            continue
        f = _read(name, Path(workdir) / name)
        if f.text is not None:
            out.append(f)
    return out


_HYDRA_PATH = re.compile(r"""(?<![\w-])--config-path[= ]["']?(?P<v>[\w./-]+)""")
_HYDRA_NAME = re.compile(r"""(?<![\w-])--config-name[= ]["']?(?P<v>[\w./-]+)["']?""")


def hydra_configs(script: str, workdir: str | Path) -> list[ConfigFile]:
    """The Hydra config a script chooses by name (`--config-path=conf --config-name=gpt`: NeMo's
    examples): conf/gpt.yaml, relative to the entry file's folder (Hydra resolves a relative
    config path against the program that declares it), else the job's folder."""
    from runbook.jobfiles.source_check import named_entry_files

    code = "\n".join(ln for ln in script.splitlines() if not ln.lstrip().startswith("#"))
    name_m, path_m = _HYDRA_NAME.search(code), _HYDRA_PATH.search(code)
    entries = named_entry_files(script)
    base = Path(workdir) / Path(entries[0]).parent if entries else Path(workdir)
    declared = _hydra_declared(entries[0], Path(workdir)) if entries else {}
    folder = path_m.group("v") if path_m else declared.get("config_path")
    chosen = name_m.group("v") if name_m else declared.get("config_name")
    if folder is None or chosen is None:
        return []
    # Overrides go after the word that chose the config, else after the entry file.
    after = name_m.group(0) if name_m else entries[0]
    # `--config-name gpt/base` names conf/gpt/base.yaml
    file = chosen if chosen.endswith((".yaml", ".yml")) else chosen + ".yaml"
    path = (Path(folder) if Path(folder).is_absolute() else base / folder) / file
    return [_read(str(Path(folder) / file), path, hydra_after=after)]


def _hydra_declared(entry: str, workdir: Path) -> dict[str, str]:
    """config_path and config_name as the entry file's Hydra decorator declares them
    (`@hydra.main(config_path="conf", config_name="train")`, NeMo's `@hydra_runner(...)`)."""
    import ast

    f = _read(entry, workdir / entry)
    try:
        tree = ast.parse(f.text or "")
    except SyntaxError:
        return {}
    for node in ast.walk(tree):
        for d in getattr(node, "decorator_list", []):
            if not isinstance(d, ast.Call):
                continue
            name = getattr(d.func, "attr", getattr(d.func, "id", ""))
            if name in ("main", "hydra_runner"):
                return {
                    k.arg: k.value.value
                    for k in d.keywords
                    if k.arg in ("config_path", "config_name")
                    and isinstance(k.value, ast.Constant)
                    and isinstance(k.value.value, str)
                }
    return {}


def dotted_key(text: str, knob: ConfigKnob) -> str:
    """The YAML path of a knob as Hydra's overrides name it (`model.micro_batch_size`): its key
    under each less-indented key above it."""
    lines = text.splitlines()
    line = lines[knob.line - 1]
    indent = len(line) - len(line.lstrip())
    path = [knob.key]
    for above in reversed(lines[: knob.line - 1]):
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        i = len(above) - len(above.lstrip())
        m = re.match(r"[ \t]*([\w-]+)[ \t]*:[ \t]*(?:#.*)?$", above)
        if i < indent and m:
            path.insert(0, m.group(1))
            indent = i
        if indent == 0:
            break
    return ".".join(path)


def read_configs(
    script: str, workdir: str | Path, args: Sequence[str] | None = None
) -> list[ConfigFile]:
    """The config files the script names, read from `workdir` (where the job runs); `args`: the
    job's own arguments (None: not known)."""
    out = []
    for written, name in config_tokens(script, args):
        token = written if written != name else ""
        unset = sorted(set(_VAR.findall(name)))
        if unset:
            by_args = from_arguments(script, unset) if args is None else []
            when = "set only when the job runs" + (
                f" (${', $'.join(by_args)} from the job's arguments: give them after the script)"
                if by_args
                else ""
            )
            why = f"its path depends on ${', $'.join(unset)}, {when}"
            out.append(ConfigFile(name, name, None, why, written=token))
            continue
        p = Path(name) if Path(name).is_absolute() else Path(workdir) / name
        out.append(_read(name, p, written=token))
    return out + sourced_scripts(script, workdir) + hydra_configs(script, workdir)


def copy_name(name: str, rung: str) -> str:
    """The patched copy's name, beside the original: `recipes/x.yaml` -> `recipes/x.runbook-
    halve_micro_batch.yaml` (a copy of a copy replaces the earlier rung's suffix)."""
    p = Path(name)
    stem = re.sub(r"\.runbook-[\w-]+$", "", p.stem)
    # `./env.sh` keeps its `./`: `source env.sh` would look in $PATH first.
    here = "./" if name.startswith("./") else ""
    return here + str(p.with_name(f"{stem}.runbook-{rung}{p.suffix}"))


def replace_value(text: str, knob: ConfigKnob, value: int) -> str:
    """The config text with this knob's value replaced, quoting kept."""
    old = knob.value
    q = old[0] if old[:1] in ("'", '"') and old[-1:] == old[:1] else ""
    return text[: knob.start] + f"{q}{value}{q}" + text[knob.end :]


def point_at_copy(script: str, f: ConfigFile, new: str) -> str:
    """The script pointed at the copy `new` of config `f`, where the script writes its path (a
    path built from the job's arguments is replaced by the copy's resolved path: the rerun gets
    the same arguments, and the copy is that one file)."""
    return point_script_at(script, f.written or f.name, new)


def point_script_at(script: str, old: str, new: str) -> str:
    """The script with every reference to config `old` replaced by `new` (as a whole token, or
    in the script's own assignment of a variable that holds it)."""
    pattern = re.compile(rf"(?<![\w./-]){re.escape(old)}(?![\w./-])")
    return pattern.sub(lambda _: new, script)
