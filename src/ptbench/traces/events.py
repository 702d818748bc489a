"""A trial's trace as one list of events, from Harbor's ATIF trajectory or else the agent's own log.

Both are untrusted files: they must be plain files inside the trial dir reached without a symlink, and are size-
capped; anything unusable raises `TraceUnreadable` with a one-line reason (the trial then says "could not read")."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ptbench.errors import first_line, validation_line
from ptbench.files import UnsafeFile, file_inside, read_untrusted_text
from ptbench.store.models import TrialRow
from ptbench.traces.model import Source

MAX_TRAJECTORY_BYTES = 32 * 1024 * 1024
MAX_LOG_BYTES = 8 * 1024 * 1024
MAX_EVENTS = 50_000
MAX_TEXT_CHARS = 8000
"""Commands, file contents and observations are clipped to this before any rule reads them."""

EventKind = Literal["tool", "message", "line", "phase"]


class TraceUnreadable(ValueError):
    """A trace file that cannot be used: missing, a symlink, outside the trial dir, too large, malformed."""


class Event(BaseModel):
    """One thing the agent did or said. `at`: seconds since the agent started (None: a log line without time)."""

    model_config = ConfigDict(frozen=True)

    at: float | None
    kind: EventKind
    text: str = ""
    tool: str | None = None
    output: str = ""
    written: str | None = None
    """the path a file tool wrote, with `content` what it wrote"""
    content: str = ""
    duration: float | None = None
    """known length in seconds (the reference agent's phase summary)"""


class Trace(BaseModel):
    """The events of a trial and where they came from."""

    source: Source
    path: str | None
    events: list[Event]


def read_trace(trial: TrialRow, agent_start: datetime | None) -> Trace:
    """The trial's ATIF trajectory when it has one, else its agent log (TraceUnreadable when it cannot be used)."""
    from ptbench.traces.agent_log import log_events
    from ptbench.traces.atif import trajectory_events

    if trial.trajectory_path:
        text = _read(trial, trial.trajectory_path, MAX_TRAJECTORY_BYTES)
        return Trace(source="trajectory", path=trial.trajectory_path, events=trajectory_events(text, agent_start))
    if trial.agent_log_path:
        text = _read(trial, trial.agent_log_path, MAX_LOG_BYTES)
        return Trace(source="agent-log", path=trial.agent_log_path, events=log_events(text))
    return Trace(source="none", path=None, events=[])


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Text cut to `limit` characters."""
    return text if len(text) <= limit else text[:limit]


def seconds_since(timestamp: datetime, start: datetime) -> float:
    """Seconds from `start` to `timestamp` (naive times are taken as UTC)."""
    return (_aware(timestamp) - _aware(start)).total_seconds()


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _read(trial: TrialRow, recorded: str, max_bytes: int) -> str:
    """A file the store recorded for the trial, re-checked: inside the trial dir, no symlink, capped, UTF-8."""
    try:
        path = file_inside(trial.trial_dir, os.path.relpath(recorded, trial.trial_dir))
        return read_untrusted_text(path, max_bytes)
    except (UnsafeFile, FileNotFoundError, OSError) as exc:
        raise TraceUnreadable(f"{Path(recorded).name}: {first_line(exc)}") from exc


def invalid(name: str, exc: ValidationError | ValueError) -> TraceUnreadable:
    """A TraceUnreadable for a file that is not what its format says."""
    why = validation_line(exc) if isinstance(exc, ValidationError) else first_line(exc)
    return TraceUnreadable(f"{name}: {why}")
