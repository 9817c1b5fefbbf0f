set -x
# Written for runbook's tests in the shape of a verl PPO launch: Hydra-style dotted overrides,
# the actor's mini-batch (its global batch) and per-GPU micro-batch, the job's own arguments last.

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=gae \
    data.train_files=$HOME/data/math/train.parquet \
    data.val_files=$HOME/data/math/test.parquet \
    data.train_batch_size=512 \
    data.max_prompt_length=1024 \
    actor_rollout_ref.model.path=example-org/chat-7b \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16 \
    actor_rollout_ref.actor.ppo_mini_batch_size=256 \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32 \
    critic.model.path=example-org/chat-7b \
    critic.ppo_micro_batch_size_per_gpu=32 \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=1 \
    trainer.total_epochs=5 $@
