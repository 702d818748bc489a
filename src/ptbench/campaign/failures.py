"""The machine's failures against the agent's: what a finished Harbor trial's status means for a campaign.

An infrastructure failure is the machine's (a job that ended without its trial's result, however it ended: processes
killed, node lost, preempted, cancelled by the scheduler; a sandbox that did not start; a device failure; a lost exec
stream; a verifier that produced no score): it is stored as what it is and retried. The agent's own failure (a
timeout, a crash, a non-zero exit, a bad or missing submission, which the verifier scores as the rules say) ends the
trial: it is never retried.
"""

from __future__ import annotations

from typing import get_args

from ptbench.campaign.layout import Outcome
from ptbench.store.models import TrialStatus

AGENT_OUTCOMES: frozenset[str] = frozenset({"ok", "agent-error", "agent-timeout"})
"""Statuses that are the trial's result: the verifier scored it (the submission or, by the rules, the base model), or
the agent failed by its own doing."""

INFRASTRUCTURE: frozenset[str] = frozenset(set(get_args(TrialStatus)) - AGENT_OUTCOMES)
"""sandbox-died (its processes killed), environment-error (the sandbox did not start), verifier-error (a device
failure, a lost exec stream, no score), cancelled (the run was stopped), unknown (no usable result)."""

LOST = "lost"
"""An attempt whose process died without a word: its job killed, its node lost, preempted, cancelled."""
NOT_STARTED = "not-started"
"""A scheduler job that ended before its trial began."""


def outcome_of(status: str) -> Outcome:
    """A finished trial's status as a campaign outcome."""
    return "done" if status in AGENT_OUTCOMES else "infrastructure"
