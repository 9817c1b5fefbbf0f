"""Webhook payloads from ../shared/corpus/webhooks against their answer keys, and the PagerDuty
signature test vector."""

from __future__ import annotations

import json

import pytest

from runbook.errors import InputError
from runbook.intake import (
    SignatureError,
    check_bearer,
    check_pagerduty,
    pagerduty_signatures,
    parse_alertmanager,
    parse_pagerduty,
    triggers,
)
from tests.conftest import corpus_records

AM = corpus_records("webhooks/alertmanager.jsonl")
PD = corpus_records("webhooks/pagerduty.jsonl")


@pytest.mark.parametrize("rec", AM, ids=[r["id"] for r in AM])
def test_alertmanager_record(rec):
    a = rec["answer"]
    p = parse_alertmanager(json.loads(rec["text"]))
    assert (p.status, p.receiver, p.version, p.group_key, p.truncated_alerts) == (
        a["status"],
        a["receiver"],
        a["version"],
        a["groupKey"],
        a["truncatedAlerts"],
    )
    assert p.group_labels == a["groupLabels"] and p.common_labels == a["commonLabels"]
    assert p.external_url == a["externalURL"] and len(p.alerts) == a["alert_count"]
    for got, want in zip(p.alerts, a["alerts"], strict=True):
        assert got.status == want["status"] and got.effective_status == want["effective_status"]
        assert (
            got.labels == want["labels"]
            and got.ends_at_is_zero_time == want["ends_at_is_zero_time"]
        )
        assert got.starts_at == want["startsAt"] and got.ends_at == want["endsAt"]
        assert got.fingerprint == (want["fingerprint"] or None)
        assert got.annotations.get("summary") == want["summary"]
    # No Slurm label in these real alerts: nothing to run, and each says why.
    parsed = triggers(rec["text"].encode())
    assert parsed.candidates == [] and len(parsed.ignored) == a["alert_count"]


PD_BODIES = [r for r in PD if r["answer"].get("event_type")]  # pd-08 is a header, not a body


@pytest.mark.parametrize("rec", PD_BODIES, ids=[r["id"] for r in PD_BODIES])
def test_pagerduty_record(rec):
    a = rec["answer"]
    ev = parse_pagerduty(json.loads(rec["text"]))
    for key, got in [
        ("event_id", ev.event_id),
        ("event_type", ev.event_type),
        ("resource_type", ev.resource_type),
        ("occurred_at", ev.occurred_at),
        ("agent_id", ev.agent_id),
        ("agent_summary", ev.agent_summary),
        ("data_type", ev.data_type),
        ("incident_id", ev.incident_id),
        ("incident_title", ev.incident_title),
    ]:
        if key in a:
            assert got == a[key], key
    assert ev.custom_details == a["custom_details"]  # v3 events carry none


def test_one_trigger_per_firing_alert_with_the_label():
    doc = json.loads(next(r for r in AM if r["id"] == "am-00-zulip-alert")["text"])
    doc["alerts"][0]["labels"]["slurm_job_id"] = "1234"
    doc["alerts"][1]["labels"]["slurm_job_id"] = "5678"
    parsed = triggers(json.dumps(doc).encode())
    assert [c.job_id for c in parsed.candidates] == ["1234", "5678"]
    assert len({c.dedupe_key for c in parsed.candidates}) == 2
    resolved = json.loads(next(r for r in AM if r["id"] == "am-01-zulip-single-resolved")["text"])
    resolved["alerts"][0]["labels"]["slurm_job_id"] = "1234"
    assert triggers(json.dumps(resolved).encode()).candidates == []


def test_pagerduty_job_id_from_the_title():
    doc = json.loads(next(r for r in PD if r["id"] == "pd-00-zulip-triggered")["text"])
    doc["event"]["data"]["title"] = "GPU OOM: Slurm job 424242 on gpu-07"
    (c,) = triggers(json.dumps(doc).encode()).candidates
    assert (c.job_id, c.source) == ("424242", "pagerduty")
    ack = next(r for r in PD if r["id"] == "pd-01-zulip-acknowledged")["text"]
    assert triggers(ack.encode()).candidates == []


def test_bare_and_bad_bodies():
    assert [c.job_id for c in triggers(b'{"job_id": "77"}').candidates] == ["77"]
    assert [c.job_id for c in triggers(b'[{"job_id": "1"}, {"job_id": 2}]').candidates] == [
        "1",
        "2",
    ]
    for bad in (b'{"job_id": "7; rm -rf /"}', b'{"job_id": "' + b"9" * 5000 + b'"}'):
        with pytest.raises(InputError, match="webhook body: job_id .* is not a Slurm job id"):
            triggers(bad)
    with pytest.raises(InputError, match="not JSON"):
        triggers(b"{nope")
    with pytest.raises(InputError, match="not an Alertmanager"):
        triggers(b'{"hello": 1}')


def test_pagerduty_signature_vector():
    rec = next(r for r in PD if r["id"] == "pd-07-go-pagerduty-signature-test")
    st = rec["answer"]["signature_test"]
    for case in st["cases"]:
        # "text" names the record's own text: the exact body the vector was computed over.
        body = (rec["text"] if case["body"] == "text" else case["body"]).encode()
        if case["expect"] == "accept":
            check_pagerduty(st["secret"], case["header_value"], body)
        else:
            want = 403 if "403" in case["expect"] else 400
            with pytest.raises(SignatureError) as e:
                check_pagerduty(st["secret"], case["header_value"], body)
            assert e.value.status == want


def test_signature_header_with_two_values():
    rec = next(r for r in PD if r["id"] == "pd-08-docs-signature-header-example")
    st = rec["answer"]["signature_test"]
    assert pagerduty_signatures(st["header_value_on_the_wire"]) == st["parsed_signatures"]


def test_bearer():
    check_bearer("s3cret", "Bearer s3cret")
    for header, status in [(None, 401), ("Basic x", 400), ("Bearer nope", 403)]:
        with pytest.raises(SignatureError) as e:
            check_bearer("s3cret", header)
        assert e.value.status == status
