"""The agent CLIs' offline self-checks as `ptbench agents list` shows them: `<agents prefix>/checks.json`, the last
`ptbench agents check NAME` of each agent (its version, whether it passed, why not, how long it took)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.agents.prefix import agents_dir
from ptbench.files import UnsafeFile, read_untrusted, write_model_json

CHECKS_FILE = "checks.json"


class AgentCheck(BaseModel):
    """One self-check: a scripted session against the fake API in the local sandbox."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    version: str | None
    passed: bool
    reason: str = Field(description="what went wrong, or what it did")
    seconds: float
    checked_at: datetime


class AgentChecks(BaseModel):
    """checks.json: the last check of each agent."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    checks: dict[str, AgentCheck] = Field(default_factory=dict)


def read_checks() -> AgentChecks:
    """The recorded checks (none when the file is missing or unreadable)."""
    try:
        return AgentChecks.model_validate_json(read_untrusted(agents_dir() / CHECKS_FILE, 1 << 20))
    except (OSError, UnsafeFile, ValidationError):
        return AgentChecks()


def record_check(check: AgentCheck) -> None:
    """Keep `check` as its agent's last one."""
    checks = read_checks()
    checks.checks[check.agent] = check
    agents_dir().mkdir(parents=True, exist_ok=True)
    write_model_json(agents_dir() / CHECKS_FILE, checks)
