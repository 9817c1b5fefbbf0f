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


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep"],
        ["hook"],
    ],
)
def test_unbuilt_verbs_say_so_and_exit_2(argv):
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert "not built yet" in result.output


def test_unbuilt_verb_json_error():
    result = CliRunner().invoke(cli, ["hook", "--json"] if False else ["sweep", "--json"])
    assert result.exit_code == 2
    doc = json.loads(result.output)
    assert doc["exit_code"] == 2 and "not built yet" in doc["error"]


def test_unknown_site_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("RUNBOOK_SITE", raising=False)
    from runbook.cli import AppContext
    from runbook.errors import ConfigError

    with pytest.raises(ConfigError):
        AppContext("no-such-site").site()
