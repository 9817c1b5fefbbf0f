"""A recipe parser in TRL's manner: `--config recipe.yaml` sets the defaults, the job's own
arguments after it override them (written here on HfArgumentParser)."""

import argparse
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


script_args, args = RecipeParser((ScriptArguments, TrainingArguments)).parse_args_and_config()
print(
    f"RUNS micro={args.per_device_train_batch_size} accum={args.gradient_accumulation_steps}",
    flush=True,
)
