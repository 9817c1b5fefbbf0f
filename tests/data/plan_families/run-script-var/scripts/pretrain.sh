#!/bin/bash
# $1: the cluster kind (slurm or local)
torchrun --nproc_per_node=8 pretrain.py \
  --micro-batch-size 8 \
  --global-batch-size 512 \
  --cluster "$1"
