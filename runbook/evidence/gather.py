"""The one evidence builder: what the diagnosis reads, for the incident and for `diagnose` alike.

The incident reads the cluster (the launcher logs over SSH, Slurm's record, the failing node's
probe, the job's lineage, its folder); `diagnose` reads the files a person gives. Both hand what
they have to `gather`, which derives every fact from it in one place: the job's code checked
(its script's programs, or the tree a person names), the memory series found in the job's metrics
file, the lineage's rungs, the failing node named on its health. A new fact read from those
inputs is added here once, and both paths have it; `classify` then derives the causes' facts.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from runbook.evidence.launcher_log import LaunchReport
from runbook.record import record

if TYPE_CHECKING:  # node health and Slurm's record load only where they were read
    from datetime import datetime

    from runbook.evidence.gpu_health import NodeHealth
    from runbook.slurm.text import SlurmJobText


@record
class Evidence:
    """What diagnose() reads: the launcher log's scan, Slurm's record, the failing node's health."""

    launch: LaunchReport | None = None
    slurm: SlurmJobText | None = None
    node_health: NodeHealth | None = None  # of the node where the first failure happened
    job_id: str | None = None
    dump: dict | None = None  # runbook.instrument's dump for the failing rank
    # The static source check of the job's code (jobfiles.source_check), and the rungs its
    # lineage already took: both feed the cause (docs/design.md §3.1).
    source: Any = None
    tried: tuple[str, ...] = ()
    parent_failed_step: int | None = None  # the step the lineage's parent failed at
    # A memory series from a file the job wrote (Lightning's DeviceStatsMonitor through a
    # CSVLogger or a TensorBoardLogger: evidence.job_metrics), read when the log carries none.
    series: Any = None


@record
class Code:
    """Where the job's code is: its batch script and working folder (the Python files the script
    runs and the modules they import), or a file or folder a person names (`script` None)."""

    where: str
    script: str | None = None


@record
class Metrics:
    """Where the memory series may be: a file a person names (`shown` is how to name it back),
    or the job's working folder, searched for a metrics file written while the run ran."""

    file: str | None = None
    shown: str = ""
    folder: str | None = None
    started: datetime | None = None
    ended: datetime | None = None


def gather(
    *,
    launch: LaunchReport | None = None,
    slurm: SlurmJobText | None = None,
    job_id: str | None = None,
    node_health: NodeHealth | None = None,
    dump: dict | None = None,
    code: Code | None = None,
    metrics: Metrics | None = None,
    lineage: Any = None,
) -> Evidence:
    """Every fact the diagnosis reads, from what the caller had; a missing input is a fact
    unknown, never a default. `lineage` is evidence.collect's LineageEvidence."""
    ff = launch.first_failure if launch else None
    if node_health is not None and not node_health.node and ff is not None and ff.node:
        node_health.node = ff.node  # files a person gives come from the failing node
    return Evidence(
        launch=launch,
        slurm=slurm,
        node_health=node_health,
        job_id=job_id if job_id is not None else (slurm.job_id if slurm else None),
        dump=dump,
        source=_checked(code) if code is not None else None,
        tried=tuple(r for _, r in lineage.tried) if lineage is not None else (),
        parent_failed_step=lineage.parent_failed_step if lineage is not None else None,
        series=_series(metrics, launch) if metrics is not None else None,
    )


def _checked(code: Code):
    from runbook.jobfiles import source_check  # the AST walk loads only where code is given

    if code.script is None:
        return source_check.check_tree(code.where)
    return source_check.check_job(code.script, code.where)


def _series(m: Metrics, launch: LaunchReport | None):
    from runbook.evidence import job_metrics

    if m.file is None:
        return job_metrics.series_of(m.folder or "", m.started, m.ended)
    # A path a person gives is theirs to give: a link is followed here (the search of a job's
    # folder follows none).
    series = job_metrics.read_series(os.path.realpath(m.file), m.shown or m.file)
    if series is None and launch is not None:
        launch.notes.append(
            f"{m.shown or m.file}: no DeviceStatsMonitor memory series (expected a "
            "CSVLogger metrics.csv with an on_train_batch_start/allocated_bytes.all.current "
            "column and rows under it, or a TensorBoard events.out.tfevents.* file with that "
            "scalar); the trend is read from the log alone"
        )
    return series
