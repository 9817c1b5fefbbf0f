"""Webhook bodies of the wrong shape are refused with a reason, never a traceback: the readers see
only bodies whose fields have the types the payload kind defines. Property test: any JSON value,
and any bytes, give a Parsed or an InputError, nothing else."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runbook.errors import InputError
from runbook.intake import triggers
from tests.conftest import corpus_records

HOSTILE = {
    "nested 200k deep": b"[" * 200_000 + b"]" * 200_000,
    "alerts of strings": json.dumps({"alerts": ["x"]}).encode(),
    "labels as a list": json.dumps({"alerts": [{"status": "firing", "labels": ["a"]}]}).encode(),
    "annotations as a string": json.dumps(
        {"alerts": [{"status": "firing", "labels": {}, "annotations": "x"}]}
    ).encode(),
    "label value an object": json.dumps(
        {"alerts": [{"labels": {"slurm_job_id": {"x": 1}}}]}
    ).encode(),
    "pagerduty data as a list": json.dumps(
        {"event": {"event_type": "incident.triggered", "data": [1, 2]}}
    ).encode(),
    "pagerduty title a number": json.dumps(
        {"event": {"event_type": "incident.triggered", "data": {"type": "incident", "title": 5}}}
    ).encode(),
    "job id of 5000 digits": b'{"job_id": ' + b"7" * 5000 + b"}",
    "job id of 5000 digits in a string": b'{"job_id": "' + b"7" * 5000 + b'"}',
    "job id past 32 bits": b'{"job_id": "4294967296"}',
    "job id true": b'{"job_id": true}',
    "job id a list": b'{"job_id": [1]}',
    "status a number": json.dumps({"alerts": [{"status": 3, "labels": {}}]}).encode(),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_body_is_a_clear_input_error(name):
    with pytest.raises(InputError) as e:
        triggers(HOSTILE[name])
    assert "webhook body" in e.value.message


def test_real_payloads_pass_the_shape_checks():
    records = corpus_records("webhooks/alertmanager.jsonl") + corpus_records(
        "webhooks/pagerduty.jsonl"
    )
    bodies = [r for r in records if r["text"].lstrip()[:1] in ("{", "[")]  # not header examples
    assert len(bodies) >= 15
    for rec in bodies:
        triggers(rec["text"].encode())


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=25,
)
_keys = st.sampled_from(
    [
        "alerts",
        "event",
        "job_id",
        "labels",
        "annotations",
        "data",
        "status",
        "event_type",
        "incident",
        "custom_details",
        "body",
        "title",
    ]
)
_shaped = st.recursive(
    _json,
    lambda inner: st.dictionaries(_keys, inner, max_size=5) | st.lists(inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_shaped)
def test_any_json_gives_parsed_or_input_error(doc):
    with contextlib.suppress(InputError):
        triggers(json.dumps(doc).encode())


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_parsed_or_input_error(body):
    with contextlib.suppress(InputError):
        triggers(body)
