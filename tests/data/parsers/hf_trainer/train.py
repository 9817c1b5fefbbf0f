"""Hugging Face's HfArgumentParser over the program's own dataclass and TrainingArguments."""

from dataclasses import dataclass, field

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name: str = field(default="gpt2")
    max_seq_length: int = 1024


parser = HfArgumentParser((ModelArguments, TrainingArguments))
model_args, args = parser.parse_args_into_dataclasses()
print(
    f"RUNS micro={args.per_device_train_batch_size} accum={args.gradient_accumulation_steps} "
    f"seq={model_args.max_seq_length}",
    flush=True,
)
