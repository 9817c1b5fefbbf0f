#!/usr/bin/bash
#SBATCH --job-name=torchtitan
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-task=8

set -ex

NGPU=${NGPU:-"8"}
CONFIG_FILE=${CONFIG_FILE:-"./train_configs/llama3_8b.toml"}
head_node_ip=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)

srun torchrun --nnodes 4 --nproc_per_node ${NGPU} --rdzv_id 101 --rdzv_backend c10d \
  --rdzv_endpoint "$head_node_ip:29500" \
  -m torchtitan.train --job.config_file ${CONFIG_FILE} --training.local_batch_size 4
