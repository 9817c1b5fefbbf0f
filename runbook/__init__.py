"""runbook: the on-call runbook for a Slurm PyTorch job that died of CUDA out-of-memory."""

__version__ = "0.1.0"
