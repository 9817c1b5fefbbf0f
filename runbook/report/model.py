"""The incident record: everything the runbook saw, decided and did, as plain data.

Built up stage by stage by the pipeline and saved after every stage, so a report exists even
when a later stage fails; the renderers only read it.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import field
from typing import Any

from runbook.record import record

SCHEMA = "runbook.incident/1"
_SECRET_KEY = re.compile(r"(?i)(token|secret|passw(or)?d|api[_-]?key|auth|credential)")


def mask(value: Any) -> Any:
    """Secrets out of anything that goes into a report: NAME=value pairs whose NAME looks like a
    secret, and the values of such keys in mappings."""
    if isinstance(value, str):
        return re.sub(
            r"(?i)\b([A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|AUTH)[A-Z0-9_]*)="
            r"([^\s,]+)",
            r"\1=***",
            value,
        )
    if isinstance(value, list | tuple):
        return [mask(v) for v in value]
    if isinstance(value, dict):
        return {
            k: ("***" if isinstance(k, str) and _SECRET_KEY.search(k) and v else mask(v))
            for k, v in value.items()
        }
    return value


def plain(obj: Any) -> Any:
    """Dataclasses, datetimes and sets as JSON-ready data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [plain(v) for v in obj]
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return obj


@record
class Step:
    name: str
    started: float
    finished: float | None = None
    status: str = "running"  # ok | skipped | unknown | failed | refused (exit 4) | running
    detail: str = ""


@record
class Incident:
    id: str
    job_id: str
    source: str
    actor: str
    site: str
    dry_run: bool = False
    started: float = field(default_factory=time.time)
    finished: float | None = None
    status: str = "running"  # complete | stopped
    stopped_at: str | None = None
    # The exit code of the error that stopped it, where it is not a failed step's (1): a
    # refusal to act for the job's owner is a person's to settle (4).
    stop_exit: int | None = None
    exit_code: int | None = None
    summary: str = ""
    timeline: list[Step] = field(default_factory=list)
    job: dict = field(default_factory=dict)
    evidence: dict = field(default_factory=dict)
    diagnosis: dict = field(default_factory=dict)
    plan: dict = field(default_factory=dict)
    actions: list[dict] = field(default_factory=list)
    new_job_id: str | None = None
    next_steps: list[str] = field(default_factory=list)
    verification: dict = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    cost: dict = field(default_factory=dict)  # runbook.report.cost: times and GPU-hours lost

    def to_json(self) -> dict:
        data = plain(self)
        data["schema"] = SCHEMA
        return mask(data)
