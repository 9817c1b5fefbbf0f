"""The `runbook` command: a thin click group that builds one context and hands it to each verb.

Only modules under runbook/commands/ print; everything below them returns data or raises a
RunbookError, which is turned here into one readable message and the exit code of DESIGN §4.3.
"""

from __future__ import annotations

import json
import sys

import click

from runbook import __version__
from runbook.errors import ExitCode, RunbookError
from runbook.site import SiteConfig, load_site


class AppContext:
    """What every verb gets: the chosen site, loaded once, with flag overrides applied last."""

    def __init__(self, site_name: str | None):
        self.site_name = site_name

    def site(self, **overrides) -> SiteConfig:
        return load_site(self.site_name, overrides=overrides)


class RunbookGroup(click.Group):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Remembered so that an error can be printed as JSON when the verb was asked for JSON.
        ctx.meta["runbook.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RunbookError as e:
            wants_json = "--json" in ctx.meta.get("runbook.argv", [])
            if wants_json:
                click.echo(
                    json.dumps({"error": e.message, "hint": e.hint, "exit_code": int(e.exit_code)})
                )
            else:
                click.echo(f"runbook: error: {e}", err=True)
            ctx.exit(int(e.exit_code))


@click.group(cls=RunbookGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="runbook")
@click.option(
    "--site",
    envvar="RUNBOOK_SITE",
    metavar="NAME",
    help="Site settings: site_config/NAME.toml, or a path to a .toml file (env RUNBOOK_SITE). "
    "Without it, built-in defaults.",
)
@click.pass_context
def cli(ctx: click.Context, site: str | None) -> None:
    """The on-call runbook for a Slurm PyTorch job that died of CUDA out-of-memory.

    It finds the rank that ran out of memory first and its node, stops the wedged job, checks the
    node's GPU health, classifies the OOM (true OOM, allocator fragmentation, co-tenant, GPU fault,
    host RAM), applies the next rung of the remediation ladder to the job's sbatch template,
    resubmits from the last valid checkpoint, and writes an incident report.

    \b
    Start here, offline, on a log you already have:
      runbook diagnose --log slurm-123456.out
    Exit codes: 0 ok, 1 a step failed, 2 usage/config error, 3 input not understood,
    4 needs a human.
    """
    ctx.obj = AppContext(site)


def main() -> None:
    try:
        cli.main(prog_name="runbook", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("runbook: interrupted", err=True)
        sys.exit(int(ExitCode.STEP_FAILED))


def _register() -> None:
    from runbook.commands import register

    register(cli)


_register()
