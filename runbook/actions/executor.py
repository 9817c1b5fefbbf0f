"""One executor for every mutating step.

idempotency key -> ledger check -> live-state check -> dry run (a result shaped like a real one,
nothing touched, nothing recorded) -> confirmation -> per-job lock held -> apply -> record.
A step that is not needed is a ledger line ("skipped: job 123 already CANCELLED"), not silence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field

from runbook import state
from runbook.errors import RunbookError
from runbook.record import record


@record
class Outcome:
    exit_code: int = 0
    output: str = ""
    value: str | None = None  # what the step produced: a job id, a file path
    note: str = ""  # what a person should know about it (said after "done" in the report)
    error: str = ""  # why a step whose command ran is failed (its effect never showed)


@record
class Action:
    kind: str  # cancel | drain | write_file | submit
    target: str  # job id, node, path
    argv: list[str]  # the exact command (or, for a file, what is written where)
    key: str  # idempotency key: the same key is applied at most once, ever
    summary: str  # one line for a person
    check: Callable[[], str | None] = lambda: None  # live state: why it is not needed, or None
    apply: Callable[[], Outcome] = lambda: Outcome()


@record
class ActionResult:
    kind: str
    target: str
    argv: list[str]
    key: str
    summary: str
    status: str  # applied | skipped | dry_run | declined | failed
    dry_run: bool = False
    exit_code: int | None = None
    output_tail: str = ""
    duration_s: float = 0.0
    actor: str = ""
    message: str = ""
    value: str | None = None
    at: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.status in {"applied", "skipped", "dry_run"}


def _tail(text: str, lines: int = 8, chars: int = 2000) -> str:
    return "\n".join((text or "").strip().splitlines()[-lines:])[-chars:]


class Executor:
    def __init__(
        self,
        conn,
        *,
        incident: str,
        actor: str,
        dry_run: bool = False,
        confirm: Callable[[Action], bool] | None = None,
        lock: str | None = None,
        lock_holder: str | None = None,
    ):
        self.conn = conn
        self.incident = incident
        self.actor = actor
        self.dry_run = dry_run
        self.confirm = confirm
        self.lock = lock
        self.lock_holder = lock_holder
        self.results: list[ActionResult] = []

    def _result(self, a: Action, status: str, **kw) -> ActionResult:
        r = ActionResult(
            kind=a.kind,
            target=a.target,
            argv=list(a.argv),
            key=a.key,
            summary=a.summary,
            status=status,
            dry_run=self.dry_run,
            actor=self.actor,
            **kw,
        )
        if not self.dry_run:  # a dry run leaves the database as it found it
            state.record(
                self.conn,
                key=a.key,
                incident=self.incident,
                kind=a.kind,
                target=a.target,
                argv=r.argv,
                status=status,
                exit_code=r.exit_code,
                output_tail=r.output_tail,
                duration_s=r.duration_s,
                actor=self.actor,
                message=r.message,
                value=r.value,
                at=r.at,
            )
        self.results.append(r)
        return r

    def run(self, a: Action) -> ActionResult:
        # The ledger and the lock read together: one statement, not one each.
        done, holder = state.applied_and_holder(self.conn, a.key, self.lock or "")
        mine = self.lock_holder or ""
        held = holder == mine
        if done:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(done["at"]))
            return self._result(
                a,
                "skipped",
                value=done["value"],
                message=(
                    f"already done at {when} by {done['actor']} (incident {done['incident']})"
                ),
            )
        try:
            not_needed = a.check()
        except RunbookError as e:
            return self._result(a, "failed", message=f"live-state check failed: {e}")
        if not_needed:
            return self._result(a, "skipped", message=not_needed)
        if self.dry_run:
            return self._result(a, "dry_run", message=f"would run: {a.summary}")
        if self.confirm is not None:
            if not self.confirm(a):
                return self._result(a, "declined", message="not confirmed; nothing was done")
            if self.lock:  # a person's answer may take a while: who holds the lock, again
                held = state.holds(self.conn, self.lock, mine)
        if self.lock and not held:
            return self._result(
                a,
                "failed",
                message=(
                    f"refused: the lock {self.lock} is not held by this run (another runbook took "
                    "over the job?)"
                ),
            )
        start = time.monotonic()
        try:
            out = a.apply()
        except RunbookError as e:
            return self._result(a, "failed", duration_s=time.monotonic() - start, message=str(e))
        status = "applied" if out.exit_code == 0 else "failed"
        return self._result(
            a,
            status,
            exit_code=out.exit_code,
            output_tail=_tail(out.output),
            duration_s=time.monotonic() - start,
            value=out.value,
            message=("done" + (f"; {out.note}" if out.note else ""))
            if status == "applied"
            else (out.error or "command failed"),
        )
