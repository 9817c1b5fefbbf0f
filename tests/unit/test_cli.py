"""The CLI skeleton: every verb registered, unfinished verbs refuse with exit 2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from runbook import __version__
from runbook.cli import cli

VERBS = ["oom", "sweep", "hook", "diagnose", "verify", "submit", "incidents", "report", "config"]


def test_help_lists_every_verb():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for verb in VERBS:
        assert f"  {verb} " in result.output


def test_version_names_the_playbooks_in_use(tmp_path, monkeypatch):
    monkeypatch.delenv("RUNBOOK_SITE", raising=False)
    monkeypatch.delenv("RUNBOOK_PLAYBOOKS", raising=False)
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output
    assert "playbooks:" in result.output and "shipped with runbook" in result.output
    own = tmp_path / "pb"
    result = CliRunner().invoke(cli, ["--version"], env={"RUNBOOK_PLAYBOOKS": str(own)})
    assert f"playbooks: {own} (site setting [playbooks] dir)" in result.output


def test_root_help_lists_verbs_from_the_table_without_drift():
    """The root help reads one-line helps from cli.COMMANDS (so --help imports no verb); each must
    be the verb's own docstring line."""
    import importlib

    from runbook.cli import COMMANDS

    for name, (module, attr, short) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attr)
        assert command.get_short_help_str(200) == short, name


def test_job_id_as_argument_or_option():
    for argv in (["oom", "12; rm -rf /"], ["oom", "--job", "12; rm -rf /"]):
        r = CliRunner().invoke(cli, argv)
        assert r.exit_code == 3 and "is not a Slurm job id" in r.output, argv
    r = CliRunner().invoke(cli, ["oom"])
    assert r.exit_code == 2 and "which job?" in r.output
    r = CliRunner().invoke(cli, ["oom", "1", "--job", "2"])
    assert r.exit_code == 2 and "two job ids" in r.output


def test_quiet_drops_progress_lines(capsys):
    from runbook.cli import AppContext

    AppContext(None, verbosity=-1).progress("logs ...")
    assert capsys.readouterr().err == ""
    AppContext(None).progress("logs ...")
    assert capsys.readouterr().err == "  logs ...\n"


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help_with_an_example(verb):
    result = CliRunner().invoke(cli, [verb, "--help"])
    assert result.exit_code == 0
    assert "runbook" in result.output and ("Example" in result.output or "example" in result.output)


def test_usage_errors_exit_2_and_say_why():
    result = CliRunner().invoke(cli, ["sweep", "--since", "soon"])
    assert result.exit_code == 2 and "expected a number and a unit" in result.output


def test_errors_as_json_when_json_was_asked():
    result = CliRunner().invoke(cli, ["oom", "--job", "x y", "--json"])
    assert result.exit_code == 3
    doc = json.loads(result.output)
    assert doc["exit_code"] == 3 and "not a Slurm job id" in doc["error"]


@pytest.mark.parametrize(
    "bad",
    ["9" * 5000, "4294967296", "12_4294967296", "1+99999999999", "12; rm -rf /", "-1", "0x10"],
)
def test_a_job_id_is_32_bit_and_anything_else_exits_3_naming_it(bad):
    """Issue 34 item 8: an id Slurm could never give is input runbook cannot read (exit 3),
    named in the error cut to a readable length: never a file name, never a traceback."""
    r = CliRunner().invoke(cli, ["oom", "--job", bad])
    assert r.exit_code == 3, r.output
    assert "is not a Slurm job id" in r.output and "Traceback" not in r.output
    assert len(r.output) < 600


@pytest.mark.parametrize("good", ["4294967295", "12_0", "7+1", "123_4294967295"])
def test_the_largest_32_bit_ids_are_job_ids(good):
    from runbook.slurm.client import valid_job_id

    assert valid_job_id(good) == good


def test_unknown_site_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("RUNBOOK_SITE", raising=False)
    from runbook.cli import AppContext
    from runbook.errors import ConfigError

    with pytest.raises(ConfigError):
        AppContext("no-such-site").site()
