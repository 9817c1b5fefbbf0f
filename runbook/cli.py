"""The `runbook` command: a thin click group that builds one context and hands it to each verb.

Only modules under runbook/commands/ print; everything below them returns data or raises a
RunbookError, which is turned here into one readable message and the exit code of the exit-code
table in `runbook --help`.

Verbs load lazily: `runbook --help` and `runbook diagnose` must not pay for paramiko, jinja2 or
waitress (an on-call engineer runs them on a busy login node, often in a loop). The table below
names each verb's module and its one-line help, so the root help lists them without importing any.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import sys
from collections.abc import Iterator

import click

from runbook import __version__
from runbook.errors import ExitCode, RunbookError, storage_failure

# verb -> (module, attribute, one-line help). tests/unit/test_cli.py checks each line against the
# verb's own docstring, so the two cannot drift.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "oom": (
        "runbook.commands.oom",
        "oom",
        "Run the whole runbook for one job that died of CUDA OOM.",
    ),
    "hang": (
        "runbook.commands.hang",
        "hang",
        "Run the hung-job runbook for one RUNNING job whose ranks make no progress.",
    ),
    "grow": (
        "runbook.commands.grow",
        "grow",
        "Return a job runbook shrank to its lineage's original node count.",
    ),
    "prevent": (
        "runbook.commands.grow",
        "prevent",
        "Ask a running job heading for an OOM to checkpoint, then rerun it fitted.",
    ),
    "diagnose": (
        "runbook.commands.diagnose",
        "diagnose",
        "Diagnose a CUDA OOM offline, from files you already have.",
    ),
    "hook": (
        "runbook.commands.intake",
        "hook",
        "Pager webhook intake: Alertmanager or PagerDuty payloads, or a bare job id.",
    ),
    "sweep": (
        "runbook.commands.intake",
        "sweep",
        "Triage failed (and wedged) jobs from Slurm, for cron.",
    ),
    "verify": (
        "runbook.commands.incidents",
        "verify",
        "Check that the rerun got past the step that failed; appends the result to the report.",
    ),
    "incidents": (
        "runbook.commands.incidents",
        "incidents",
        "List incidents, the most recently run first.",
    ),
    "report": (
        "runbook.commands.incidents",
        "report",
        "Re-render one incident's report (Markdown, JSON, HTML) from its report.json.",
    ),
    "nodes": (
        "runbook.commands.nodes",
        "nodes",
        "List each node's history across incidents.",
    ),
    "stats": (
        "runbook.commands.stats",
        "stats",
        "Sum what incidents cost: counts and GPU-hours lost by verdict, rung and node.",
    ),
    "plan": (
        "runbook.commands.plan",
        "plan",
        "Show what each rung of the ladder would change in a job script.",
    ),
    "submit": (
        "runbook.commands.submit",
        "submit",
        "Render a job from a jinja2 template and submit it.",
    ),
    "state": (
        "runbook.commands.state",
        "state",
        "Show or migrate runbook's state database.",
    ),
    "config": (
        "runbook.commands.config",
        "config",
        "Show the effective settings, or write a starter site config.",
    ),
}


class AppContext:
    """What every verb gets: the chosen site, loaded on first use, with flag overrides last."""

    def __init__(self, site_name: str | None, config_file: str | None = None, verbosity: int = 0):
        self.site_name = site_name
        self.config_file = config_file
        self.verbosity = verbosity  # -1 quiet, 0 normal, 1+ verbose

    def site(self, **overrides):
        from runbook.site import load_site

        return load_site(self.site_name, config_file=self.config_file, overrides=overrides)

    def site_flags(self) -> list[str]:
        """The flags that choose this run's settings, for next-step commands a user copies."""
        import shlex

        if self.config_file:
            return ["--config", shlex.quote(self.config_file)]
        if self.site_name:
            return ["--site", shlex.quote(self.site_name)]
        return []

    def progress(self, message: str) -> None:
        """A progress line on stderr, unless -q."""
        if self.verbosity >= 0:
            click.echo(f"  {message}", err=True)


class RunbookGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        with _collector_paused():
            loaded = importlib.import_module(module)
        return _with_site_options(getattr(loaded, attr))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Remembered so that an error can be printed as JSON when the verb was asked for JSON.
        ctx.meta["runbook.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RunbookError as e:
            self._fail(ctx, e)
        except Exception as e:
            # A full or read-only disk under runbook's own state can strike at any write: one
            # message, and the incident it cut short is resumable (interrupted). Anything else
            # (click's own exits included) goes on as it was.
            full = storage_failure(e, _state_dir(ctx.obj))
            if full is None:
                raise
            self._fail(ctx, full)

    @staticmethod
    def _fail(ctx: click.Context, e: RunbookError) -> None:
        if "--json" in ctx.meta.get("runbook.argv", []):
            click.echo(
                json.dumps({"error": e.message, "hint": e.hint, "exit_code": int(e.exit_code)})
            )
        else:
            click.echo(f"runbook: error: {e}", err=True)
        ctx.exit(int(e.exit_code))


def _choose(attr: str):
    def callback(ctx: click.Context, _param, value):
        app = ctx.find_object(AppContext)
        if value is not None and app is not None:
            setattr(app, attr, value)
            # One source of settings: the file named last wins, and says so in site_flags.
            setattr(app, "config_file" if attr == "site_name" else "site_name", None)

    return callback


def _with_site_options(cmd: click.Command) -> click.Command:
    """`--site NAME` and `--config FILE` after the verb too (`runbook diagnose --site prod ...`),
    where people type them: on every verb and sub-verb, setting what the same flags before the
    verb set."""
    if getattr(cmd, "_runbook_site_options", False):
        return cmd
    for sub in getattr(cmd, "commands", {}).values():
        _with_site_options(sub)
    names = {o for p in cmd.params for o in getattr(p, "opts", [])}
    if "--site" not in names:
        cmd.params.append(
            click.Option(
                ["--site", "site_after"],
                metavar="NAME",
                expose_value=False,
                callback=_choose("site_name"),
                help="Site settings NAME.toml (as `runbook --site NAME VERB`).",
            )
        )
    if "--config" not in names:
        cmd.params.append(
            click.Option(
                ["--config", "config_after"],
                metavar="FILE",
                type=click.Path(dir_okay=False),
                expose_value=False,
                callback=_choose("config_file"),
                help="Site settings from this TOML file (as `runbook --config FILE VERB`).",
            )
        )
    cmd._runbook_site_options = True  # type: ignore[attr-defined]
    return cmd


# Set by runbook.entry (the console script): this process runs one verb and exits, so what its
# modules made lives until exit. A test's process, or a library import, leaves it False.
ONE_PROCESS_ONE_VERB = False


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a verb's modules load: their objects live until exit, so a
    collection over them finds nothing (runbook.entry says what that costs start-up). The
    collector is as it was afterwards, for the verb's own work and for a test's process."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if ONE_PROCESS_ONE_VERB:
                # Nor later: the verb's own collections skip what only exit frees (one
                # `runbook oom`: 18 ms of collections before, 3 ms after; docs/scale.md).
                gc.freeze()
            gc.enable()


def _state_dir(app) -> str:
    """The state dir of this run's settings, for an error message; empty when unknown."""
    try:
        site = app.site()
        return str(site.path(site.state.dir))
    except Exception:  # the message is best effort: the settings may be what failed
        return ""


def _version_text(app: AppContext) -> str:
    from runbook.datafiles import describe_source

    lines = [f"runbook {__version__}", f"python {sys.version.split()[0]}"]
    try:
        site = app.site()
        lines.append(f"settings: {site.source}")
        lines.append(f"playbooks: {describe_source(site.playbooks.dir)}")
    except RunbookError as e:
        lines.append(f"settings: not loaded ({e.message})")
        lines.append(f"playbooks: {describe_source('')}")
    from importlib import resources

    epilog = resources.files("runbook") / "site_config" / "slurmctld_epilog.sh"
    lines.append(f"slurmctld epilog (the Slurm trigger, to copy and edit): {epilog}")
    return "\n".join(lines)


@click.group(
    cls=RunbookGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--site",
    envvar="RUNBOOK_SITE",
    metavar="NAME",
    help="Site settings NAME.toml, looked for in $RUNBOOK_SITE_DIR, ~/.config/runbook/sites, "
    "/etc/runbook/sites, ./site_config (env RUNBOOK_SITE). Without --site or --config: "
    "built-in defaults.",
)
@click.option(
    "--config",
    "config_file",
    envvar="RUNBOOK_CONFIG",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Site settings from this TOML file (env RUNBOOK_CONFIG).",
)
@click.option("-v", "--verbose", count=True, help="More detail on stderr (-vv: SSH too).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines; results and errors only.")
@click.option(
    "--version",
    is_flag=True,
    help="Print the version, the settings file and the playbooks folder in use, then exit.",
)
@click.pass_context
def cli(ctx: click.Context, site, config_file, verbose, quiet, version) -> None:
    """The on-call runbook for a Slurm PyTorch job that died of CUDA out-of-memory.

    It finds the rank that ran out of memory first and its node, stops the wedged job, checks the
    node's GPU health, classifies the OOM (true OOM, allocator fragmentation, co-tenant, GPU fault,
    host RAM), applies the next rung of the remediation ladder to the job script, resubmits from
    the last valid checkpoint, and writes an incident report.

    \b
    Start here, offline, on a log you already have:
      runbook diagnose --log slurm-123456.out
    Then, on the cluster (a dry run changes nothing):
      runbook --site prod oom 123456 --dry-run
    Exit codes: 0 ok, 1 a step failed, 2 usage/config error, 3 input not understood,
    4 needs a human.
    """
    app = AppContext(site, config_file, -1 if quiet else verbose)
    ctx.obj = app
    if verbose:
        import logging  # only when asked: --help and diagnose start faster without it

        logging.basicConfig(
            level=logging.DEBUG if verbose > 1 else logging.INFO,
            format="runbook: %(name)s: %(message)s",
        )
        if verbose < 2:
            logging.getLogger("paramiko").setLevel(logging.WARNING)
    if version:
        click.echo(_version_text(app))
        ctx.exit(0)
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


def main() -> None:
    try:
        cli.main(prog_name="runbook", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("runbook: interrupted", err=True)
        sys.exit(int(ExitCode.STEP_FAILED))
