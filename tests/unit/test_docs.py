"""Every `runbook` command the README and docs/ show stays true.

Commands are taken from the pages' code blocks (indented or fenced) and inline code. Each is
parsed against the CLI itself (the verb exists, every option is one it takes, every value has
the type it expects); the ones that need no cluster (diagnose and plan on files in this
repository, config, --help, --version) are also run, and must exit as documented. The commands
that act on a cluster (oom, hang, sweep, hook, ...) are run end to end by the integration tests,
not here."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from runbook.cli import cli

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
README_MAX_BYTES = 12 * 1024
_INLINE = re.compile(r"`(runbook [^`]+)`")


def commands(page: Path) -> list[tuple[str, str]]:
    """`runbook ...` command lines of a page, each with where it stands ("block" or "inline")."""
    out: list[tuple[str, str]] = []
    fenced = False
    for line in page.read_text().splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        code = fenced or line.startswith("    ")
        text = line.strip()
        if code:
            # a pipe's last command, a cron line's command, a prompt
            for part in re.split(r"\|\s*|\$\(|^\$\s+|\boncall\s+(?=runbook)", text):
                part = part.strip()
                if part.startswith("runbook "):
                    part = re.split(r" #| >| <", part, maxsplit=1)[0]  # a comment, a redirect
                    out.append(("block", part.strip()))
        else:
            out.extend(
                ("inline", re.split(r" #| >| <", m.group(1), maxsplit=1)[0].strip())
                for m in _INLINE.finditer(line)
            )
    return out


ALL = sorted({(p.relative_to(REPO).as_posix(), k, c) for p in PAGES for k, c in commands(p)})


def parse(argv: list[str]) -> None:
    """Parse argv as the CLI would, down to the verb, without running anything."""
    cmd: click.Command = cli
    ctx = cmd.make_context("runbook", list(argv))
    while isinstance(cmd, click.Group):
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return
        name, sub, rest = cmd.resolve_command(ctx, rest)
        assert sub is not None, f"no verb {name}"
        ctx = sub.make_context(name, rest, parent=ctx)
        cmd = sub


# Placeholders a page writes for what the reader fills in, and a value of the right type.
PLACEHOLDERS = {
    "ID": "123456",
    "NAME": "prod",
    "N": "8",
    "A": "2",
    "P": "1000000",
    "F": "slurm-1.out",
    "FILE": "slurm-1.out",
    "DIR": ".",
    "SCRIPT": "train.sbatch",
    "INCIDENT": "20261121-052259-254",
    "TEMPLATE": "train.sbatch.j2",
    "DIR_OR_FILE": ".",
}


def argv_of(command: str) -> list[str]:
    words = shlex.split(command.replace("...", ""))[1:]
    out = []
    for w in words:
        w = re.sub(r"^\[|\]$", "", w)
        if not w or w == "-" and out and out[-1] == "|":
            continue
        head, eq, value = w.partition("=")
        if eq and value in PLACEHOLDERS:
            w = f"{head}={PLACEHOLDERS[value]}"
        out.append(PLACEHOLDERS.get(w, w))
    return out


RUNNABLE = ("diagnose", "plan", "config", "--help", "--version")


def runnable(argv: list[str]) -> bool:
    verb = next((a for a in argv if not a.startswith("-")), None)
    if not argv or (verb not in RUNNABLE and not set(argv) & {"--help", "--version"}):
        return False
    # Files the command names (a slash or an extension): all must be in this repository.
    paths = [a for a in argv if re.search(r"/|\.\w+$", a) and not a.startswith("-")]
    return all((REPO / p).exists() for p in paths) and "--site" not in argv and "-" not in argv


@pytest.mark.parametrize("page, kind, command", ALL, ids=[f"{p}:{c}" for p, _, c in ALL])
def test_every_command_the_docs_show_is_one_the_cli_takes(page, kind, command):
    argv = argv_of(command)
    try:
        parse(argv)
    except click.exceptions.Exit:
        pass  # --help, --version
    except click.MissingParameter:
        # Prose names a verb with some of its options (`runbook oom --job ID` in a sentence);
        # a code block is a command to copy and must be whole.
        if kind == "block":
            raise
    except click.UsageError as e:
        pytest.fail(f"{page}: `{command}` is not a command runbook takes: {e.format_message()}")


RUN = [(p, c) for p, k, c in ALL if k == "block" and runnable(argv_of(c))]


@pytest.mark.parametrize("page, command", RUN, ids=[f"{p}:{c}" for p, c in RUN])
def test_the_docs_commands_that_need_no_cluster_run_as_shown(page, command, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "runbook", *argv_of(command)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
    )
    # 0: done; 4: `plan` where no rung applies (documented).
    assert r.returncode in (0, 4), f"{page}: `{command}` exited {r.returncode}:\n{r.stderr}"


def test_the_readme_is_a_front_page():
    assert len((REPO / "README.md").read_bytes()) <= README_MAX_BYTES
    text = (REPO / "README.md").read_text()
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).exists(), link
    assert "bash scripts/demo" in text and "bash scripts/test" in text


def test_there_are_commands_to_check():
    assert len(ALL) >= 30 and len(RUN) >= 5
