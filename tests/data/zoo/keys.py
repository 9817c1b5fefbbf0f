"""The zoo's answer key (bench/zoo/README.md): where and when each recorded log ran out, known
by construction (the phase the error was raised in, and the steps that completed before it, are
the run's settings, not a reading of its log), and the causes that would be true of it.

A log FRAMEWORK-PHASE.log answers PHASES[PHASE] unless OVERRIDES says the framework made the
run differ (its note says how).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent

# phase: (where, when, the causes that may be named; "unknown" always may)
PHASES = {
    "forward": ("forward", "mid_run", {"leak", "longest_batch"}),
    "backward": ("backward", "mid_run", {"leak", "longest_batch"}),
    "optimizer": ("optimizer_step", "first_step", {"optimizer_state", "static_sizing"}),
    "eval": ("eval", "eval_start", {"eval_no_grad", "eval_batch", "eval_predictions"}),
    "save": ("checkpoint_save", "mid_run", {"checkpoint_save"}),
    "resume": ("checkpoint_load", "after_resume", {"checkpoint_map_location"}),
    "placement": ("model_init", "first_step", {"static_sizing"}),
}
OVERRIDES: dict[str, tuple[str, str, set[str], str]] = {}


def records() -> list[dict]:
    out = []
    for path in sorted(HERE.glob("*.log")):
        framework, phase = path.stem.rsplit("-", 1)
        where, when, causes, note = OVERRIDES.get(path.stem, (*PHASES[phase], ""))
        out.append(
            {
                "id": path.stem,
                "framework": framework,
                "text": path.read_text(),
                "answer": {"where": where, "when": when, "causes": causes | {"unknown"}},
                "note": note,
                # FRAMEWORK.VARIANT logs were recorded after the reader was tuned on the others
                # and scored before any change for them (bench/zoo/README.md): the measure.
                "split": "measure" if "." in framework else "tune",
            }
        )
    return out
