"""Notification sinks: a real HTTP receiver on loopback for the Slack-compatible webhook; a sink
that is down is recorded and retried later; mail goes to the configured sendmail (here a
recording stand-in, since no MTA runs in the tests)."""

from __future__ import annotations

import dataclasses
import http.server
import json
import socket
import threading

from runbook import notify, state
from runbook.site import SiteConfig


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver(http.server.BaseHTTPRequestHandler):
    got: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        Receiver.got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def site(**notify_changes) -> SiteConfig:
    base = SiteConfig()
    return dataclasses.replace(base, notify=dataclasses.replace(base.notify, **notify_changes))


def test_webhook_down_then_up_is_retried_and_delivered(tmp_path):
    port = free_port()
    cfg = site(webhook_url=f"http://127.0.0.1:{port}/hooks/oncall", timeout_s=2)
    conn = state.open_db(tmp_path / "runbook.db")
    assert notify.queue(conn, cfg, "inc-1", "fragmentation: job 42; resubmitted as 43", "/x") == 1
    assert notify.flush(conn, cfg) == {"sent": 0, "failed": 1}  # nothing listens yet
    row = conn.execute("SELECT attempts, last_error, sent FROM outbox").fetchone()
    assert row["attempts"] == 1 and row["last_error"] and row["sent"] is None
    server = http.server.HTTPServer(("127.0.0.1", port), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert notify.flush(conn, cfg) == {"sent": 1, "failed": 0}
        assert notify.flush(conn, cfg) == {"sent": 0, "failed": 0}  # once only
    finally:
        server.shutdown()
    (msg,) = Receiver.got
    assert msg["text"].startswith("runbook inc-1: fragmentation") and "/x/report.md" in msg["text"]


def test_mail_through_a_recording_sendmail_standin(tmp_path):
    out = tmp_path / "mail.eml"
    fake = tmp_path / "sendmail"
    fake.write_text(f'#!/bin/sh\n[ "$1 $2" = "-t -oi" ] || exit 64\ncat > {out}\n')
    fake.chmod(0o755)
    cfg = site(mail_to="oncall@example.org", sendmail=str(fake))
    conn = state.open_db(tmp_path / "runbook.db")
    notify.queue(conn, cfg, "inc-2", "host_oom: job 7; resubmitted as 8", None)
    assert notify.flush(conn, cfg) == {"sent": 1, "failed": 0}
    mail = out.read_text()
    assert "To: oncall@example.org" in mail and "Subject: runbook inc-2: host_oom" in mail


def test_no_sinks_no_messages(tmp_path):
    conn = state.open_db(tmp_path / "runbook.db")
    assert notify.queue(conn, SiteConfig(), "inc", "x", None) == 0


def test_a_running_job_heading_for_an_oom_is_told_to_the_sink_once_per_kind(tmp_path):
    """Issue 56, item 1: the sweep's report-only line reaches the on-call sink, once per job and
    kind, however many cron periods see it again."""
    from runbook.sweep import tell_once

    server = http.server.HTTPServer(("127.0.0.1", free_port()), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Receiver.got = []
    cfg = site(webhook_url=f"http://127.0.0.1:{server.server_port}/h", timeout_s=2)
    conn = state.open_db(tmp_path / "runbook.db")
    said = "report only: rank 1: the allocator's retries rose (5 -> 10 -> 15)"
    try:
        assert tell_once(conn, cfg, "77", "thrashing", said)
        assert not tell_once(conn, cfg, "77", "thrashing", said)  # the next sweep: not again
        assert tell_once(conn, cfg, "77", "leak", said)  # another kind is news
    finally:
        server.shutdown()
    texts = [m["text"] for m in Receiver.got]
    assert texts == [
        f"runbook watch-77-thrashing: job 77 thrashing: {said}",
        f"runbook watch-77-leak: job 77 leak: {said}",
    ], texts
    assert not tell_once(conn, SiteConfig(), "78", "leak", said)  # no sink: nothing queued
