"""The CLI skeleton: every verb registered, unfinished verbs refuse with exit 2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from runbook import __version__
from runbook.cli import cli

VERBS = ["oom", "sweep", "hook", "diagnose", "verify", "submit", "incidents", "report"]


def test_help_lists_every_verb():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for verb in VERBS:
        assert f"  {verb} " in result.output


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


@pytest.mark.parametrize("verb", VERBS)
def test_every_verb_has_help_with_an_example(verb):
    result = CliRunner().invoke(cli, [verb, "--help"])
    assert result.exit_code == 0
    assert "runbook" in result.output and ("Example" in result.output or "example" in result.output)


def test_usage_errors_exit_2_and_say_why():
    result = CliRunner().invoke(cli, ["oom", "--job", "12; rm -rf /"])
    assert result.exit_code == 2 and "is not a Slurm job id" in result.output
    result = CliRunner().invoke(cli, ["sweep", "--since", "soon"])
    assert result.exit_code == 2 and "expected a number and a unit" in result.output


def test_errors_as_json_when_json_was_asked():
    result = CliRunner().invoke(cli, ["oom", "--job", "x y", "--json"])
    assert result.exit_code == 2
    doc = json.loads(result.output)
    assert doc["exit_code"] == 2 and "not a Slurm job id" in doc["error"]


def test_unknown_site_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("RUNBOOK_SITE", raising=False)
    from runbook.cli import AppContext
    from runbook.errors import ConfigError

    with pytest.raises(ConfigError):
        AppContext("no-such-site").site()
