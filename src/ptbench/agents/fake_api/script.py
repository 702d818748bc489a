"""The fake API's script file: the steps a scripted model takes, whatever wire format it is asked in.

Each request gets the step after those its conversation already holds (the number of assistant turns in it), so
the server keeps no state and a retried request gets the same answer; past the end, the last step repeats."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ptbench.errors import UserError


class Step(BaseModel):
    """One model turn: run a shell command (`run`) or answer with a final message (`say`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: str | None = Field(None, description="a shell command the agent runs in its sandbox")
    say: str | None = Field(None, description="a final message that ends the agent's turn")

    @model_validator(mode="after")
    def _one(self) -> Step:
        if (self.run is None) == (self.say is None):
            raise ValueError("a step has exactly one of run and say")
        return self


class FakeApiScript(BaseModel):
    """`ptbench agents fake-api --script FILE`: commands to run, then a final message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    model: str = Field("scripted", description="the model name the API reports")
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _ends_with_say(self) -> FakeApiScript:
        if self.steps[-1].say is None:
            raise ValueError("the last step must be a final message (say)")
        return self

    def step(self, turns_done: int) -> Step:
        """The step after `turns_done` assistant turns (the last one once the script is used up)."""
        return self.steps[min(turns_done, len(self.steps) - 1)]


def load_script(path: Path) -> FakeApiScript:
    """A script file; a missing one is a UserError (an invalid one a ValidationError, both one line in the CLI)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the script {path}: {exc.strerror or exc}") from exc
    return FakeApiScript.model_validate_json(data)
