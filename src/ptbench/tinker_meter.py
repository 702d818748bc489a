"""The Tinker compute record's formats, below everything that reads or writes them: the local Tinker's meter file
(`MeterFile`: per client address and session, what it computed), kept in the job dir as `tinker_meter.json` when the
job ends, and a trial's `tinker_relay.json` (`RelayRecord`: the loopback address its agent's sandbox reached the
server from). Together they say what each trial computed (`trial_compute`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.files import UnsafeFile, read_untrusted

METER_FILE = "meter.json"
"""The server's file, beside its checkpoints."""
JOB_METER_FILE = "tinker_meter.json"
"""The server's file as the job dir keeps it."""
RELAY_FILE = "tinker_relay.json"
"""In a trial dir: where the agent's sandbox reached the host's forwarded ports from."""
MAX_METER_BYTES = 16 << 20


class SessionCompute(BaseModel):
    """One session's metered compute (or a trial's, summed over its sessions)."""

    model_config = ConfigDict(extra="forbid")

    forward_backward_calls: int = 0
    tokens_trained: int = Field(0, description="tokens in forward-backward batches (forward-only ones included)")
    optimizer_steps: int = 0
    sample_calls: int = 0
    tokens_sampled: int = Field(0, description="tokens generated, over every sample of every call")
    checkpoints_saved: int = 0


class MeterFile(BaseModel):
    """meter.json: per client address, per session id ("" for none), its compute."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    clients: dict[str, dict[str, SessionCompute]] = Field(default_factory=dict)

    def client_total(self, client: str) -> SessionCompute | None:
        """A client's compute summed over its sessions; None when it never computed."""
        sessions = self.clients.get(client)
        if not sessions:
            return None
        total = SessionCompute()
        for compute in sessions.values():
            for name in SessionCompute.model_fields:
                setattr(total, name, getattr(total, name) + getattr(compute, name))
        return total


class RelayRecord(BaseModel):
    """tinker_relay.json: the agent sandbox's source address on the host's loopback, and the ports relayed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    source: str
    ports: list[int]


def read_meter(path: Path) -> MeterFile | None:
    """A meter file, or None when there is none or it cannot be read."""
    try:
        return MeterFile.model_validate_json(read_untrusted(path, MAX_METER_BYTES))
    except (OSError, UnsafeFile, ValidationError):
        return None


def trial_compute(trial_dir: Path, meter: MeterFile | None) -> SessionCompute | None:
    """What a trial's agent computed on the job's local Tinker; None when the job served none or the trial never
    reached it (a trial that reached it and computed nothing has no entry either)."""
    if meter is None:
        return None
    try:
        relay = RelayRecord.model_validate_json(read_untrusted(trial_dir / RELAY_FILE, 1 << 16))
    except (OSError, UnsafeFile, ValidationError):
        return None
    return meter.client_total(relay.source)
