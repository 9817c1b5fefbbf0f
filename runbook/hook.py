"""The pager hook: a WSGI application (served by waitress) and the background workers.

POST a webhook body; the answer comes at once: 202 with one incident id per job (the same id for
a duplicate delivery), 200 when there is nothing to do (resolved alerts), 4xx with the reason for
a bad request. Incidents run on a bounded pool of workers, through the same pipeline and the same
per-job lock as `runbook oom` and `runbook sweep`.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from runbook import intake, state
from runbook.errors import InputError, RunbookError
from runbook.pipeline import Options, Trigger, handle_incident, new_incident_id
from runbook.slurm.factory import slurm_client


def _reply(start_response, status: int, doc: dict):
    reason = {200: "OK", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized",
              403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
              413: "Payload Too Large", 422: "Unprocessable Entity",
              500: "Internal Server Error"}[status]  # fmt: skip
    body = (json.dumps(doc) + "\n").encode()
    start_response(f"{status} {reason}", [("Content-Type", "application/json"),
                                          ("Content-Length", str(len(body)))])  # fmt: skip
    return [body]


class Hook:
    def __init__(self, site, *, run=None):
        self.site = site
        self.pool = ThreadPoolExecutor(max_workers=max(1, site.hook.workers),
                                       thread_name_prefix="runbook-incident")  # fmt: skip
        self.run = run or self._run_incident
        self._db_lock = threading.Lock()  # one writer at a time for the deliveries table

    def _run_incident(self, job_id: str, incident_id: str, key: str) -> None:
        try:
            result = handle_incident(Trigger(job_id, "hook", "runbook hook", incident_id),
                                     self.site, Options())  # fmt: skip
            status = "done" if result.incident == incident_id else "deduplicated"
            incident = result.incident
        except Exception as e:  # a worker must never die silently
            status, incident = f"error: {e}", incident_id
        conn = state.site_db(self.site)
        conn.execute("UPDATE deliveries SET status = ?, incident = ? WHERE key = ?",
                     (status, incident, key))  # fmt: skip

    def authenticate(self, environ, body: bytes) -> None:
        h = self.site.hook
        pd_header = environ.get("HTTP_X_PAGERDUTY_SIGNATURE")
        auth = environ.get("HTTP_AUTHORIZATION")
        if h.secret and pd_header is not None:
            intake.check_pagerduty(h.secret, pd_header, body)
        elif h.token and auth is not None:
            intake.check_bearer(h.token, auth)
        elif h.secret or h.token:
            raise intake.SignatureError(
                "credentials required: an X-PagerDuty-Signature header or a Bearer token", 401
            )

    def __call__(self, environ, start_response):
        try:
            return self._handle(environ, start_response)
        except Exception as e:  # an answer that says what broke, never a bare 500 page
            return _reply(start_response, 500, {"error": f"{type(e).__name__}: {e}"})

    def _handle(self, environ, start_response):
        if environ.get("REQUEST_METHOD") != "POST":
            return _reply(start_response, 405, {"error": "POST a webhook body"})
        limit = self.site.hook.max_body_bytes
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _reply(start_response, 400, {"error": "bad Content-Length"})
        if length > limit:
            return _reply(start_response, 413, {"error": f"body of {length} bytes is over the "
                                                         f"{limit}-byte limit"})  # fmt: skip
        # Chunked bodies carry no Content-Length: read one byte past the limit to know.
        body = environ["wsgi.input"].read(length if length else limit + 1)
        if len(body) > limit:
            return _reply(start_response, 413, {"error": f"body is over the {limit}-byte limit"})
        try:
            self.authenticate(environ, body)
            parsed = intake.triggers(
                body,
                label=self.site.hook.alertmanager_label,
                title_pattern=self.site.hook.pagerduty_title_pattern,
            )
        except intake.SignatureError as e:
            return _reply(start_response, e.status, {"error": e.message})
        except InputError as e:
            return _reply(start_response, 400, {"error": e.message})
        if not parsed.candidates:
            return _reply(start_response, 200, {"status": "nothing to do",
                                                "ignored": parsed.ignored})  # fmt: skip
        accepted, unknown = [], []
        client = slurm_client(self.site)
        for c in parsed.candidates:
            try:
                client.job(c.job_id)
            except RunbookError as e:
                unknown.append({"job_id": c.job_id, "error": e.message})
                continue
            accepted.append(self._accept(c))
        if not accepted:
            return _reply(start_response, 422, {"error": "no job in the payload is known to "
                                                         "Slurm", "jobs": unknown})  # fmt: skip
        return _reply(start_response, 202, {"accepted": accepted, "unknown": unknown,
                                            "ignored": parsed.ignored})  # fmt: skip

    def _accept(self, c: intake.Candidate) -> dict:
        conn = state.site_db(self.site)  # per request: requests arrive on waitress's threads
        with self._db_lock:
            row = conn.execute("SELECT incident FROM deliveries WHERE key = ?",
                                    (c.dedupe_key,)).fetchone()  # fmt: skip
            if row is not None:
                return {"job_id": c.job_id, "incident": row["incident"], "duplicate": True}
            running = conn.execute(
                "SELECT id FROM incidents WHERE job_id = ? ORDER BY created DESC LIMIT 1",
                (c.job_id,)).fetchone()  # fmt: skip
            incident = running["id"] if running else new_incident_id(c.job_id)
            conn.execute(
                "INSERT INTO deliveries VALUES (?, ?, ?, ?, 'accepted', ?)",
                (c.dedupe_key, c.job_id, incident, c.source, time.time()),
            )
        if running is None:
            self.pool.submit(self.run, c.job_id, incident, c.dedupe_key)
        return {"job_id": c.job_id, "incident": incident, "duplicate": False,
                "already_handled": running is not None}  # fmt: skip


def serve(site, *, host: str | None = None, port: int | None = None) -> None:
    import waitress

    app = Hook(site)
    try:
        # waitress's own cap sits above ours, so that the application answers an oversized
        # body with a 413 that says why, as JSON, like every other refusal.
        waitress.serve(app, host=host or site.hook.bind, port=port or site.hook.port,
                       threads=4, max_request_body_size=site.hook.max_body_bytes + (1 << 20),
                       ident="runbook-hook")  # fmt: skip
    finally:
        app.pool.shutdown(wait=True)  # let running incidents finish and write their reports
