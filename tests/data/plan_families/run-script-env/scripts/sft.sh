#!/bin/bash
GPUS=${GPUS:-8}
MICRO=${MICRO:-4}
torchrun --nproc_per_node=${GPUS} finetune.py \
  --per_device_train_batch_size ${MICRO} \
  --gradient_accumulation_steps 4
