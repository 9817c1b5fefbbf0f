from megatron.training.initialize import initialize_megatron


def pretrain():
    initialize_megatron()
