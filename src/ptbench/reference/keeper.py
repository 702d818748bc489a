"""The best submission so far: saved as soon as there is one, replaced only by a better one by its dev evaluation.

Every dev evaluation is offered to `BestSubmission`; the first one (the base model's) is saved at once, so a run
cut short still leaves a valid submission, and a later one replaces it only when its pass rate on the dev boards
is higher (at an equal pass rate, when its parse rate is). The save function writes atomically (a staged
directory renamed into place, or path.txt written and renamed), so a half-written model is never the submission.
How long each save takes is given to the deadline, which keeps that much in reserve.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from ptbench.reference.deadline import Deadline
from ptbench.reference.dev_scores import DevEval


class SavedSubmission(BaseModel):
    """One save of the submission: the evaluation it was saved after, and how long saving took."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    phase: str
    step: int
    pass_rate: float
    parse_rate: float
    save_seconds: float = Field(ge=0)
    seconds_left: float | None = Field(description="seconds to the deadline when saved (None: no deadline)")


def better(candidate: DevEval, best: DevEval | None) -> bool:
    """Whether `candidate` beats `best`: a higher dev pass rate, or an equal one with a higher parse rate."""
    if best is None:
        return True
    return (candidate.pass_rate, candidate.parse_rate) > (best.pass_rate, best.parse_rate)


class BestSubmission:
    """Offer it each dev evaluation of the model in training; it saves (with `save`) those that beat the best."""

    def __init__(self, save: Callable[[DevEval], None], deadline: Deadline, console: Console,
                 record: Callable[[SavedSubmission], None]) -> None:
        self.save, self.deadline, self.console, self.record = save, deadline, console, record
        self.best: DevEval | None = None

    def offer(self, result: DevEval) -> bool:
        """Save the model just evaluated if it beats the best so far; whether it did."""
        if not better(result, self.best):
            return False
        started = time.monotonic()
        self.save(result)
        seconds = time.monotonic() - started
        self.deadline.measured("save", seconds)
        self.best = result
        left = round(self.deadline.left(), 1) if self.deadline.bounded else None
        self.record(SavedSubmission(phase=result.phase, step=result.step, pass_rate=result.pass_rate,
                                    parse_rate=result.parse_rate, save_seconds=round(seconds, 2), seconds_left=left))
        self.console.print(f"[bold]submission[/bold] saved: {result.phase} step {result.step} "
                           f"(dev pass@1 {result.pass_rate:.2f}, parse {result.parse_rate:.2f})")
        return True

    def recording(self, evaluations: list[DevEval]) -> Callable[[DevEval], None]:
        """What to do with each dev evaluation: add it to `evaluations`, then offer it."""

        def record(result: DevEval) -> None:
            evaluations.append(result)
            self.offer(result)

        return record
