"""HfArgumentParser reading its whole configuration from the YAML the job names."""

import sys

from transformers import HfArgumentParser, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_yaml_file(sys.argv[1])
print(
    f"RUNS micro={args.per_device_train_batch_size} accum={args.gradient_accumulation_steps}",
    flush=True,
)
