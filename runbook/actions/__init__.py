"""The only place runbook changes the world: every scancel, drain, file write and sbatch goes
through `executor.Executor`."""
