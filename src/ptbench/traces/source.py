"""Which file is a trial's trace (its ATIF trajectory, else its agent log, as ingest recorded them) and reading it
as untrusted input: a plain file inside the trial dir reached without a symlink, size-capped, UTF-8. Without either,
the agent CLI's own logs (agent/codex.txt, ...) are named: there, but in a format traces does not read."""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

from ptbench.errors import first_line
from ptbench.files import UnsafeFile, file_inside, read_untrusted_text
from ptbench.store.models import TrialRow
from ptbench.traces.agent_log import log_events
from ptbench.traces.atif import trajectory_events
from ptbench.traces.events import Event, TraceUnreadable
from ptbench.traces.traces_report import Source

MAX_TRAJECTORY_BYTES = 32 * 1024 * 1024
MAX_LOG_BYTES = 8 * 1024 * 1024


def trace_file(trial: TrialRow) -> tuple[Source, str | None]:
    """The trial's trajectory when it has one, else its agent log, else nothing."""
    if trial.trajectory_path:
        return "trajectory", trial.trajectory_path
    if trial.agent_log_path:
        return "agent-log", trial.agent_log_path
    return "none", None


def own_logs(trial: TrialRow, limit: int = 3) -> list[str]:
    """The regular files the agent left in the trial's agent/ dir (its CLI's own logs), no link followed."""
    agent = Path(trial.trial_dir) / "agent"
    try:
        if not stat.S_ISDIR(os.lstat(agent).st_mode):
            return []
        with os.scandir(agent) as entries:
            names = sorted(e.name for e in entries if e.is_file(follow_symlinks=False))
    except OSError:
        return []
    return [f"agent/{name}" for name in names[:limit]] + (["..."] if len(names) > limit else [])


def read_trace(trial: TrialRow, agent_start: datetime | None) -> list[Event]:
    """The events of the trial's trace file (none without one; TraceUnreadable when it cannot be used)."""
    source, path = trace_file(trial)
    if path is None:
        return []
    if source == "trajectory":
        return trajectory_events(_read(trial, path, MAX_TRAJECTORY_BYTES), agent_start)
    return log_events(_read(trial, path, MAX_LOG_BYTES))


def _read(trial: TrialRow, recorded: str, max_bytes: int) -> str:
    """A file the store recorded for the trial, checked again now: inside the trial dir, no symlink, capped."""
    try:
        path = file_inside(trial.trial_dir, os.path.relpath(recorded, trial.trial_dir))
        return read_untrusted_text(path, max_bytes)
    except (UnsafeFile, OSError) as exc:
        raise TraceUnreadable(f"{Path(recorded).name}: {first_line(exc)}") from exc
