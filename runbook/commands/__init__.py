"""One module per verb; `register` adds them all to the root group."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    from runbook.commands import diagnose, pending

    group.add_command(diagnose.diagnose)
    for command in pending.COMMANDS:
        group.add_command(command)
