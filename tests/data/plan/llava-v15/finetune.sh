#!/bin/bash
# Written for runbook's tests in the shape of a deepspeed fine-tune with Hugging Face
# arguments on its command line.

deepspeed train/train_mem.py \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path example-org/vision-chat-13b \
    --data_path ./data/mix.json \
    --bf16 True \
    --output_dir ./checkpoints/vision-chat-13b \
    --num_train_epochs 1 \
    --per_device_eval_batch_size 4 \
    --per_device_train_batch_size 16 \
    --gradient_accumulation_steps 1 \
    --learning_rate 2e-5 \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --dataloader_num_workers 4
