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
from pathlib import Path

from runbook.evidence.source_check import job_files, named_entry_files
from runbook.record import record

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
    """The options of the program the job script runs: its first entry file and the modules of
    the job's tree it imports (source_check.job_files), read where the job runs (its working
    folder, over the shared filesystem, as configs and checkpoints are)."""
    entries = named_entry_files(script)
    if not entries:
        return ProgramOptions(None, None, "the job script names no Python file it runs")
    entry = entries[0]
    notes: list[str] = []
    files = list(job_files(script, workdir, notes, entries=[entry]))
    first = files[0] if files and files[0].entry else None
    if first is None or first.tree is None:
        why = "; ".join(notes) if first is None else f"{first.path} is not Python runbook parses"
        return ProgramOptions(entry, None, why or f"{entry} could not be read")
    trees = [f.tree for f in files if f.tree is not None]
    flags: set[str] = set()
    hf, handed = False, set()
    for t in trees:
        found, uses_hf, dataclasses = options_in(t)
        flags |= found
        hf |= uses_hf
        handed |= dataclasses
    for t in trees:
        flags |= _dataclass_fields(t, handed)
    if hf:
        flags |= HF_TRAINING_FLAGS
    how = f"read from {entry}" + (
        f" and {len(files) - 1} module(s) it imports" if len(files) > 1 else ""
    )
    return ProgramOptions(entry, flags, how + (" (Hugging Face arguments)" if hf else ""))
