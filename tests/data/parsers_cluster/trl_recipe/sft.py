"""A recipe parser in TRL's manner (written here on HfArgumentParser): `--config recipe.yaml`
sets the defaults, the job's own arguments after it override them; runbook's example program
trains with what it parsed."""

import argparse
import os
import runpy
import shlex
import sys
from dataclasses import dataclass

import yaml
from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ScriptArguments:
    dataset_name: str = "chat"


class RecipeParser(HfArgumentParser):
    def parse_args_and_config(self):
        pre = argparse.ArgumentParser(add_help=False)
        pre.add_argument("--config")
        known, rest = pre.parse_known_args(sys.argv[1:])
        if known.config:
            with open(known.config) as f:
                self.set_defaults(**yaml.safe_load(f))
        return self.parse_args_into_dataclasses(args=rest)


_, args = RecipeParser((ScriptArguments, TrainingArguments)).parse_args_and_config()
sys.argv = [
    os.environ["EXAMPLE"],
    *shlex.split(os.environ["EXAMPLE_ARGS"]),
    "--micro-batch-size",
    str(args.per_device_train_batch_size),
    "--grad-accum",
    str(args.gradient_accumulation_steps),
]
runpy.run_path(sys.argv[0], run_name="__main__")
