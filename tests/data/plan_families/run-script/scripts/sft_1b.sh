#!/bin/bash
OUTPUT=${1:-./output}
mkdir -p "$OUTPUT"
deepspeed finetune.py \
   --model_name_or_path org/model-1b \
   --per_device_train_batch_size 8 \
   --gradient_accumulation_steps 2 \
   --output_dir "$OUTPUT"
