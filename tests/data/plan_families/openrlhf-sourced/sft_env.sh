# Llama-3-8B SFT on 8 GPUs.
export PRETRAIN=meta-llama/Meta-Llama-3-8B
export TRAIN_BATCH_SIZE=256
export MICRO_BATCH_SIZE=4
export IMAGE=nvcr.io/nvidia/pytorch:24.02-py3
