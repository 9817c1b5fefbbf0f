#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
MICRO=${MICRO:-4}
accelerate launch --num_processes 8 sft.py --config "$CONFIG_FILE" --max_steps 1000
