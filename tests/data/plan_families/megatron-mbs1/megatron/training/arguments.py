import argparse


def _add_training_args(parser):
    group = parser.add_argument_group(title="training")
    group.add_argument("--micro-batch-size", type=int, default=None)
    group.add_argument("--global-batch-size", type=int, default=None)
    group.add_argument("--recompute-activations", action="store_true")
    group.add_argument(
        "--recompute-granularity", type=str, default=None, choices=["full", "selective"]
    )
    group.add_argument("--recompute-method", type=str, default=None, choices=["uniform", "block"])
    group.add_argument("--recompute-num-layers", type=int, default=None)
    group.add_argument("--train-iters", type=int, default=None)
    group.add_argument("--bf16", action="store_true")
    group.add_argument("--lr", type=float, default=None)
    return parser


def _add_model_args(parser):
    group = parser.add_argument_group(title="network size")
    group.add_argument("--num-layers", type=int, default=None)
    group.add_argument("--hidden-size", type=int, default=None)
    group.add_argument("--num-attention-heads", type=int, default=None)
    group.add_argument("--seq-length", type=int, default=None)
    group.add_argument("--max-position-embeddings", type=int, default=None)
    group.add_argument("--tensor-model-parallel-size", type=int, default=1)
    group.add_argument("--pipeline-model-parallel-size", type=int, default=1)
    return parser


def parse_args():
    parser = argparse.ArgumentParser(description="Megatron-LM Arguments", allow_abbrev=False)
    parser = _add_training_args(_add_model_args(parser))
    return parser.parse_args()
