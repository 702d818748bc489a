"""The egress record: one JSON line per connection attempt (time, phase, destination as asked and as addressed,
protocol, allowed or refused, bytes each way, duration), written host-side beside Harbor's trial files where the
agent cannot write, capped in size; a writer that knows it missed attempts says so in an `incomplete` line. The
reader treats the file as hostile: no symlinks, a size cap before loading, and a line that does not parse (like a
truncated or incomplete mark) makes the record partial, never silently shorter."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.files import parse_json

FILE_NAME = "egress.jsonl"
MAX_RECORD_BYTES = 8 * 1024 * 1024
"""The writer stops at this size (with one `truncated` line); the reader refuses a larger file."""


class EgressEvent(BaseModel):
    """One connection attempt (or, with `kind="truncated"`, the mark that the record stopped at its cap; with
    `kind="incomplete"`, that it may miss attempts, `reason` saying why)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1, 2, 3] = 3
    """2 added `purpose`; 3 the `incomplete` kind."""
    kind: Literal["connection", "truncated", "incomplete"] = "connection"
    time: float
    phase: str = Field(max_length=40)
    protocol: str = Field(max_length=16)
    """tcp, tls, http, connect, dns or udp."""
    asked: str | None = Field(default=None, max_length=253)
    """The host name the connection asked for (SNI, Host, CONNECT target, DNS question); None when it named none."""
    address: str = Field(default="", max_length=64)
    port: int = Field(default=0, ge=0, le=65535)
    path: str | None = Field(default=None, max_length=2048)
    """An HTTP request's path, where the request was in clear text."""
    allowed: bool = False
    reason: str = Field(default="", max_length=300)
    bytes_out: int = Field(default=0, ge=0)
    bytes_in: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0)
    purpose: Literal["agent-api"] | None = None
    """agent-api: the host is one the run added for the agent CLI's own model API (Harbor's `--allow-agent-hosts`,
    the trial's `agent.extra_allowed_hosts`), tagged by the host-side proxy; the forbidden-network check exempts it."""


class EgressWriter:
    """Appends events to the record, thread-safe, until MAX_RECORD_BYTES (then one truncated line, then nothing)."""

    def __init__(self, path: Path, limit: int | None = None) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o640)
        self._limit = MAX_RECORD_BYTES if limit is None else limit
        self._size, self._full = os.fstat(self._fd).st_size, False
        self._lock = threading.Lock()

    def write(self, event: EgressEvent) -> None:
        line = (event.model_dump_json() + "\n").encode()
        with self._lock:
            if self._full:
                return
            if self._size + len(line) > self._limit:
                self._full = True
                line = (EgressEvent(kind="truncated", time=event.time, phase=event.phase, protocol="-",
                                    reason="the record reached its size cap").model_dump_json() + "\n").encode()
            os.write(self._fd, line)
            self._size += len(line)

    def close(self) -> None:
        os.close(self._fd)


@dataclass
class EgressRecord:
    """A record as read: its events and why it is partial (truncated, incomplete, lines that did not parse), if it
    is."""

    events: list[EgressEvent] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)


class RecordUnreadable(Exception):
    """The record is missing, not a regular file, or over the cap: nothing in it can be trusted as complete."""


def read_record(path: Path, limit: int = MAX_RECORD_BYTES) -> EgressRecord:
    """The events of a record (RecordUnreadable when it cannot be read as one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise RecordUnreadable(f"{path.name}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RecordUnreadable(f"{path.name} is not a regular file")
        if info.st_size > limit + 4096:
            raise RecordUnreadable(f"{path.name} is {info.st_size} bytes, over the cap of {limit}")
        data = handle.read(limit + 4097)
    record = EgressRecord()
    for number, line in enumerate(data.splitlines(), 1):
        try:
            event = EgressEvent.model_validate(parse_json(line))
        except (ValueError, ValidationError):
            record.partial.append(f"line {number} is not an egress event")
            continue
        if event.kind == "truncated":
            record.partial.append(f"the record stopped at its cap (line {number})")
        elif event.kind == "incomplete":
            record.partial.append(f"{event.reason} (line {number})")
        else:
            record.events.append(event)
    return record


def find_record(roots: list[Path]) -> Path | None:
    """The record handed to the verifier with the logs: FILE_NAME at the top of one of them (even a symlink there,
    which reading then refuses: an agent cannot hide the record by replacing it)."""
    return next((root / FILE_NAME for root in roots if os.path.lexists(root / FILE_NAME)), None)


def describe(event: EgressEvent) -> str:
    """One line for evidence and `runs show`."""
    verdict = "allowed" if event.allowed else "refused"
    where = f"{event.asked or event.address}:{event.port}" + (event.path or "")
    purpose = f" [{event.purpose}]" if event.purpose else ""
    return (f"{event.phase} {event.protocol} {where} ({event.address}) {verdict}{purpose}, "
            f"{event.bytes_out}B out {event.bytes_in}B in, {event.seconds:.2f}s")
