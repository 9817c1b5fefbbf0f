"""Where commands run: on this host (local.py) or on another over SSH (ssh.py), one interface."""

from runbook.transport.base import CommandResult, Transport, command_line

__all__ = ["CommandResult", "Transport", "command_line"]
