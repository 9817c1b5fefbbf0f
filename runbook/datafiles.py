"""runbook's data files (the playbooks, the knob catalogue, the Xid catalogue): where the packaged
ones are, where a site's are, and their YAML read once and cached by content. Below every stage:
the playbook and the readers of a job's files alike read through it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import zlib

from runbook import __version__
from runbook.errors import ConfigError

# Paths here are strings, not pathlib: `runbook diagnose` reads a playbook on every start, and
# on an installed Python 3.10 importing pathlib costs ~6 ms of it (bench/startup.py).


def packaged_dir() -> str:
    """The playbooks folder inside the installed package: a real folder for wheels and checkouts
    alike (runbook is never imported from a zip), so found from this file, not through
    importlib.resources, whose import costs Python 3.10 15 ms of every start (bench/startup.py)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "playbooks")


def playbook_dir(site_dir: str = "") -> str:
    """The folder the playbooks are read from: the site's, else the packaged one."""
    return os.path.expanduser(site_dir) if site_dir else packaged_dir()


def describe_source(site_dir: str = "") -> str:
    """Where the playbooks come from, in words (for `runbook --version` and reports)."""
    if site_dir:
        return f"{playbook_dir(site_dir)} (site setting [playbooks] dir)"
    return f"{packaged_dir()} (shipped with runbook)"


def read_yaml(path: str | os.PathLike, what: str, fix: str):
    """A YAML data file of runbook's, with errors that name it. The parsed data is kept in the
    user's cache, keyed by the file's content: importing PyYAML costs more than a `runbook
    diagnose` does otherwise, so a run whose playbooks did not change reads JSON instead."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} not found", hint=fix) from None
    except OSError as e:
        raise ConfigError(f"cannot read {what} {path}: {e}", hint=fix) from None
    cached = _cache_get(raw)
    if cached is not _MISS:
        return cached
    import yaml  # only when the cache has no copy of this content

    try:
        # libyaml's loader where PyYAML was built with it: the same safe subset, parsed in C.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(raw.decode("utf-8"), Loader=loader)  # noqa: S506
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read {what} {path}: {e}", hint=fix) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{what} {path} is not valid YAML: {e}", hint=fix) from None
    _cache_put(raw, data)
    return data


_MISS = object()


def cache_dir() -> str | None:
    """Where parsed data files are kept: $RUNBOOK_CACHE_DIR, else $XDG_CACHE_HOME/runbook, else
    ~/.cache/runbook; None (no cache) when RUNBOOK_CACHE_DIR is set empty."""
    if "RUNBOOK_CACHE_DIR" in os.environ:
        v = os.environ["RUNBOOK_CACHE_DIR"]
        return v or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "runbook")


def _cache_file(raw: bytes) -> str | None:
    d = cache_dir()
    if d is None:
        return None
    # Named by a checksum of the content (hashlib would load OpenSSL: more than it saves); the
    # entry holds the content itself and is believed only when it is byte for byte the same.
    return os.path.join(d, "yaml", f"{zlib.crc32(raw):08x}-{len(raw)}.json")


def _cache_get(raw: bytes):
    f = _cache_file(raw)
    try:
        entry = None
        if f:
            with open(f, encoding="utf-8") as fh:
                entry = json.loads(fh.read())
    except (OSError, ValueError):  # no copy yet, or a damaged one: parse the YAML
        return _MISS
    if (
        not isinstance(entry, dict)
        or entry.get("runbook") != __version__
        or entry.get("source") != raw.decode("utf-8", "replace")
    ):
        return _MISS
    return entry.get("data")


def _cache_put(raw: bytes, data) -> None:
    """Keep `data` if JSON gives it back unchanged (YAML has types JSON lacks: dates, non-string
    keys); a cache that cannot be written (read-only home, full disk) is skipped silently."""

    f = _cache_file(raw)
    if f is None:
        return
    tmp = None
    try:
        if json.loads(json.dumps(data)) != data:
            return
        source = raw.decode("utf-8", "replace")
        text = json.dumps({"runbook": __version__, "source": source, "data": data})
        folder = os.path.dirname(f)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, f)  # whole or absent: a reader never sees half a copy
    except (OSError, TypeError, ValueError):
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
