"""Build the Slurm client a site asks for."""

from __future__ import annotations

from runbook.errors import ConfigError
from runbook.slurm.client import SlurmClient
from runbook.transport.local import LocalTransport


def slurm_transport(site):
    s = site.slurm
    if s.transport == "local":
        return LocalTransport(max_output_bytes=64 << 20, default_timeout=s.command_timeout_s)
    if s.transport == "ssh":
        if not s.login_host:
            raise ConfigError(
                '[slurm] transport = "ssh" needs [slurm] login_host',
                hint="set it to a host where sbatch/scontrol/sacct work",
            )
        from runbook.transport.ssh import SshSettings, SshTransport

        return SshTransport(s.login_host, SshSettings.from_site(site))
    raise ConfigError(f'[slurm] transport must be "local" or "ssh", found {s.transport!r}')


def slurm_client(site) -> SlurmClient:
    from runbook.slurm.cli_backend import CliSlurm

    cli = CliSlurm(
        slurm_transport(site), timeout=site.slurm.command_timeout_s, cluster=site.slurm.cluster
    )
    if site.slurm.backend == "cli":
        return cli
    if site.slurm.backend == "pyslurm":
        from runbook.slurm.pyslurm_backend import PyslurmBackend

        return PyslurmBackend(submitter=cli)
    raise ConfigError(f'[slurm] backend must be "cli" or "pyslurm", found {site.slurm.backend!r}')
