"""The pager hook: a WSGI application (served by waitress), a durable queue and its workers.

A request thread only checks (size, credentials, the body's shape), writes each delivery to the
queue table of the state database, and answers; it never waits on Slurm or SSH. Workers take
deliveries from that table: a Slurm lookup that cannot be made is retried with backoff, a job
Slurm does not know is rejected, the others run through the same pipeline and the same per-job
lock as `runbook oom` and `runbook sweep`. A restart between the 202 and the worker loses nothing.

Answers (pagers act on them: Alertmanager and PagerDuty retry 5xx and network errors only):
  202  accepted: queued (the same incident id for a duplicate delivery)
  200  nothing to do: resolved alerts, no job id in the payload
  400  the body is not JSON or not a payload runbook reads; 401/403 credentials; 413 too large
  503  + Retry-After: runbook cannot tell yet. Either the delivery could not be queued (state
       database unavailable, queue full), or it was queued but the workers' last Slurm lookup
       failed: the pager retries, the retry is a duplicate with the same incident id.
  GET /healthz: 200 when the state database is writable and slurmctld answers, else 503 naming
  the failing part. GET /metrics: Prometheus text.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time

from runbook import intake, state
from runbook.errors import ArrayJobError, ConfigError, InputError, JobNotFound, RunbookError
from runbook.pipeline import handle_incident
from runbook.slurm.factory import slurm_client
from runbook.trigger import Options, Trigger, new_incident_id

_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Metrics:
    """The hook's counters, in their own registry (one per Hook: tests run several)."""

    def __init__(self, queue_depth):
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry()
        self.deliveries = Counter(
            "runbook_hook_deliveries",
            "Webhook requests answered, by HTTP status code",
            ["code"],
            registry=self.registry,
        )
        self.incidents = Counter(
            "runbook_incidents",
            "Incidents finished by the hook's workers",
            ["verdict", "status"],
            registry=self.registry,
        )
        self.actions = Counter(
            "runbook_actions",
            "Actions of those incidents, by kind and outcome",
            ["kind", "outcome"],
            registry=self.registry,
        )
        self.worker_errors = Counter(
            "runbook_hook_worker_errors",
            "Deliveries a worker could not finish (an unexpected error)",
            registry=self.registry,
        )
        self.retries = Counter(
            "runbook_hook_slurm_retries",
            "Deliveries put back because Slurm could not be asked",
            registry=self.registry,
        )
        depth = Gauge(
            "runbook_hook_queue_depth", "Deliveries queued or running", registry=self.registry
        )
        depth.set_function(queue_depth)

    def text(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


class Hook:
    def __init__(self, site, *, run=None, client_factory=slurm_client, workers: int | None = None):
        self.site = site
        self.client_factory = client_factory
        self.run = run or self._run_incident
        self.n_workers = max(1, site.hook.workers if workers is None else workers)
        self.metrics = Metrics(self._depth)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._health: tuple[float, dict] | None = None
        self._health_lock = threading.Lock()
        # Set by a worker whose Slurm lookup failed, cleared by one that succeeded: what the
        # request threads tell pagers without asking Slurm themselves.
        self.slurm_down: str | None = None

    # -- workers --------------------------------------------------------------------------------
    def start(self) -> int:
        """Put back deliveries a dead process of this host left running; start the workers."""
        try:
            back = state.queue_recover(state.site_db(self.site), self.site.state.lease_s)
        except state.STATE_ERRORS:
            back = 0  # the state database is down: requests get 503, workers retry it

        for i in range(self.n_workers):
            t = threading.Thread(target=self._work, name=f"runbook-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        return back

    def close(self, timeout: float = 600) -> None:
        """Stop taking deliveries; let the ones running finish and write their reports."""
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout)

    def _work(self) -> None:
        conn = None
        owner = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        lease = self.site.state.lease_s
        recovered = time.monotonic()
        while not self._stop.is_set():
            try:
                conn = conn or state.site_db(self.site)
                if time.monotonic() - recovered > lease / 2:
                    # Deliveries a worker of another host left when it died (its lease ran
                    # out) are taken up here: several hook hosts cover for each other.
                    recovered = time.monotonic()
                    state.queue_recover(conn, lease)
                row = state.queue_claim(conn, owner)
            except state.STATE_ERRORS:
                row, conn = None, None  # busy, unwritable or unreachable: try again shortly
            if row is None:
                self._wake.wait(0.5)
                self._wake.clear()
                continue
            self._one(conn, row)

    def _one(self, conn, row: dict) -> None:
        key, job_id = row["key"], row["job_id"]
        try:
            self.client_factory(self.site).job(job_id)
        except (JobNotFound, ArrayJobError) as e:  # Slurm answered: no such job, or a whole array
            self.slurm_down = None
            state.queue_finish(conn, key, "rejected", error=e.message)
            return
        except RunbookError as e:  # slurmctld, slurmdbd or the login host cannot answer now
            self.slurm_down = e.message
            delay = min(self.site.hook.retry_max_s, 5.0 * 2 ** min(row["attempts"] - 1, 10))
            state.queue_retry(conn, key, e.message, delay)
            self.metrics.retries.inc()
            return
        self.slurm_down = None
        try:
            status, incident = self.run(job_id, row["incident"], key)
            state.queue_finish(conn, key, status, incident=incident)
        except Exception as e:  # a worker must never die silently
            self.metrics.worker_errors.inc()
            state.queue_finish(conn, key, "failed", error=f"{type(e).__name__}: {e}")

    def _run_incident(self, job_id: str, incident_id: str, key: str) -> tuple[str, str | None]:
        from runbook.sweep import read_running

        trigger = Trigger(job_id, "hook", "runbook hook", incident_id)
        run = handle_incident
        # A delivery for a job that still trains (a rank pushed on pressure, or an alert on its
        # memory): its series read as the sweep reads them (the log read once, handed on); one
        # heading for an OOM goes to the prevention runbook, under [policy] unattended_prevent
        # like the sweep, never as a person.
        logs, heading = read_running(self.site, job_id)
        if logs is not None:
            trigger = dataclasses.replace(trigger, logs=logs)
        if heading:
            from runbook.prevent import handle_prevent

            run = handle_prevent
        result = run(trigger, self.site, Options())
        self.metrics.incidents.labels(
            result.verdict or "none",
            "done" if result.exit_code == 0 else f"exit {result.exit_code}",
        ).inc()
        for a in result.actions:
            self.metrics.actions.labels(a.get("kind", "?"), a.get("status", "?")).inc()
        status = "done" if result.incident == incident_id else "deduplicated"
        return status, result.incident

    def _depth(self) -> float:
        try:
            return float(state.queue_depth(state.site_db(self.site)))
        except state.STATE_ERRORS:
            return float("nan")

    # -- HTTP -----------------------------------------------------------------------------------
    def __call__(self, environ, start_response):
        try:
            status, doc, headers = self._handle(environ)
        except Exception as e:  # a bug: say which, but never echo a payload back
            status, doc, headers = 500, {"error": f"internal error ({type(e).__name__})"}, []
        if isinstance(doc, bytes):  # /metrics
            body, ctype = doc, "text/plain; version=0.0.4; charset=utf-8"
        else:
            body, ctype = (json.dumps(doc) + "\n").encode(), "application/json"
        if environ.get("PATH_INFO", "/") not in ("/healthz", "/metrics"):
            self.metrics.deliveries.labels(str(status)).inc()
        start_response(
            f"{status} {_REASONS[status]}",
            [("Content-Type", ctype), ("Content-Length", str(len(body))), *headers],
        )
        return [body]

    def _handle(self, environ) -> tuple[int, dict | bytes, list]:
        method, path = environ.get("REQUEST_METHOD"), environ.get("PATH_INFO", "/")
        if method == "GET" and path == "/healthz":
            health = self.health()
            return (200 if health["ok"] else 503), health, []
        if method == "GET" and path == "/metrics":
            return 200, self.metrics.text(), []
        if method != "POST":
            return 405, {"error": "POST a webhook body; GET /healthz or /metrics"}, []
        limit = self.site.hook.max_body_bytes
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return 400, {"error": "bad Content-Length"}, []
        if length > limit:
            return 413, {"error": f"body of {length} bytes is over the {limit}-byte limit"}, []
        # Chunked bodies carry no Content-Length: read one byte past the limit to know.
        body = environ["wsgi.input"].read(length if length else limit + 1)
        if len(body) > limit:
            return 413, {"error": f"body is over the {limit}-byte limit"}, []
        try:
            self.authenticate(environ, body)
            parsed = intake.triggers(
                body,
                label=self.site.hook.alertmanager_label,
                title_pattern=self.site.hook.pagerduty_title_pattern,
            )
        except intake.SignatureError as e:
            return e.status, {"error": e.message}, []
        except InputError as e:
            return 400, {"error": e.message}, []
        if not parsed.candidates:
            return 200, {"status": "nothing to do", "ignored": parsed.ignored}, []
        try:
            accepted = [self._accept(c) for c in parsed.candidates]
        except state.STATE_ERRORS as e:
            retry = str(self.site.hook.retry_after_s)
            why = getattr(e, "message", None) or str(e)
            return (
                503,
                {"error": f"cannot queue the delivery now: {why}", "retry_after_s": int(retry)},
                [("Retry-After", retry)],
            )
        self._wake.set()
        down = self.slurm_down
        if down and any(not a["already_handled"] for a in accepted):
            # Queued (nothing is lost if the pager gives up), but runbook cannot tell yet: the
            # pager keeps the alert pending and retries; the retry is a duplicate, answered with
            # the same incident id, 202 once Slurm answers again.
            retry = str(self.site.hook.retry_after_s)
            return (
                503,
                {
                    "error": f"queued, but Slurm cannot be asked now: {down}",
                    "accepted": accepted,
                    "ignored": parsed.ignored,
                    "retry_after_s": int(retry),
                },
                [("Retry-After", retry)],
            )
        return 202, {"accepted": accepted, "ignored": parsed.ignored}, []

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

    def _accept(self, c: intake.Candidate) -> dict:
        conn = state.site_db(self.site)  # per request: requests arrive on waitress's threads
        known = conn.execute(
            "SELECT id FROM incidents WHERE job_id = ? ORDER BY created DESC LIMIT 1", (c.job_id,)
        ).fetchone()
        if known is not None:  # the job already has an incident: nothing new to queue
            return {
                "job_id": c.job_id,
                "incident": known["id"],
                "duplicate": False,
                "already_handled": True,
            }
        if state.queue_depth(conn) >= self.site.hook.queue_max:
            raise state.StateUnavailable(f"the queue holds {self.site.hook.queue_max} deliveries")
        incident, duplicate = state.queue_put(
            conn,
            key=c.dedupe_key,
            job_id=c.job_id,
            source=c.source,
            title=c.title,
            incident=new_incident_id(c.job_id),
        )
        return {
            "job_id": c.job_id,
            "incident": incident,
            "duplicate": duplicate,
            "already_handled": False,
        }

    # -- health ---------------------------------------------------------------------------------
    def health(self, max_age_s: float = 5.0) -> dict:
        """State database writable, slurmctld answering; cached for a few seconds so that a
        monitoring loop cannot turn into a load on slurmctld."""
        with self._health_lock:
            if self._health and time.monotonic() - self._health[0] < max_age_s:
                return self._health[1]
        checks = {"state": self._check_state(), "slurm": self._check_slurm()}
        doc = {
            "ok": all(c["ok"] for c in checks.values()),
            "checks": checks,
            "queue_depth": self._depth(),
        }
        with self._health_lock:
            self._health = (time.monotonic(), doc)
        return doc

    def _check_state(self) -> dict:
        try:
            conn = state.site_db(self.site)
            with conn.write():  # the write lock taken and given back: writable, not busy
                pass
            conn.close()
            return {"ok": True}
        except state.STATE_ERRORS as e:
            return {"ok": False, "error": getattr(e, "message", None) or str(e)}

    def _check_slurm(self) -> dict:
        """`scontrol ping` in a thread of its own, bounded by [hook] health_timeout_s."""
        out: dict = {"ok": False, "error": f"no answer within {self.site.hook.health_timeout_s}s"}

        def ask():
            try:
                out.update(ok=True, answer=self.client_factory(self.site).ping())
                out.pop("error", None)
            except RunbookError as e:
                out.update(ok=False, error=e.message)

        t = threading.Thread(target=ask, daemon=True)
        t.start()
        t.join(self.site.hook.health_timeout_s)
        return dict(out)


def make_server(app: Hook, site, *, host: str, port: int):
    """The waitress server, bound; start-up problems as one ConfigError line (exit 2)."""
    import waitress.server

    h = site.hook
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as e:
        raise ConfigError(
            f"cannot listen on {host!r}: not an address of this host ({e})",
            hint="set [hook] bind (or --bind) to 127.0.0.1, ::1 or an address of this host",
        ) from None
    try:
        # waitress's own body cap sits above ours, so that the application answers an
        # oversized body with a 413 that says why, as JSON, like every other refusal.
        return waitress.server.create_server(
            app,
            host=host,
            port=port,
            threads=max(1, h.threads),
            connection_limit=max(1, h.connection_limit),
            channel_timeout=h.channel_timeout_s,
            max_request_header_size=h.max_header_bytes,
            max_request_body_size=h.max_body_bytes + (1 << 20),
            ident="runbook-hook",
        )
    except OSError as e:
        what = "is in use" if e.errno == 98 else f"cannot be used ({e.strerror or e})"
        raise ConfigError(
            f"port {port} on {host} {what}",
            hint="stop what listens there (`ss -ltnp`), or choose another with "
            "--port or [hook] port",
        ) from None


def serve(site, *, host: str, port: int, ready=None) -> None:
    import signal

    app = Hook(site)
    server = make_server(app, site, host=host, port=port)
    back = app.start()
    if ready is not None:
        ready(back)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        app.close()  # let running incidents finish and write their reports
