"""An agent's own log (Harbor's oracle writes agent/oracle.txt: our reference agent's output) as events: every
line as an untimed event, plus the reference agent's closing phase summary (`  NAME: W s wall, C s CPU`, phases in
the order they first ran) as timed phases laid end to end from the agent's start."""

from __future__ import annotations

import re

from ptbench.traces.events import MAX_EVENTS, Event, clip

_PHASE = re.compile(r"^  (?P<name>[A-Za-z][\w .=-]{0,60}): (?P<wall>\d+(?:\.\d+)?) s wall, \d+(?:\.\d+)? s CPU$")


def log_events(text: str) -> list[Event]:
    """Line events, then the phase summary's timed phases (none when the log has no summary)."""
    lines = text.splitlines()[:MAX_EVENTS]
    events = [Event(at=None, kind="line", text=clip(line, 2000)) for line in lines if line.strip()]
    at = 0.0
    for line in lines:
        if match := _PHASE.match(line):
            wall = float(match["wall"])
            events.append(Event(at=at, kind="phase", text=match["name"], duration=wall))
            at += wall
    return events
