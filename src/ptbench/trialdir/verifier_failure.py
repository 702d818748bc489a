"""details.json when the verifier could not run: the record test.sh writes in its place."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class VerifierFailure(BaseModel):
    """details.json as test.sh writes it when `ptbench verify` is missing or fails (reward.json: reward 0).

    Otherwise details.json is the verifier's Verdict; this one is told apart by `status`.
    """

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    status: Literal["verifier-error"] = "verifier-error"
    reason: str
