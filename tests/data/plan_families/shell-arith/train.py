"""A chat model's fine-tuning (a fixture): Hugging Face's arguments parsed from the command line."""

from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class DataArguments:
    meta_path: str = "data.json"


if __name__ == "__main__":
    data, training = HfArgumentParser(
        (DataArguments, TrainingArguments)
    ).parse_args_into_dataclasses()
