"""`runbook diagnose`: offline diagnosis from captured files (DESIGN §4.1)."""

from __future__ import annotations

import click

from runbook.commands.pending import _not_built


@click.command()
@click.option("--log", "logs", multiple=True, type=click.Path(dir_okay=False), metavar="FILE")
@click.option("--dmesg", type=click.Path(dir_okay=False), metavar="FILE")
@click.option("--gpu-health", type=click.Path(dir_okay=False), metavar="FILE")
@click.option("--compute-apps", type=click.Path(dir_okay=False), metavar="FILE")
@click.option("--slurm", type=click.Path(dir_okay=False), metavar="FILE")
@click.option("--json", "as_json", is_flag=True)
def diagnose(logs, dmesg, gpu_health, compute_apps, slurm, as_json):
    """Diagnose an OOM from captured files."""
    raise _not_built("diagnose", 3, "read the OOM message by hand")
