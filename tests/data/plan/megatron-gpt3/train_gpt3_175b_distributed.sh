#!/bin/bash
# Written for runbook's tests in the shape of a Megatron launch: flags in bash arrays, 8 GPUs,
# tensor and pipeline parallel 2 each (data parallel 2), micro-batch 1.
GPUS_PER_NODE=8
NUM_NODES=1
CHECKPOINT_PATH=$1
DATA_PATH=$2

LAUNCH=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
)
MODEL=(
    --num-layers 12
    --hidden-size 512
    --num-attention-heads 8
    --seq-length 1024
    --max-position-embeddings 1024
)
TRAINING=(
    --global-batch-size 64
    --micro-batch-size 1
    --train-iters 100
    --lr 1.0e-4
    --bf16
)
PARALLEL=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
)
DATA=(
    --data-path $DATA_PATH
    --split 98,1,1
)
SAVING=(
    --save $CHECKPOINT_PATH
    --load $CHECKPOINT_PATH
    --save-interval 50
)
torchrun ${LAUNCH[@]} pretrain_gpt.py \
    ${MODEL[@]} \
    ${TRAINING[@]} \
    ${PARALLEL[@]} \
    ${DATA[@]} \
    ${SAVING[@]}
