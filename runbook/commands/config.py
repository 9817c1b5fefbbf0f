"""`runbook config show|init`: what settings are in force and where each came from; a starter file."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import click

from runbook import identity
from runbook.errors import ConfigError
from runbook.site import effective_values, user_site_dir

_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@click.group()
def config():
    """Show the effective settings, or write a starter site config.

    \b
    Examples:
      runbook --site prod config show          # every value and where it came from
      runbook config init prod                 # ~/.config/runbook/sites/prod.toml
    """


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: key -> {value, origin}.")
@click.pass_obj
def show(app, as_json):
    """Print every setting in force, with where it came from.

    Origins: default, file PATH, environment VAR (RUNBOOK_<SECTION>_<KEY>), command line.
    Secrets ([hook] secret and token, [state] lineage_secret) are shown as *** when set.

    Then who acts for a job's owner ([identity]): from this account and host, whether runbook
    can act as another user (root; or `sudo -n -l` allows each command), what is missing, and
    the sudoers line a site grants. Nothing is changed to find out.

    \b
    Example:
      runbook --site prod config show
      RUNBOOK_SSH_USER=oncall runbook --config ./my.toml config show --json
    """
    site = app.site()
    rows = [
        (k, "***" if _secret(k) and v else v, origin) for k, v, origin in effective_values(site)
    ]
    backend = _backend(site.slurm.backend)
    ident = identity.host_check(site.identity)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "settings": site.source,
                    "values": {k: {"value": v, "origin": o} for k, v, o in rows},
                    "backend": backend,
                    "identity": ident,
                },
                indent=2,
            )
        )
        return
    click.echo(f"# settings: {site.source}")
    width = max(len(k) for k, _, _ in rows)
    for key, value, origin in rows:
        click.echo(f"{key:<{width}}  {json.dumps(value)}  ({origin})")
    _echo_identity(ident)
    if site.slurm.backend == "pyslurm":
        ps = backend["pyslurm"]
        if ps["error"]:
            click.echo(f"# pyslurm: {ps['error']}")
        else:
            built = f", built against Slurm {ps['slurm_api']}" if ps["slurm_api"] else ""
            click.echo(f"# pyslurm {ps['version']}{built}")
        click.echo("# the pyslurm backend does these through the Slurm commands:")
        for what, why in backend["through_the_commands"].items():
            click.echo(f"#   {what}: {why}")
        for what, why in backend["not_carried"].items():
            click.echo(f"#   not carried: {what}: {why}")


def _echo_identity(ident: dict) -> None:
    """Who acts for a job's owner, in words (docs/install.md, Running for every user)."""
    click.echo(
        f"# identity: runbook runs as {ident['account']} (uid {ident['uid']}); "
        f"act_as = {ident['act_as']}, node_reads = {ident['node_reads']}"
    )
    if ident["acts_for_others"]:
        click.echo(f"#   acts as a job's owner: yes, {ident['how']}")
    else:
        click.echo(f"#   acts as a job's owner: no ({ident['how'] or 'not granted'})")
    for m in ident["missing"]:
        click.echo(f"#   missing: {m}")
    click.echo(f"#   the sudoers line for a service account: {ident['sudoers_line']}")


def _backend(name: str) -> dict:
    """The Slurm backend the site chose and, for pyslurm, which release this Python imports:
    read from the library, not asked of slurmctld, so `config show` works with Slurm down."""
    if name != "pyslurm":
        return {"name": name}
    from runbook.slurm import pyslurm_backend as pb

    return {
        "name": name,
        "pyslurm": pb.installed(),
        "through_the_commands": pb.THROUGH_THE_COMMANDS,
        "not_carried": pb.NOT_CARRIED,
    }


def _secret(key: str) -> bool:
    return key in ("hook.secret", "hook.token", "state.lineage_secret")


@config.command("init")
@click.argument("name")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False),
    help="Write here instead of ~/.config/runbook/sites/NAME.toml.",
)
@click.option("--force", is_flag=True, help="Overwrite a file that exists.")
def init(name, output, force):
    """Write a commented starter site config NAME.toml (every key, with its default).

    By default it goes to $XDG_CONFIG_HOME/runbook/sites (~/.config/runbook/sites), where
    `--site NAME` finds it without root. Edit it, then check with `runbook --site NAME config
    show`.

    \b
    Example:
      runbook config init prod && runbook --site prod config show
    """
    if not output and (not name or set(name) - _NAME_CHARS):
        raise ConfigError(
            f"site name {name!r}: expected letters, digits, '-', '_' or '.'",
            hint="pick a plain name such as prod or cluster-a; --output FILE for any path",
        )
    target = Path(output).expanduser() if output else user_site_dir() / f"{name}.toml"
    if target.exists() and not force:
        raise ConfigError(
            f"{target} exists; nothing was written",
            hint="edit it, or pass --force to replace it with the starter",
        )
    text = (resources.files("runbook") / "site_config" / "example.toml").read_text("utf-8")
    text = text.replace('name = "default"', f"name = {json.dumps(name)}", 1)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    except OSError as e:
        raise ConfigError(
            f"cannot write {target}: {e.strerror or e}",
            hint="check the folder's permissions, or choose another place with --output",
        ) from None
    click.echo(f"wrote {target}")
    if not output:
        click.echo(f"next: edit it, then `runbook --site {name} config show`")
    else:
        click.echo(f"next: edit it, then `runbook --config {target} config show`")
