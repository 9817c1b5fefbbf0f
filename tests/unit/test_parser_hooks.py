"""The parse-only hook (runbook/asking/_boot.py) on each parser library, for real: every program of
tests/data/parsers is run twice with the real library, plainly (it prints the micro-batch and
accumulation it would train with) and under the hook; the values the hook hands back are the
program's own, and the roles runbook names in them hold those values (issue 63)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runbook.asking import parse_only
from runbook.asking.roles import roles
from runbook.planning.ask import command_words

PROGRAMS = Path(__file__).resolve().parent.parent / "data" / "parsers"
NEEDS = {"hf_trainer": "accelerate", "trl_recipe": "accelerate", "lightning_cli": "lightning",
         "hf_yaml": "accelerate", "lightning_fit": "lightning", "typer_app": "typer",
         "fire_class": "fire", "click_group": "click", "absl_flags": "absl",
         "configargparse_env": "configargparse", "hydra_compose": "hydra",
         "omegaconf_only": "omegaconf",
         "jsonargparse_cli": "jsonargparse", "fire_fn": "fire", "hydra_group": "hydra",
         "hydra_override": "hydra", "omegaconf_cli": "omegaconf", "click_cmd": "click",
         "typer_cmd": "typer", "tyro_dc": "tyro", "simple_parsing_dc": "simple_parsing",
         "mmengine_cfg": "mmengine"}  # fmt: skip
LIBRARY = {"click_cmd": "click", "typer_cmd": "click", "fire_fn": "fire", "tyro_dc": "tyro",
           "hydra_group": "hydra", "hydra_override": "hydra", "omegaconf_cli": "omegaconf",
           "lightning_cli": "jsonargparse", "jsonargparse_cli": "jsonargparse",
           "mmengine_cfg": "mmengine", "typer_app": "click", "click_group": "click",
           "fire_class": "fire", "lightning_fit": "jsonargparse",
           "hf_yaml": "HfArgumentParser.parse_dict", "absl_flags": "absl",
           "hydra_compose": "hydra", "omegaconf_only": "omegaconf"}  # fmt: skip
# Programs whose batch is not in what their parser hands over: read after it, from a file.
AFTER_PARSE = {"yaml_after"}
ENV = {"CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}


def job(folder: Path) -> tuple[list[str], list[str]]:
    script = (folder / "job.sbatch").read_text()
    words = script.split()
    entry = next((w for w in words if w.endswith(".py")), None)
    if entry is None:  # `torchrun ... -m pkg.train`: the module's file
        entry = words[words.index("-m") + 1].replace(".", "/") + ".py"
    cmd = command_words(script, entry)
    assert cmd is not None
    return cmd


def _needs(name: str) -> None:
    mod = NEEDS.get(name)
    if mod and importlib.util.find_spec(mod) is None:
        pytest.skip(f"{mod} is not installed here (scripts/test installs it)")


def runs(folder: Path, head: list[str], words: list[str], tmp_path: Path) -> tuple[int, int]:
    """What the program itself prints it trains with, run plainly in a copy of its folder."""
    import shutil

    copy = tmp_path / "plain"
    shutil.copytree(folder, copy)
    r = subprocess.run([sys.executable, *head, *words], cwd=copy, env=ENV, capture_output=True,
                       text=True, timeout=300, check=False)  # fmt: skip
    m = re.search(r"^RUNS micro=(\d+) accum=(\d+)", r.stdout, re.M)
    assert m, r.stderr[-2000:]
    return int(m[1]), int(m[2])


@pytest.mark.parametrize("name", sorted(p.name for p in PROGRAMS.iterdir() if p.is_dir()))
def test_the_hook_hands_back_what_the_program_itself_runs_with(name, tmp_path):
    _needs(name)
    folder = PROGRAMS / name
    head, words = job(folder)
    micro, accum = runs(folder, head, words, tmp_path)
    r = subprocess.run(parse_only.command(sys.executable, head, words), cwd=folder, env=ENV,
                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    parsed = parse_only.read(r.returncode, r.stdout, r.stderr)
    assert isinstance(parsed, parse_only.Parsed), (parsed, r.stderr[-2000:])
    assert parsed.library == LIBRARY.get(name, "argparse")
    # Stopped at the hand-over: nothing after the parser ran. A composer's is later: mmengine's
    # is its Runner (mmengine-lite cannot import it without OpenCV), OmegaConf.from_cli's a merge
    # that takes it, or the first model: these programs have neither, so their config is handed
    # over at their end.
    assert ("RUNS" in r.stdout) is (name in ("mmengine_cfg", "omegaconf_only"))
    found = roles(parsed.values, None, parsed.options)
    if name in AFTER_PARSE:  # its parser hands over the file's name; the batch is in the file
        assert found.micro is None and found.why.startswith("no parsed value"), found
        return
    assert found.micro is not None and parsed.values[found.micro] == micro, (found, parsed.values)
    if found.accum is not None:
        assert parsed.values[found.accum] == accum
    else:  # the program derives it after parsing: only its global batch is a value
        assert found.global_ is not None and name == "derived_accum"
    assert not list(folder.glob("outputs")) and not list(folder.rglob("__pycache__"))


def test_a_program_with_no_parser_runbook_hooks_says_so(tmp_path):
    (tmp_path / "plain.py").write_text("import sys\nprint('RUNS micro=8 accum=1', sys.argv)\n")
    r = subprocess.run(parse_only.command(sys.executable, ["plain.py"], ["--x", "1"]),
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 3
    assert parse_only.read(r.returncode, r.stdout, r.stderr) == (
        "the program ended without a parser runbook hooks"
    )


def test_a_pre_parser_of_one_option_is_let_through(tmp_path):
    (tmp_path / "two.py").write_text(
        "import argparse\n"
        "pre = argparse.ArgumentParser(add_help=False)\npre.add_argument('--config')\n"
        "known, rest = pre.parse_known_args()\n"
        "p = argparse.ArgumentParser()\np.add_argument('--batch-size', type=int, default=4)\n"
        "p.add_argument('--accumulate', type=int, default=1)\n"
        "print(p.parse_args(rest))\n"
    )
    r = subprocess.run(parse_only.command(sys.executable, ["two.py"], ["--config", "c.yaml"]),
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, check=False)  # fmt: skip
    parsed = parse_only.read(r.returncode, r.stdout, r.stderr)
    assert isinstance(parsed, parse_only.Parsed)
    assert parsed.values == {"batch_size": 4, "accumulate": 1}


def test_a_program_that_joins_its_process_group_first_is_stopped_not_left_waiting(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "ddp.py").write_text(
        "import argparse\nimport torch.distributed as dist\n\ndist.init_process_group('gloo')\n"
        "p = argparse.ArgumentParser()\np.add_argument('--batch-size', type=int, default=8)\n"
        "p.add_argument('--accumulate', type=int, default=1)\nprint(p.parse_args())\n"
    )
    # Its recorded rendezvous is its node's: joining it would wait for three absent ranks.
    env = {**ENV, "MASTER_ADDR": "192.0.2.1", "MASTER_PORT": "29500", "RANK": "1",
           "WORLD_SIZE": "4"}  # fmt: skip
    r = subprocess.run(parse_only.command(sys.executable, ["ddp.py"], ["--batch-size", "4"]),
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                       check=False)  # fmt: skip
    assert parse_only.read(r.returncode, r.stdout, r.stderr) == (
        "it joins its process group before its parser hands over: runbook does not join it"
    )


def test_nothing_runs_past_the_first_model_whatever_its_parser_did(tmp_path):
    pytest.importorskip("torch")
    # Its parser leaves a launcher's --local_rank to nobody (parse_known_args with words left):
    # the model built next ends the run with that parse; with no parse at all, with an error.
    (tmp_path / "known.py").write_text(
        "import argparse\nimport torch\n\np = argparse.ArgumentParser()\n"
        "p.add_argument('--batch-size', type=int, default=8)\np.add_argument('--accum', type=int)\n"
        "args, rest = p.parse_known_args()\nmodel = torch.nn.Linear(2, 2)\n"
        "open('trained.pt', 'w').write('x')\n"
    )
    (tmp_path / "none.py").write_text(
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopen('trained.pt', 'w').write('x')\n"
    )
    r = subprocess.run(parse_only.command(sys.executable, ["known.py"], ["--local_rank=0"]),
                       cwd=tmp_path, env=ENV, capture_output=True, text=True, check=False)  # fmt: skip
    parsed = parse_only.read(r.returncode, r.stdout, r.stderr)
    assert isinstance(parsed, parse_only.Parsed) and parsed.values == {
        "batch_size": 8,
        "accum": None,
    }
    r = subprocess.run(parse_only.command(sys.executable, ["none.py"], []), cwd=tmp_path, env=ENV,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert parse_only.read(r.returncode, r.stdout, r.stderr) == (
        "it built its model before a parser runbook reads handed over"
    )
    assert not (tmp_path / "trained.pt").exists()
