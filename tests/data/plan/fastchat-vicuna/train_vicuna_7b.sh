# Written for runbook's tests in the shape of a torchrun launch of a Hugging Face trainer
# script with FSDP, 16 processes.
torchrun --nproc_per_node=16 --master_port=20001 train/train.py \
    --model_name_or_path /data/models/base-7b \
    --data_path /data/chats.json \
    --bf16 True \
    --output_dir out_7b \
    --num_train_epochs 2 \
    --gradient_accumulation_steps 16 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 8 \
    --learning_rate 2e-5 \
    --fsdp "full_shard auto_wrap" \
    --model_max_length 2048 \
    --gradient_checkpointing True
