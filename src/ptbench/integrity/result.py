"""What an integrity check decides: passed, flagged, incomplete (it ran but could not see everything: never a pass)
or could-not-run, one line why, and the evidence."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CheckStatus = Literal["passed", "flagged", "incomplete", "could-not-run"]


class Evidence(BaseModel):
    """What a check saw: files it names, items (test items, tensors, reads), and numbers."""

    model_config = ConfigDict(extra="forbid")

    files: list[str] = Field(default_factory=list)
    items: list[str] = Field(default_factory=list)
    numbers: dict[str, float] = Field(default_factory=dict)

    @field_validator("numbers")
    @classmethod
    def _finite(cls, numbers: dict[str, float]) -> dict[str, float]:
        if not all(math.isfinite(v) for v in numbers.values()):
            raise ValueError("evidence numbers must be finite")
        return numbers


class CheckResult(BaseModel):
    """One check's decision (versioned: it is part of details.json)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1, 2] = 2
    """2 added the status "incomplete"; a version-1 result (never incomplete) still reads."""
    name: str
    status: CheckStatus
    reason: str = Field(max_length=500)
    evidence: Evidence = Field(default_factory=Evidence)
    seconds: float = 0.0


MAX_LISTED = 20
"""At most this many files or items are listed in one piece of evidence."""


def passed(name: str, reason: str, evidence: Evidence | None = None) -> CheckResult:
    return CheckResult(name=name, status="passed", reason=reason, evidence=evidence or Evidence())


def flagged(name: str, reason: str, evidence: Evidence | None = None) -> CheckResult:
    return CheckResult(name=name, status="flagged", reason=reason, evidence=evidence or Evidence())


def incomplete(name: str, reason: str, evidence: Evidence | None = None) -> CheckResult:
    return CheckResult(name=name, status="incomplete", reason=reason[:500], evidence=evidence or Evidence())


def could_not_run(name: str, reason: str) -> CheckResult:
    return CheckResult(name=name, status="could-not-run", reason=reason[:500])
