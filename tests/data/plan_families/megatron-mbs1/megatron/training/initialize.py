from megatron.training.arguments import parse_args


def initialize_megatron():
    return parse_args()
