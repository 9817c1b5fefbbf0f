"""The shape of transformers' examples/pytorch/language-modeling/run_clm.py: its own argument
dataclasses beside TrainingArguments, parsed by HfArgumentParser; the batch is
TrainingArguments' default unless the command line gives it."""

import sys
from dataclasses import dataclass, field

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str | None = field(default=None)


@dataclass
class DataTrainingArguments:
    dataset_name: str | None = field(default=None)
    dataset_config_name: str | None = field(default=None)
    block_size: int | None = field(default=None)
    preprocessing_num_workers: int | None = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
        model_args, data_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()


if __name__ == "__main__":
    main()
