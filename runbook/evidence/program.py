"""The options the job's own program takes, read from its source without running it: the entry
file its script runs (`python train.py`, `torchrun ... train.py`, `accelerate launch train.py`)
and the modules of the job's tree it imports. A rung adds a flag to the training command only
where the program is known to take it; where its source cannot be read, that is said.

What counts as an option: argparse's `add_argument("--x", ...)`, click's and typer's
`option("--x")`, and a Hugging Face program's arguments (`HfArgumentParser`, `TrainingArguments`
and the TRL configs built on them): TrainingArguments' documented fields, and the fields of the
program's own dataclasses it hands to HfArgumentParser, each as `--field_name`."""

from __future__ import annotations

import ast
from dataclasses import field
from pathlib import Path

from runbook.evidence.source_check import _imports, named_entry_files
from runbook.record import record

MAX_FILES = 20
MAX_FILE_BYTES = 2 << 20
# TrainingArguments fields a rung may set (transformers' documented arguments).
HF_TRAINING_FLAGS = frozenset(
    {
        "--per_device_train_batch_size",
        "--per_device_eval_batch_size",
        "--gradient_accumulation_steps",
        "--eval_accumulation_steps",
        "--gradient_checkpointing",
    }
)
_HF_NAMES = {"HfArgumentParser", "TrainingArguments", "Seq2SeqTrainingArguments", "TrlParser"}
_HF_NAMES |= {"SFTConfig", "DPOConfig", "GRPOConfig", "RewardConfig", "ORPOConfig", "KTOConfig"}
_OPTION_CALLS = {"add_argument", "option", "Option"}


@record
class ProgramOptions:
    entry: str | None  # the entry file the script runs, as the script names it
    flags: set[str] | None = None  # None: not known (the source was not read)
    why: str = ""  # why the options are not known, or where they came from
    files: list[str] = field(default_factory=list)

    def takes(self, flag: str) -> bool | None:
        """True or False where the source was read, None where it was not."""
        return None if self.flags is None else flag in self.flags


def options_in(tree: ast.AST) -> tuple[set[str], bool, set[str]]:
    """(option strings, whether the file uses Hugging Face's argument classes, the names of
    dataclasses it hands to HfArgumentParser) of one parsed file: a pure function of its AST."""
    flags: set[str] = set()
    hf = False
    handed: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id in _HF_NAMES
            or isinstance(node, ast.Attribute)
            and node.attr in _HF_NAMES
        ):
            hf = True
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if name in _OPTION_CALLS:
            for a in node.args:
                if (
                    isinstance(a, ast.Constant)
                    and isinstance(a.value, str)
                    and a.value.startswith("-")
                ):
                    flags.add(a.value)
        if name == "HfArgumentParser" and node.args:
            first = node.args[0]
            items = first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]
            handed |= {i.id for i in items if isinstance(i, ast.Name)}
    return flags, hf, handed


def _dataclass_fields(tree: ast.AST, names: set[str]) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in names:
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    out.add(f"--{stmt.target.id}")
    return out


def program_options(script: str, workdir: str | Path) -> ProgramOptions:
    """The options of the program the job script runs, read where the job runs (its working
    folder, over the shared filesystem, as configs and checkpoints are)."""
    entries = named_entry_files(script)
    if not entries:
        return ProgramOptions(None, None, "the job script names no Python file it runs")
    entry = entries[0]
    work = Path(workdir).resolve()
    path = (Path(entry) if Path(entry).is_absolute() else work / entry).resolve()
    trees: list[ast.AST] = []
    files: list[str] = []
    queue, seen = [path], set()
    while queue and len(files) < MAX_FILES:
        p = queue.pop(0)
        if p in seen:
            continue
        seen.add(p)
        try:
            if p.stat().st_size > MAX_FILE_BYTES:
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            if p == path:
                return ProgramOptions(entry, None, f"{path} could not be read: {e.strerror or e}")
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            if p == path:
                return ProgramOptions(entry, None, f"{path} is not Python runbook can parse")
            continue
        trees.append(tree)
        files.append(str(p))
        for mod in _imports(tree, p.name):
            for cand in (p.parent / f"{mod}.py", p.parent / mod / "__init__.py"):
                if cand.is_file() and (work in cand.resolve().parents or p.parent in cand.parents):
                    queue.append(cand.resolve())
    flags: set[str] = set()
    hf, handed = False, set()
    for t in trees:
        f, h, d = options_in(t)
        flags |= f
        hf |= h
        handed |= d
    for t in trees:
        flags |= _dataclass_fields(t, handed)
    if hf:
        flags |= HF_TRAINING_FLAGS
    how = f"read from {entry}" + (
        f" and {len(files) - 1} module(s) it imports" if len(files) > 1 else ""
    )
    return ProgramOptions(entry, flags, how + (" (Hugging Face arguments)" if hf else ""), files)
