"""The HTML report opened in a real headless Chromium (Debian's chromium package): it renders,
with the memory bar and the cost strip as inline SVG, and its layout is measured in the browser at
two widths: no two labels of the cost strip overlap, no table column collapses to a word a line."""

from __future__ import annotations

import json
import os
import re
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
    assert '<svg id="memory"' in dom.stdout and "<h2>Timeline</h2>" in dom.stdout
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


# Measured in the page by the browser's own layout: the cost strip's labels as drawn (their
# boxes, after the SVG is scaled to the page) and every table cell that holds a sentence.
MEASURE = """<script>
const boxes = [...document.querySelectorAll('#cost text')].map(t => {
  const r = t.getBoundingClientRect(); return {text: t.textContent, l: r.left, r: r.right,
  t: r.top, b: r.bottom}; });
const overlaps = [];
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b) overlaps.push([a.text, b.text]); }
const outside = boxes.filter(b => b.l < 0 || b.r > document.documentElement.clientWidth)
  .map(b => b.text);
// A cell's lines of text as laid out (its row may be taller for a neighbour's sake).
const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
  return new Set([...r.getClientRects()].map(c => Math.round(c.top))).size; };
const narrow = [...document.querySelectorAll('td')].filter(td => {
  const words = td.textContent.trim().split(/\\s+/).length;
  return words >= 4 && lines(td) > words * 0.6; }).map(td => td.textContent.trim().slice(0, 60));
// What sticks out of the page's width (a phone's 420 px): the page itself, and any block.
const width = document.documentElement.clientWidth;
const wide = document.documentElement.scrollWidth > width + 1;
const cut = [...document.querySelectorAll('body > *, li, td pre, svg')].filter(
  el => el.getBoundingClientRect().right > width + 1).map(el => el.tagName + ': ' +
  el.textContent.trim().slice(0, 50));
const pre = document.createElement('pre'); pre.id = 'measured';
pre.textContent = JSON.stringify({labels: boxes.length, overlaps, outside, narrow, wide, cut});
document.body.appendChild(pre);
</script></body>"""


def crowded_incident() -> dict:
    """The field's case: moments a second or less apart, then one far later (the GPUs freed
    by the cancel, the rerun's pass minutes on), and a command whose note is a sentence."""
    data = incident().to_json()
    t0 = data["started"]
    data["cost"] = {
        "lost_gpu_hours": 0.42, "gpus": 4, "detection_s": 0.4, "diagnosis_s": 0.9,
        "resubmission_s": 1.3,
        "marks": [
            {"label": "failure", "at": t0 - 0.4}, {"label": "detected", "at": t0},
            {"label": "GPUs freed", "at": t0 + 0.6}, {"label": "diagnosed", "at": t0 + 0.9},
            {"label": "resubmitted", "at": t0 + 1.3}, {"label": "rerun started", "at": t0 + 2.0},
            {"label": "rerun past the failed step", "at": t0 + 400.0},
        ],
    }  # fmt: skip
    data["actions"][0]["message"] = (
        "done; Slurm shows the new job 43 PENDING with the same nodes, tasks and GPUs as the "
        "original, read back with scontrol"
    )
    return data


@pytest.mark.parametrize("width", [1280, 800, 420])
def test_the_report_lays_out_legibly_in_a_real_browser(chromium, tmp_path, width):
    html = render_all(crowded_incident())["report.html"]
    assert html.count("</body>") == 1
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", MEASURE))
    dom = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         f"--window-size={width},1400", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    m = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert m["labels"] == 7, m
    assert m["overlaps"] == [] and m["outside"] == [], m
    # A phone reads the page first (issue 55): nothing wider than it, no block past its edge
    # (a wide table scrolls inside its own box, the OOM message and the diff wrap).
    assert not m["wide"] and m["cut"] == [], m
    if width >= 800:  # on a phone a sentence in a cell may take more lines: it still wraps
        assert m["narrow"] == [], m
