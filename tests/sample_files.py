"""Sample files kept beside a parser's modules (tests/data/launchers/, tests/data/oom_families/),
as fail2ban keeps sample logs beside each filter: per sample a `# source:` line (where the lines
were printed), an `# expect:` line (JSON: what the parser must give), then the lines as printed."""

from __future__ import annotations

import json
from pathlib import Path


def read_samples(path: Path) -> list[dict]:
    """[{"source", "expect", "lines"}] of one samples file, in order."""
    out: list[dict] = []
    for line in path.read_text().splitlines():
        if line.startswith("# source: "):
            out.append({"source": line[len("# source: ") :], "lines": []})
        elif line.startswith("# expect: "):
            out[-1]["expect"] = json.loads(line[len("# expect: ") :])
        elif out:
            out[-1]["lines"].append(line)
        elif line and not line.startswith("#"):
            raise AssertionError(f"{path.name}: a line before the first '# source:'")
    return out
