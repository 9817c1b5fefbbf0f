"""Who says yes to a mutating step (docs/design.md: every mutation through the one executor)."""

from __future__ import annotations

from collections.abc import Callable

from runbook import rungs
from runbook.actions.executor import Action


def confirm_policy(
    site,
    verdict: str | None,
    *,
    rung: str | None = None,
    assume_yes: bool = False,
    confirm: Callable[[Action], bool] | None = None,
):
    """Who says yes to a mutating step: --yes; a person at the terminal; or the site policy, which
    names the verdicts that may act unattended (and whether a job may be shrunk unattended:
    [policy] unattended_shrink, and grown back: unattended_grow). Otherwise the step is declined and a person is needed (exit 4),
    with the exact commands in the report."""
    if assume_yes or site.policy.assume_yes:
        return None
    if confirm is not None:
        return confirm
    r = rungs.get(rung or "")
    if r is not None and r.policy:  # a rung only a site that said so lets act unattended
        if not getattr(site.policy, r.policy):
            return lambda action: False
        if r.policy_alone:
            return None
    if verdict in site.policy.unattended_verdicts:
        return None
    return lambda action: False
