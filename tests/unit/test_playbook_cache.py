"""The parsed-YAML cache of runbook's data files (playbook.read_yaml): a run whose playbooks did
not change reads JSON and never imports PyYAML; an entry is believed only for the very same
content and runbook version; a damaged or unwritable cache costs nothing but the parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runbook import playbook
from runbook.errors import ConfigError


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("RUNBOOK_CACHE_DIR", str(d))
    return d


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "yaml").glob("*.json")) if (cache / "yaml").exists() else []


def test_second_read_comes_from_the_cache_without_pyyaml(cache, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("thresholds:\n  near: 0.9\nladder:\n  true_oom: [halve_micro_batch]\n")
    want = {"thresholds": {"near": 0.9}, "ladder": {"true_oom": ["halve_micro_batch"]}}
    assert playbook.read_yaml(f, "playbook", "fix") == want
    (entry,) = entries(cache)
    # A fresh process: the data comes back and yaml was never imported.
    code = (
        "import sys; from pathlib import Path; from runbook import playbook; "
        f"d = playbook.read_yaml(Path({str(f)!r}), 'playbook', 'fix'); "
        "print(repr(d)); print('yaml' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    ).stdout.split("\n")
    assert out[0] == repr(want) and out[1] == "False"
    # Edited: another content, another entry, the new data.
    f.write_text("thresholds:\n  near: 0.8\n")
    assert playbook.read_yaml(f, "playbook", "fix") == {"thresholds": {"near": 0.8}}
    assert len(entries(cache)) == 2


def test_an_entry_for_other_content_or_damaged_is_not_believed(cache, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("a: 1\n")
    playbook.read_yaml(f, "playbook", "fix")
    (entry,) = entries(cache)
    doc = json.loads(entry.read_text())
    doc["source"], doc["data"] = "a: 2\n", {"a": 2}  # same name, not this content
    entry.write_text(json.dumps(doc))
    assert playbook.read_yaml(f, "playbook", "fix") == {"a": 1}
    entry.write_text("{not json")
    assert playbook.read_yaml(f, "playbook", "fix") == {"a": 1}
    doc = json.loads(entry.read_text())
    doc["runbook"] = "0.0.0-another"  # another release's parse
    entry.write_text(json.dumps(doc))
    assert playbook.read_yaml(f, "playbook", "fix") == {"a": 1}


def test_data_json_cannot_hold_is_not_cached_and_errors_still_name_the_file(cache, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("1: one\nwhen: 2026-11-23\n")  # an int key and a date: JSON would change them
    data = playbook.read_yaml(f, "playbook", "fix")
    assert 1 in data and entries(cache) == []
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="bad.yaml is not valid YAML"):
        playbook.read_yaml(bad, "playbook", "fix")
    with pytest.raises(ConfigError, match="missing.yaml not found"):
        playbook.read_yaml(tmp_path / "missing.yaml", "playbook", "fix")


def test_no_cache_when_turned_off_or_unwritable(tmp_path, monkeypatch):
    f = tmp_path / "p.yaml"
    f.write_text("a: 1\n")
    monkeypatch.setenv("RUNBOOK_CACHE_DIR", "")
    assert playbook.read_yaml(f, "playbook", "fix") == {"a": 1}
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("RUNBOOK_CACHE_DIR", str(blocker / "sub"))  # cannot be made
    assert playbook.read_yaml(f, "playbook", "fix") == {"a": 1}
