"""offload_optimizer: the optimizer's state moved to host memory (DeepSpeed ZeRO-Offload), for an
OOM at the optimizer's first step, where that state (Adam: two fp32 moments, 8 B per parameter)
is made and activations are already freed (docs/design.md §3.1: the `optimizer_state` cause
prefers it). The batch is not touched.

Where a job keeps the switch, in DeepSpeed's and accelerate's own spellings:
- a DeepSpeed JSON config the script names: `zero_optimization.offload_optimizer.device`
  ("none", the default, -> "cpu"); DeepSpeed offloads the optimizer only with ZeRO stage 1, 2
  or 3, so a config without ZeRO (stage 0 or none) is refused, not changed, and so is one with
  no `optimizer` section (the state offloaded is stepped by DeepSpeed's CPU Adam);
- accelerate's config YAML (`deepspeed_config: offload_optimizer_device: none`), or its launch
  flag `--offload_optimizer_device none` in the job script.
Already on cpu or nvme: nothing to move, the rung does not apply.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from runbook.errors import RungNotApplicable
from runbook.jobfiles import bash
from runbook.jobfiles import configs as cfg
from runbook.jobfiles.config_patch import Change, JobFiles, RungPlan
from runbook.rungs import SCRIPT, Ask, RungDef

FLAGS = ["--offload_optimizer_device", "--offload-optimizer-device"]  # accelerate launch
YAML_KEY = "offload_optimizer_device"  # accelerate's config file, under deepspeed_config
OFF = ("none", "null", "")
UNTOUCHED = "the micro-batch, the accumulation and the global batch are not touched"


def _off(value: str) -> bool:
    return value.strip("\"'").lower() in OFF


def _on_already(where: str, value: str) -> RungNotApplicable:
    device = value.strip("\"'")
    return RungNotApplicable(
        f"{where} already offloads the optimizer's state ({device}): "
        "there is nothing more to move to the host",
        hint="the optimizer's state is not what fills the card: read the numbers again",
    )


def _script(script: str, ask: Ask) -> tuple[str, list[str], list[str]]:
    hit = bash.maybe(script, FLAGS)
    if hit is None:
        raise RungNotApplicable(
            f"the job script sets no optimizer offload (looked for {', '.join(FLAGS)})",
            hint="set zero_optimization.offload_optimizer.device to cpu in the job's DeepSpeed "
            "config",
        )
    if not _off(hit.value):
        raise _on_already(hit.name, hit.value)
    new = bash.replace(script, [(hit, "cpu")])
    return (
        new,
        [f"{hit.name} {hit.value} -> cpu: the optimizer's state in host memory"],
        [UNTOUCHED],
    )


def _json_edit(name: str, text: str) -> tuple[str, str] | None:
    """DeepSpeed's JSON with offload_optimizer on the CPU: (new text, what changed), or None when
    the file is no DeepSpeed config. RungNotApplicable where ZeRO is off or it is on already."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    zero = doc.get("zero_optimization") if isinstance(doc, dict) else None
    if not isinstance(zero, dict):
        return None
    stage = zero.get("stage", 0)
    if not isinstance(stage, int) or isinstance(stage, bool) or stage < 1:
        raise RungNotApplicable(
            f"{name}: zero_optimization.stage is {stage!r}: DeepSpeed offloads the optimizer's "
            "state only with ZeRO stage 1, 2 or 3",
            hint="raise the ZeRO stage first (raise_sharding), or offload by hand",
        )
    if not isinstance(doc.get("optimizer"), dict):
        # Offloaded state is stepped by DeepSpeed's CPU Adam; a client optimizer (the job's own)
        # is refused by DeepSpeed at start (zero_force_ds_cpu_optimizer) unless told otherwise.
        raise RungNotApplicable(
            f"{name} names no optimizer: with offload DeepSpeed steps the state with its CPU "
            "Adam, and refuses the job's own optimizer at start",
            hint='add an "optimizer" section (AdamW) to the DeepSpeed config, then offload',
        )
    off = zero.get("offload_optimizer")
    device = off.get("device", "none") if isinstance(off, dict) else "none"
    if not _off(str(device)):
        raise _on_already(f"{name}'s zero_optimization.offload_optimizer", str(device))
    zero["offload_optimizer"] = {**(off if isinstance(off, dict) else {}), "device": "cpu"}
    zero["offload_optimizer"].setdefault("pin_memory", True)
    indent = re.search(r"\n([ \t]+)\"", text)
    new = json.dumps(doc, indent=indent.group(1) if indent else 2) + "\n"
    reread = json.loads(new)["zero_optimization"]["offload_optimizer"]["device"]
    if reread != "cpu":  # what was written is read back, never assumed
        raise RungNotApplicable(f"re-reading the patched copy of {name} found device {reread!r}")
    return new, f"zero_optimization.offload_optimizer.device {device} -> cpu (re-read)"


def _yaml_edit(name: str, text: str) -> tuple[str, str] | None:
    found = cfg.find_knobs(name, text, (YAML_KEY,))
    if not found:
        return None
    k = found[0]
    if not _off(k.value):
        raise _on_already(f"{name}:{k.line} {YAML_KEY}", k.value)
    new = text[: k.start] + "cpu" + text[k.end :]
    if cfg.find_knobs(name, new, (YAML_KEY,))[0].value != "cpu":
        raise RungNotApplicable(f"re-reading the patched copy of {name} did not find cpu")
    return new, f"{YAML_KEY} {k.value} -> cpu ({name}:{k.line}, re-read)"


def _configs(job: JobFiles) -> RungPlan | None:
    """The copy of the DeepSpeed (or accelerate) config the script names, with the optimizer's
    state on the CPU, and the script pointed at it; None when no config holds the switch."""
    for f in job.files:
        if f.text is None:
            continue
        edit = _json_edit if Path(f.name).suffix.lower() == ".json" else _yaml_edit
        try:
            done = edit(f.name, f.text)
        except RungNotApplicable as e:
            return RungPlan(RUNG.id, False, e.message)
        if done is None:
            continue
        new_text, what = done
        new_name = cfg.copy_name(f.name, RUNG.id)
        new_script = cfg.point_at_copy(job.script, f, new_name)
        return RungPlan(
            RUNG.id,
            True,
            changes=[
                Change(job.name, job.name, job.script, new_script),
                Change(f.name, new_name, f.text, new_text),
            ],
            values_after={"offload_optimizer": "cpu"},
            checks=[what, UNTOUCHED, bash.bash_n(new_script, original=job.script)],
        )
    return None


RUNG = RungDef(
    "offload_optimizer",
    SCRIPT,
    "move the optimizer's state to host memory: DeepSpeed ZeRO's offload_optimizer device cpu "
    "(in the job's DeepSpeed config, or accelerate's offload_optimizer_device); the batch is "
    "not touched",
    script=_script,
    configs=_configs,
)
