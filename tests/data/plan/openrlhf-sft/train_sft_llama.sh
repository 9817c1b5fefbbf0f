set -x
# Written for runbook's tests in the shape of a script whose flags live in a here-document read
# into a variable, run by deepspeed unless the first argument says slurm.

read -r -d '' sft_args <<EOF
openrlhf.cli.train_sft \
   --pretrain example-org/base-8b \
   --dataset example-org/instructions \
   --input_key prompt \
   --output_key answer \
   --max_len 4096 \
   --micro_train_batch_size 2 \
   --train_batch_size 256 \
   --zero_stage 3 \
   --max_epochs 2 \
   --bf16 \
   --learning_rate 1e-5 \
   --save_path ./ckpt/base-8b-sft \
   --gradient_checkpointing
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $sft_args
fi
