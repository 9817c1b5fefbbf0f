"""Slurm: hostlists, parsers of its text outputs, and (later) the client protocol and backends."""
