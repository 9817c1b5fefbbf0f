"""The HTML report opened in a real headless Chromium (Debian's chromium package): it renders,
with the memory bar and the timeline as inline SVG."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from runbook.report.render import render_all
from tests.unit.test_report import incident

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium():
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: scripts/test installs Debian's package")
        pytest.skip("chromium not installed (scripts/test installs it)")
    return path


def test_html_report_renders_in_chromium_with_the_svg(chromium, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_all(incident().to_json())["report.html"])
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<svg id="memory"' in dom.stdout and '<svg id="timeline"' in dom.stdout
    assert "Diagnosis: fragmentation" in dom.stdout
    shot = tmp_path / "report.png"
    r = subprocess.run(
        [
            chromium,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1100,1400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000
