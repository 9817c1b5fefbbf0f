# The shape of Megatron-LM's pretrain_gpt.py: its options are Megatron's own, parsed in
# megatron/training/arguments.py when pretrain() initializes.
from megatron.training import pretrain

if __name__ == "__main__":
    pretrain()
