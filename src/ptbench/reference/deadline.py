"""The recipe's sense of time: the agent's budget from its start stamp (what `timer` reads), phases planned against it.

The deadline is the stamp's end (`started_at + budget_seconds`) less a margin (5% of the budget, at least
`MIN_MARGIN` and at most `MAX_MARGIN` seconds), so the recipe stops before Harbor's agent timeout, which equals the
budget. Without a stamp (a run by hand) there is no deadline. What one dev evaluation and one save of the
submission take is measured as the run goes; that much, and half again (`RESERVE_SLACK`: a machine's load can grow
between a measurement and the last evaluation), is always kept in reserve, so that after any training phase there is
time to evaluate its result and save it if it is better. Training loops stop when the next step
would eat into the reserve (`TrainerCallback` for TRL trainers, `out_of_time()` for hand-written loops); a phase
whose measured or estimated duration no longer fits is shrunk (`steps_that_fit`) or skipped.
"""

from __future__ import annotations

import time
from typing import Any

from transformers import TrainerCallback

from ptbench.catalog.timer import MAX_STAMP_BYTES, AgentStartStamp, stamp_path
from ptbench.errors import UserError, first_line
from ptbench.files import read_untrusted

MIN_MARGIN = 20.0
MAX_MARGIN = 600.0
MARGIN_SHARE = 0.05
RESERVE_SLACK = 1.5
"""The reserve is this many times the slowest evaluation and save so far (measured: under a load that grew during the
run, a 60 s budget's last evaluation overran the 20 s margin by 10 s with the bare slowest ones kept)."""


def margin_for(budget_seconds: float) -> float:
    """Seconds kept free before the budget ends (a share of the budget, clamped)."""
    return min(MAX_MARGIN, max(MIN_MARGIN, MARGIN_SHARE * budget_seconds))


class Deadline:
    """When the recipe must be done (Unix time, None: no budget) and the reserve it keeps for evaluate-and-save."""

    def __init__(self, end: float | None, budget_seconds: float | None = None) -> None:
        self.end = end
        self.budget_seconds = budget_seconds
        self.evaluate_seconds = 0.0
        self.save_seconds = 0.0

    @classmethod
    def from_stamp(cls) -> Deadline:
        """The deadline of this agent run from its start stamp; no deadline when there is no stamp."""
        path = stamp_path()
        try:
            stamp = AgentStartStamp.model_validate_json(read_untrusted(path, MAX_STAMP_BYTES))
        except FileNotFoundError:
            return cls(None)
        except (OSError, ValueError) as exc:
            raise UserError(f"unreadable start stamp {path}: {first_line(exc)}") from None
        budget = float(stamp.budget_seconds)
        return cls(stamp.started_at + budget - margin_for(budget), budget)

    @property
    def bounded(self) -> bool:
        return self.end is not None

    def left(self) -> float:
        """Seconds until the deadline (infinite without one)."""
        return float("inf") if self.end is None else self.end - time.time()

    @property
    def reserve(self) -> float:
        """Seconds kept for one dev evaluation and one save: the longest of each measured so far, with slack."""
        return RESERVE_SLACK * (self.evaluate_seconds + self.save_seconds)

    def spare(self) -> float:
        """Seconds left for training (the reserve excluded)."""
        return self.left() - self.reserve

    def measured(self, what: str, seconds: float) -> None:
        """Record how long an evaluation (`what` "evaluate") or a save ("save") took."""
        if what == "evaluate":
            self.evaluate_seconds = max(self.evaluate_seconds, seconds)
        else:
            self.save_seconds = max(self.save_seconds, seconds)

    def out_of_time(self, step_seconds: float = 0.0) -> bool:
        """Whether another step of `step_seconds` would eat into the reserve."""
        return self.spare() < step_seconds

    def steps_that_fit(self, steps: int, step_seconds: float | None) -> int:
        """How many of `steps` fit in the spare time at `step_seconds` each (all when unmeasured or unbounded)."""
        if step_seconds is None or step_seconds <= 0 or not self.bounded:
            return steps if self.spare() > 0 else 0
        return max(0, min(steps, int(self.spare() // step_seconds)))

    def callback(self) -> StopAtDeadline:
        """A TrainerCallback that stops a TRL trainer before the reserve."""
        return StopAtDeadline(self)


class StopAtDeadline(TrainerCallback):
    """Stop training when the next step (as long as the slowest so far) would eat into the deadline's reserve."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.slowest = 0.0
        self.started: float | None = None
        self.stopped_at: int | None = None

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.started = time.monotonic()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.started is not None:
            self.slowest = max(self.slowest, time.monotonic() - self.started)
        if self.deadline.out_of_time(self.slowest):
            control.should_training_stop = True
            self.stopped_at = state.global_step
