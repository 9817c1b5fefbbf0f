"""Render one incident model three ways: Markdown (a ticket), JSON (machines), HTML (one file)."""

from __future__ import annotations

import functools
import json
import re
import time
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from runbook import words
from runbook.evidence.units import human_mib

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def world_text(w: dict | None) -> str:
    """A job's size as a person reads it ("2 nodes, 4 tasks, 4 GPUs"), never a Python dict."""
    if not w:
        return "unknown"
    parts = []
    for key, one in (("nodes", "node"), ("tasks", "task"), ("gpus", "GPU")):
        n = w.get(key)
        parts.append(f"{n} {one}{'s' if n != 1 else ''}" if n is not None else f"{one}s unknown")
    return ", ".join(parts)


def component_text(c: dict | None) -> str:
    """A heterogeneous job's component as a person reads it: its size and what each task
    gets ("1 node, 1 task, 2 CPUs per task, mem 300M, no GPU")."""
    if not c:
        return "unknown"
    parts = [
        words.count(c["nodes"], "node") if c.get("nodes") else "nodes unknown",
        words.count(c["ntasks"], "task") if c.get("ntasks") else "tasks unknown",
    ]
    parts += (
        [f"{words.count(c['cpus_per_task'], 'CPU')} per task"] if c.get("cpus_per_task") else []
    )
    parts += [
        f"mem {c[k]}{' per CPU' * (k == 'mem_per_cpu')}" for k in ("mem", "mem_per_cpu") if c.get(k)
    ]
    parts.append(words.count(c["gpus"], "GPU") if c.get("gpus") is not None else "no GPU")
    return ", ".join(parts)


def _inline_markdown(text) -> Markup:
    """The inline Markdown runbook's own sentences use (`code`, **bold**) as HTML, escaped first:
    a job's name or log line inside them stays text."""
    html = str(escape(str(text)))
    html = re.sub(r"`([^`]+)`", r"<code>\1</code>", html)
    html = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", html)
    return Markup(html)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (Jinja's per-user cache folder, mode 0700, keyed by
    the template's source checksum): compiling the two report templates is most of a one-shot
    command's rendering (docs/scale.md). None where no such folder can be made."""
    import jinja2

    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        return None


@functools.cache
def _env(autoescape: bool) -> jinja2.Environment:
    """One environment per process and kind (its templates compiled once, not per save).
    jinja2 is imported here, when a report is rendered: a watch period that renders none (a
    sweep of running jobs) does not pay for it."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    # UTC, said so: a report is read in other time zones than the cluster's.
    env.filters["clock"] = lambda t: time.strftime("%H:%M:%SZ", time.gmtime(t)) if t else ""
    env.filters["took"] = lambda s: (
        f"{(s['finished'] - s['started']):.2f}s" if s.get("finished") else "-"
    )
    env.filters["cell"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    env.filters["unk"] = lambda v: words.yes_no(v) if v is None or isinstance(v, bool) else v
    env.filters["unread"] = words.unread
    env.filters["whenwhere"] = lambda p: words.when_where(
        p.get("where"), p.get("when"), p.get("step")
    )
    env.filters["finding"] = words.finding
    env.filters["numbers"] = words.numbers
    env.filters["settings"] = words.settings
    env.filters["costline"] = words.cost_sentence
    env.filters["fitsource"] = words.fit_source
    env.filters["rankwords"] = words.ranks
    env.filters["count"] = words.count
    env.filters["fitwords"] = lambda c, limit: words.fits_words(
        c["predicted_peak_low_mib"], c["predicted_peak_mib"], limit
    )
    if autoescape:
        env.filters["md"] = _inline_markdown
    env.filters["world"] = world_text
    env.filters["component"] = component_text
    env.filters["mib"] = lambda v: human_mib(v) if isinstance(v, int | float) else "unknown"
    return env


def _bar(x: float, w: float, color: str, label: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="20" width="{max(w, 0):.1f}" height="34" fill="{color}">'
        f"<title>{escape(label)}</title></rect>"
    )


def memory_svg(oom: dict, width: int = 900) -> str:
    """The card at the moment of the OOM: allocated, reserved-but-unallocated, other processes,
    free and unattributed, against capacity, with the failed request marked."""
    total = oom.get("total_mib") or 0
    if not total:
        return ""
    scale = (width - 20) / total
    alloc = oom.get("allocated_mib") or 0
    unalloc = oom.get("reserved_unallocated_mib") or 0
    others = sum(p["used_mib"] for p in oom.get("other_processes") or [])
    free = oom.get("free_mib") or 0
    rest = max(total - alloc - unalloc - others - free, 0)
    parts = [
        ("allocated by PyTorch", alloc, "#3b82f6"),
        ("reserved but unallocated", unalloc, "#f59e0b"),
        ("other processes / non-PyTorch", others + rest, "#a855f7"),
        ("free", free, "#d1d5db"),
    ]
    x, rects, legend = 10.0, [], []
    for i, (label, mib, color) in enumerate(parts):
        rects.append(_bar(x, mib * scale, color, f"{label}: {mib:.0f} MiB"))
        lx, ly = 10 + (i % 2) * 440, 80 + (i // 2) * 18  # two columns: long labels fit
        legend.append(
            f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{color}"/>'
            f'<text x="{lx + 16}" y="{ly + 11}" font-size="12">{escape(label)} '
            f"{mib / 1024:.2f} GiB</text>"
        )
        x += mib * scale
    tried = oom.get("tried_mib") or 0
    start = 10 + (alloc + unalloc + others + rest) * scale
    req_w = min(tried * scale, width - start)
    anchor, tx = ("end", start + req_w) if start > width * 0.6 else ("start", start)
    req = (
        f'<rect x="{start:.1f}" y="14" width="{req_w:.1f}" height="46" '
        f'fill="none" stroke="#dc2626" stroke-width="2" stroke-dasharray="5,3">'
        f"<title>failed request: {tried:.0f} MiB</title></rect>"
        f'<text x="{tx:.1f}" y="11" font-size="12" fill="#dc2626" text-anchor="{anchor}">'
        f"failed request {tried / 1024:.2f} GiB</text>"
    )
    return (
        f'<svg id="memory" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} 120" '
        f'width="{width}" height="120" '
        f'role="img" aria-label="GPU memory at the OOM">'
        f'<rect x="10" y="20" width="{width - 20}" height="34" fill="none" stroke="#555"/>'
        + "".join(rects)
        + req
        + "".join(legend)
        + "</svg>"
    )


# The widest a character of the 11 px sans-serif labels is drawn, on average (Chromium, DejaVu
# Sans): enough to keep a label inside the picture.
LABEL_CHAR_PX = 6.6


def cost_svg(cost: dict | None, width: int = 900) -> str:
    """The incident's cost as a picture: failure, detection, diagnosis, resubmission, the freed
    GPUs, the rerun's start and its pass, each where it happened on one time axis with its
    offset. Each label takes the first row, above the axis or below it, where it overlaps no
    label already placed, so moments a second apart stay legible at any spacing; the picture
    scales to the page (viewBox) instead of running past it."""
    marks = [m for m in (cost or {}).get("marks") or [] if isinstance(m.get("at"), int | float)]
    if len(marks) < 2:
        return ""
    marks = sorted(marks, key=lambda m: m["at"])
    t0 = marks[0]["at"]
    span = max(marks[-1]["at"] - t0, 1e-3)
    fine = span < 60  # a second's rounding would print two different moments as the same "+1 s"
    placed: dict[int, list[tuple[float, float]]] = {}  # row -> the x ranges of its labels
    texts, dots, rows_used = [], [], 0
    for n, m in enumerate(marks):
        x = 20 + (m["at"] - t0) / span * (width - 40)
        off = m["at"] - t0
        label = m["label"] + (f" (+{off:.1f} s)" if fine or off < 10 else f" (+{off:.0f} s)") * (
            n > 0
        )
        w = LABEL_CHAR_PX * len(label)
        # A label centred on a mark near either end would run past the picture's edge and be
        # cut ("etected"): there it starts at, or ends at, its mark instead.
        lo = min(max(x - w / 2, 2), width - 2 - w)
        anchor_x = lo + w / 2
        row = 0
        while any(lo < b + 6 and a < lo + w + 6 for a, b in placed.get(row, [])):
            row += 1
        placed.setdefault(row, []).append((lo, lo + w))
        rows_used = max(rows_used, row + 1)
        dots.append(f'<circle cx="{x:.1f}" cy="AXIS" r="5" fill="#2563eb"/>')
        texts.append((row, anchor_x, label))
    above = (rows_used + 1) // 2  # rows 0, 2, 4 above the axis; 1, 3, 5 below
    axis = 18 + 16 * above
    height = axis + 16 * (rows_used - above) + 14
    items = [f'<line x1="20" y1="{axis}" x2="{width - 20}" y2="{axis}" stroke="#6b7280"/>']
    items += [d.replace("AXIS", str(axis)) for d in dots]
    for row, x, label in texts:
        level = row // 2 + 1
        y = axis - 10 - 16 * (level - 1) if row % 2 == 0 else axis + 20 + 16 * (level - 1)
        items.append(
            f'<text x="{x:.1f}" y="{y}" font-size="11" text-anchor="middle">{escape(label)}</text>'
        )
    return (
        f'<svg id="cost" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}">' + "".join(items) + "</svg>"
    )


def trend_svg(trend: dict | None, card_mib: float | None, width: int = 900) -> str:
    """The memory series before the OOM: steps on x, MiB on y, the card's size as a line and
    the OOM as the last mark (docs/design.md §3.1)."""
    values = [v for v in (trend or {}).get("values_mib") or [] if isinstance(v, int | float)]
    if len(values) < 2:
        return ""
    steps = (trend or {}).get("steps") or []
    top = max([*values, card_mib or 0.0]) * 1.05 or 1.0
    h, left, bottom = 160, 60, 20
    n = len(values)

    def xy(k: int, v: float) -> str:
        x = left + k / (n - 1) * (width - left - 20)
        return f"{x:.1f},{h - bottom - v / top * (h - bottom - 10):.1f}"

    line = " ".join(xy(k, v) for k, v in enumerate(values))
    items = [f'<polyline points="{line}" fill="none" stroke="#2563eb" stroke-width="2"/>']
    if card_mib:
        y = h - bottom - card_mib / top * (h - bottom - 10)
        items.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - 20}" y2="{y:.1f}" stroke="#dc2626" '
            f'stroke-dasharray="4"/><text x="{left}" y="{y - 3:.1f}" font-size="11">card '
            f"{escape(human_mib(card_mib))}</text>"
        )
    last = xy(n - 1, values[-1]).split(",")
    items.append(
        f'<circle cx="{last[0]}" cy="{last[1]}" r="5" fill="#dc2626"/>'
        f'<text x="{float(last[0]) - 4:.1f}" y="{float(last[1]) - 8:.1f}" font-size="11" '
        'text-anchor="end">last point before the OOM</text>'
    )
    first_step = steps[0] if steps and steps[0] is not None else "first"
    last_step = steps[-1] if steps and steps[-1] is not None else "last"
    items.append(
        f'<text x="{left}" y="{h - 4}" font-size="11">step {escape(str(first_step))}</text>'
        f'<text x="{width - 20}" y="{h - 4}" font-size="11" text-anchor="end">step '
        f"{escape(str(last_step))}</text>"
        f'<text x="4" y="14" font-size="11">{escape(human_mib(top / 1.05))}</text>'
    )
    return (
        f'<svg id="trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {h}" '
        f'width="{width}" height="{h}">' + "".join(items) + "</svg>"
    )


def report_json(data: dict) -> str:
    return json.dumps(data, indent=2, default=str) + "\n"


def render_all(data: dict) -> dict[str, str]:
    """{"report.md": ..., "report.json": ..., "report.html": ...} from the incident's JSON."""
    md = _env(False).get_template("report.md.j2").render(i=data)
    oom = (data.get("diagnosis") or {}).get("oom") or {}
    html = (
        _env(True)
        .get_template("report.html.j2")
        .render(
            i=data,
            memory_svg=memory_svg(oom),
            cost_svg=cost_svg(data.get("cost")),
            trend_svg=trend_svg((data.get("diagnosis") or {}).get("trend"), oom.get("total_mib")),
        )
    )
    return {
        "report.md": md,
        "report.json": report_json(data),
        "report.html": html,
    }
