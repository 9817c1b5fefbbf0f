"""Incident summaries to the site's sinks: a Slack-compatible webhook and/or mail through the
local MTA. Every message goes through an outbox table first, so a sink that is down costs a retry
on the next run (hook, sweep or CLI), never the incident."""

from __future__ import annotations

import json
import subprocess
import time


def queue(conn, site, incident: str, summary: str, folder: str | None) -> int:
    n = site.notify
    text = f"runbook {incident}: {summary}" + (f"\nreport: {folder}/report.md" if folder else "")
    sinks = ([("webhook", n.webhook_url)] if n.webhook_url else []) + (
        [("mail", n.mail_to)] if n.mail_to else []
    )
    for sink, _ in sinks:
        conn.execute(
            "INSERT INTO outbox(sink, incident, payload, attempts, created) VALUES (?, ?, ?, 0, ?)",
            (sink, incident, text, time.time()),
        )
    return len(sinks)


# urllib.request (with http.client and ssl) and email are imported where a message is sent:
# most incidents have no sink, and they were 8 ms of each incident's start.


def _send_webhook(url: str, text: str, timeout: float) -> None:
    import urllib.request

    req = urllib.request.Request(
        url,
        data=json.dumps({"text": text}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 - the site's own URL
        if r.status >= 300:
            raise OSError(f"HTTP {r.status}")


def _send_mail(n, text: str) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"], msg["To"] = n.mail_from, n.mail_to
    msg["Subject"] = text.splitlines()[0][:150]
    msg.set_content(text)
    r = subprocess.run(
        [n.sendmail, "-t", "-oi"], input=msg.as_bytes(), capture_output=True, timeout=n.timeout_s
    )
    if r.returncode != 0:
        raise OSError(
            f"{n.sendmail} exited {r.returncode}: {r.stderr.decode(errors='replace')[:200]}"
        )


def flush(conn, site, *, max_attempts: int = 20) -> dict:
    """Send what is waiting; returns counts. Never raises: a sink's failure is recorded. Each
    message is claimed before it is sent, so two hosts flushing one shared outbox never both
    send it; a claim whose sender died runs out after [state] lease_s and the message is sent
    again (at least once, never twice at the same time)."""
    sent = failed = 0
    if not (site.notify.webhook_url or site.notify.mail_to):
        return {"sent": 0, "failed": 0}  # no sink to send to: what waits keeps for when one is set
    now = time.time()
    rows = conn.execute(
        "SELECT * FROM outbox WHERE sent IS NULL AND attempts < ? AND (claimed_at IS NULL OR "
        "claimed_at < ?) ORDER BY id",
        (max_attempts, now - site.state.lease_s),
    ).fetchall()
    for row in rows:
        claim = conn.execute(
            "UPDATE outbox SET attempts = attempts + 1, claimed_at = ? WHERE id = ? AND sent IS "
            "NULL AND attempts = ?",
            (time.time(), row["id"], row["attempts"]),
        )
        if claim.rowcount != 1:
            continue  # another process claimed (or sent) it since the SELECT
        try:
            if row["sink"] == "webhook":
                _send_webhook(site.notify.webhook_url, row["payload"], site.notify.timeout_s)
            else:
                _send_mail(site.notify, row["payload"])
        except (OSError, subprocess.SubprocessError, ValueError) as e:  # URLError is an OSError
            failed += 1
            conn.execute(
                "UPDATE outbox SET last_error = ?, claimed_at = NULL WHERE id = ?",
                (str(e)[:500], row["id"]),
            )
            continue
        sent += 1
        conn.execute("UPDATE outbox SET sent = ? WHERE id = ?", (time.time(), row["id"]))
    return {"sent": sent, "failed": failed}
