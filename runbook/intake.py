"""Pager webhook payloads into triggers: pure functions of the body (and its signature).

- Alertmanager webhook (version 4, and older bodies without version/groupKey): one trigger per
  alert that is firing (the alert's own status, else the group's), the job id from a configurable
  label (then annotation); resolved alerts are nothing to do.
- PagerDuty v3 webhook events: `incident.triggered` (and `incident.reopened`) only; v3 events do
  not carry the alert's custom details, so the job id comes from the title (configurable pattern),
  or from custom details when a delivery does carry them.
- A bare `{"job_id": "..."}` (or a list of them).
Several alerts in one delivery give several triggers. Every alert that gives no trigger says why.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import field

from runbook.errors import InputError
from runbook.record import record
from runbook.slurm.client import check_job_id, valid_job_id

GO_ZERO_TIME = "0001-01-01T00:00:00Z"


@record
class Candidate:
    job_id: str
    dedupe_key: str  # the same delivery (or alert) twice gives the same key
    source: str  # alertmanager | pagerduty | bare
    title: str = ""


@record
class Parsed:
    kind: str
    candidates: list[Candidate] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # why each non-trigger was not one


@record
class AmAlert:
    status: str | None
    effective_status: str
    labels: dict
    annotations: dict
    starts_at: str | None
    ends_at: str | None
    fingerprint: str | None
    generator_url: str | None

    @property
    def ends_at_is_zero_time(self) -> bool:
        return self.ends_at == GO_ZERO_TIME


@record
class AmPayload:
    status: str | None
    receiver: str | None
    version: str | None
    group_key: str | None
    truncated_alerts: int | None
    group_labels: dict
    common_labels: dict
    external_url: str | None
    alerts: list[AmAlert]


def parse_alertmanager(doc: dict) -> AmPayload:
    alerts = []
    for a in doc.get("alerts") or []:
        status = a.get("status")
        alerts.append(
            AmAlert(
                status=status,
                effective_status=status or doc.get("status") or "firing",
                labels=a.get("labels") or {},
                annotations=a.get("annotations") or {},
                starts_at=a.get("startsAt"),
                ends_at=a.get("endsAt"),
                fingerprint=a.get("fingerprint") or None,
                generator_url=a.get("generatorURL"),
            )
        )
    return AmPayload(
        status=doc.get("status"),
        receiver=doc.get("receiver"),
        version=doc.get("version"),
        group_key=doc.get("groupKey"),
        truncated_alerts=doc.get("truncatedAlerts"),
        group_labels=doc.get("groupLabels") or {},
        common_labels=doc.get("commonLabels") or {},
        external_url=doc.get("externalURL"),
        alerts=alerts,
    )


@record
class PdEvent:
    event_id: str | None
    event_type: str | None
    resource_type: str | None
    occurred_at: str | None
    agent_id: str | None
    agent_summary: str | None
    data_type: str | None
    incident_id: str | None
    incident_title: str | None
    incident_status: str | None
    custom_details: dict | None
    data: dict


def parse_pagerduty(doc: dict) -> PdEvent:
    ev = doc.get("event") or {}
    data = ev.get("data") or {}
    agent = ev.get("agent") or {}
    incident = data if data.get("type") == "incident" else (data.get("incident") or {})
    details = data.get("custom_details") or (data.get("body") or {}).get("details")
    return PdEvent(
        event_id=ev.get("id"),
        event_type=ev.get("event_type"),
        resource_type=ev.get("resource_type"),
        occurred_at=ev.get("occurred_at"),
        agent_id=agent.get("id"),
        agent_summary=agent.get("summary"),
        data_type=data.get("type"),
        incident_id=incident.get("id"),
        incident_title=incident.get("title") or incident.get("summary"),
        incident_status=incident.get("status") if incident is data else data.get("status"),
        custom_details=details if isinstance(details, dict) else None,
        data=data,
    )


# -- shape checks -------------------------------------------------------------------------------
# What each payload kind must look like before any field is used: a body from the network is data,
# and a label given as a list or a `data` given as a string must be a clear 400 (exit 3 on stdin),
# never a traceback or a 500 from `hook serve`. Keys not named here are allowed and ignored.
_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true/false",
    type(None): "null",
}
_TEXT = (str,)
_OPT_TEXT = (str, type(None))
_OPT_MAP = (dict, type(None))
_ALERT = {
    "status": _OPT_TEXT,
    "labels": _OPT_MAP,
    "annotations": _OPT_MAP,
    "startsAt": _OPT_TEXT,
    "endsAt": _OPT_TEXT,
    "fingerprint": _OPT_TEXT,
    "generatorURL": _OPT_TEXT,
}
_ALERTMANAGER = {
    "status": _OPT_TEXT,
    "receiver": _OPT_TEXT,
    "groupKey": _OPT_TEXT,
    "groupLabels": _OPT_MAP,
    "commonLabels": _OPT_MAP,
    "externalURL": _OPT_TEXT,
}
_PD_EVENT = {
    "id": _OPT_TEXT,
    "event_type": _OPT_TEXT,
    "resource_type": _OPT_TEXT,
    "occurred_at": _OPT_TEXT,
    "agent": _OPT_MAP,
    "data": _OPT_MAP,
}
_PD_AGENT = {"id": _OPT_TEXT, "summary": _OPT_TEXT}
_PD_DATA = {
    "type": _OPT_TEXT,
    "id": _OPT_TEXT,
    "title": _OPT_TEXT,
    "summary": _OPT_TEXT,
    "status": _OPT_TEXT,
    "incident": _OPT_MAP,
    "custom_details": _OPT_MAP,
    "body": _OPT_MAP,
}
_MAX_ALERTS = 1000  # Alertmanager's max_alerts cuts a group far below this


def _kind(value) -> str:
    return _NAMES.get(type(value), type(value).__name__)


def _need(value, types: tuple, where: str) -> None:
    if type(value) not in types:  # exact types: JSON true is not a number here
        want = " or ".join(dict.fromkeys(_NAMES[t] for t in types))
        raise InputError(
            f"webhook body: {where} must be {want}, found {_kind(value)}",
            hint="the payload does not have the shape of an Alertmanager v4 or PagerDuty v3 "
            'webhook; send one of those, or {"job_id": "123"}',
        )


def _fields(doc: dict, spec: dict, where: str) -> None:
    for key, types in spec.items():
        if key in doc:
            _need(doc[key], types, f"{where}.{key}")


def _text_map(doc: dict | None, where: str) -> None:
    """labels and annotations: string values, as Alertmanager sends them."""
    for k, v in (doc or {}).items():
        _need(v, _TEXT, f"{where}[{k[:40]!r}]")


def _shape_alertmanager(doc: dict) -> None:
    _fields(doc, _ALERTMANAGER, "$")
    for name in ("groupLabels", "commonLabels"):
        _text_map(doc.get(name), f"$.{name}")
    alerts = doc["alerts"]
    if len(alerts) > _MAX_ALERTS:
        raise InputError(
            f"webhook body: {len(alerts)} alerts in one delivery; at most {_MAX_ALERTS} are read",
            hint="set max_alerts on the Alertmanager receiver",
        )
    for i, a in enumerate(alerts):
        _need(a, (dict,), f"$.alerts[{i}]")
        _fields(a, _ALERT, f"$.alerts[{i}]")
        _text_map(a.get("labels"), f"$.alerts[{i}].labels")
        _text_map(a.get("annotations"), f"$.alerts[{i}].annotations")


def _shape_pagerduty(doc: dict) -> None:
    ev = doc["event"]
    _fields(ev, _PD_EVENT, "$.event")
    _fields(ev.get("agent") or {}, _PD_AGENT, "$.event.agent")
    data = ev.get("data") or {}
    _fields(data, _PD_DATA, "$.event.data")
    _fields(data.get("incident") or {}, _PD_DATA, "$.event.data.incident")
    _fields(data.get("body") or {}, {"details": _OPT_MAP}, "$.event.data.body")


def _shape_bare(docs: list) -> None:
    for i, d in enumerate(docs):
        _need(d.get("job_id"), (str, int, type(None)), f"$[{i}].job_id")


def _job(value) -> str | None:
    return valid_job_id(value)


def triggers(
    body: bytes,
    *,
    label: str = "slurm_job_id",
    title_pattern: str = r"(?i)\bjob[ _-]?(?:id)?[ :#=]*(\d+)",
) -> Parsed:
    """Candidates for `runbook oom` in a webhook body. InputError for a body that is not JSON or
    not any of the three shapes."""
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(
            f"webhook body is not JSON: {e}",
            hint='send an Alertmanager v4 or PagerDuty v3 webhook body, or {"job_id": "123"}',
        ) from None
    except RecursionError:
        raise InputError(
            "webhook body: nested too deeply to be a webhook payload",
            hint='send an Alertmanager v4 or PagerDuty v3 webhook body, or {"job_id": "123"}',
        ) from None
    except ValueError as e:  # a number over Python's digit limit, and the like
        raise InputError(
            f"webhook body: {str(e)[:120]}",
            hint="job ids and other numbers in a webhook are short; check what sent this",
        ) from None
    if isinstance(doc, list) and all(isinstance(d, dict) and "job_id" in d for d in doc):
        _shape_bare(doc)
        return _bare(doc)
    if not isinstance(doc, dict):
        raise InputError(
            'webhook body is neither an object nor a list of {"job_id": ...}',
            hint='send an Alertmanager v4 or PagerDuty v3 webhook body, or {"job_id": "123"}',
        )
    if "job_id" in doc and "alerts" not in doc and "event" not in doc:
        _shape_bare([doc])
        return _bare([doc])
    if "alerts" in doc:
        _need(doc["alerts"], (list,), "$.alerts")
        _shape_alertmanager(doc)
        return _from_alertmanager(parse_alertmanager(doc), label)
    if "event" in doc:
        _need(doc["event"], (dict,), "$.event")
        _shape_pagerduty(doc)
        return _from_pagerduty(parse_pagerduty(doc), title_pattern)
    raise InputError(
        'webhook body is not an Alertmanager, PagerDuty v3 or {"job_id": ...} payload '
        f"(top-level keys: {sorted(doc)[:8]})",
        hint='send {"job_id": "123"}, or point Alertmanager\'s webhook_config at runbook',
    )


def _bare(docs: list[dict]) -> Parsed:
    out = Parsed("bare")
    for d in docs:
        job = _job(d.get("job_id"))
        if job is None and d.get("job_id") not in (None, ""):
            # A bare body exists only to name a job: one it cannot name is the request's error
            # (400), said with the value cut to a readable length.
            try:
                check_job_id(d.get("job_id"))
            except InputError as e:
                raise InputError(f"webhook body: job_id {e.message}", hint=e.hint) from None
        if job is None:
            out.ignored.append("no job_id given")
        else:
            out.candidates.append(Candidate(job, f"bare:{job}", "bare"))
    return out


def _from_alertmanager(p: AmPayload, label: str) -> Parsed:
    out = Parsed("alertmanager")
    for a in p.alerts:
        name = a.labels.get("alertname", "?")
        if a.effective_status != "firing":
            out.ignored.append(f"alert {name}: {a.effective_status}, nothing to do")
            continue
        job = _job(a.labels.get(label)) or _job(a.annotations.get(label))
        if job is None:
            out.ignored.append(f"alert {name}: no Slurm job id in label {label!r}")
            continue
        key = f"am:{a.fingerprint or name}:{a.starts_at}:{job}"
        out.candidates.append(
            Candidate(job, key, "alertmanager", a.annotations.get("summary", name))
        )
    return out


def _from_pagerduty(ev: PdEvent, title_pattern: str) -> Parsed:
    out = Parsed("pagerduty")
    if ev.event_type not in ("incident.triggered", "incident.reopened"):
        out.ignored.append(f"PagerDuty {ev.event_type}: nothing to do")
        return out
    job = None
    for key in ("slurm_job_id", "job_id", "job"):
        job = job or _job((ev.custom_details or {}).get(key))
    if job is None and ev.incident_title and (m := re.search(title_pattern, ev.incident_title)):
        job = _job(m.group(1))
    if job is None:
        out.ignored.append(
            f"PagerDuty incident {ev.incident_id} ({ev.incident_title!r}): no "
            "Slurm job id in custom details or title"
        )
        return out
    out.candidates.append(Candidate(job, f"pd:{ev.event_id}", "pagerduty", ev.incident_title or ""))
    return out


# -- authentication ----------------------------------------------------------------------------
class SignatureError(InputError):
    """The request's signature or token is missing, malformed or wrong."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status  # 400 malformed, 401 missing credentials, 403 wrong ones


def pagerduty_signatures(header: str | None) -> list[str]:
    """The v1 signatures in an X-PagerDuty-Signature header (several during secret rotation)."""
    return [p.strip()[3:] for p in (header or "").split(",") if p.strip().startswith("v1=")]


def check_pagerduty(secret: str, header: str | None, body: bytes) -> None:
    """PagerDuty's scheme: hex HMAC-SHA256 of the raw body, keyed with the secret string as is."""
    if not header or not header.strip():
        raise SignatureError("X-PagerDuty-Signature header missing or empty", 400)
    if not body:
        raise SignatureError("empty body", 400)
    sigs = pagerduty_signatures(header)
    if not sigs:
        raise SignatureError("X-PagerDuty-Signature holds no v1= signature", 400)
    want = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(want, s.lower()) for s in sigs):
        raise SignatureError("no X-PagerDuty-Signature matches the body", 403)


def check_bearer(token: str, header: str | None) -> None:
    if not header:
        raise SignatureError("Authorization header missing", 401)
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value:
        raise SignatureError("Authorization is not a Bearer token", 400)
    if not hmac.compare_digest(token.encode(), value.strip().encode()):
        raise SignatureError("wrong bearer token", 403)
