"""One module per verb; `register` adds them all to the root group."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    from runbook.commands import diagnose, incidents, intake, oom, submit

    group.add_command(diagnose.diagnose)
    group.add_command(incidents.verify)
    group.add_command(incidents.incidents)
    group.add_command(incidents.report)
    group.add_command(oom.oom)
    group.add_command(submit.submit)
    group.add_command(intake.hook)
    group.add_command(intake.sweep)
