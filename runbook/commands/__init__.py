"""One module per verb. The root group (runbook/cli.py) imports a verb's module only when that
verb runs, so a module here may import what its verb needs at the top."""
