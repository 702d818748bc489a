"""Time per phase: the demo's own steps (timed here) and the trial's phases from Harbor's result.json."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.text import Text

from ptbench.demo.failures import PASS_THROUGH, step_failure
from ptbench.store.models import TrialRecord

HARBOR_PHASES = {
    "environment_setup": "environment setup",
    "agent_setup": "agent setup",
    "agent_execution": "agent (reference recipe)",
    "verifier": "verifier",
}
"""Harbor's trial phases (result.json) and how the summary names them."""


class DemoPhaseTime(BaseModel):
    """How long one phase took; `setup` phases are excluded from the demo's time target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    seconds: float | None
    source: Literal["demo", "harbor"]
    setup: bool = False


class StepClock:
    """The demo's own steps: a numbered header for each (a spinner for those without a display of their
    own), its wall-clock seconds, and an unexpected error turned into a one-line DemoFailed."""

    def __init__(self, console: Console, total: int, error_log: Path) -> None:
        self.console = console
        self.total = total
        self.error_log = error_log
        self.phases: list[DemoPhaseTime] = []

    @contextmanager
    def step(self, name: str, *, setup: bool = False, spinner: bool = False) -> Iterator[None]:
        """Announce and time the block as a demo step (recorded even when the block fails)."""
        self.console.rule(Text(f"{len(self.phases) + 1}/{self.total} {name}", style="bold"), align="left")
        started = time.monotonic()
        try:
            with self.console.status(name) if spinner else nullcontext():
                yield
        except PASS_THROUGH:
            raise
        except Exception as exc:
            raise step_failure(name, exc, self.error_log) from exc
        finally:
            seconds = round(time.monotonic() - started, 1)
            self.phases.append(DemoPhaseTime(name=name, seconds=seconds, source="demo", setup=setup))


def trial_phases(record: TrialRecord) -> list[DemoPhaseTime]:
    """The trial's phases in Harbor's order; a phase that never ran or never finished has no seconds."""
    by_name = {p.phase: p for p in record.phases}
    phases = []
    for key, label in HARBOR_PHASES.items():
        row = by_name.get(key)
        seconds = None
        if row is not None and row.started_at is not None and row.finished_at is not None:
            seconds = round((row.finished_at - row.started_at).total_seconds(), 1)
        phases.append(DemoPhaseTime(name=label, seconds=seconds, source="harbor"))
    return phases
