from .initialize import initialize_megatron
from .training import pretrain

__all__ = ["initialize_megatron", "pretrain"]
