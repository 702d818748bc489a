"""The submission's hand-off from the agent's environment to a separate verifier's, checked whole.

Harbor moves `final_model/` (or a Tinker task's path.txt) as an artifact: a copy to the host, then a copy into the
verifier's environment, through tar streams, SDK calls and, on clouds, size caps and timeouts. A model that lost a
shard on the way must not be scored as the agent's broken model (the base's score): it is the machine's failure, to
retry. So the task's `[[verifier.collect]]` hook (run in the agent's environment once the agent phase ended, before
collection) records every file of the submission with its size and SHA-256 into Harbor's artifacts convention dir,
which travels to the verifier with the rest; `ptbench verify --handoff RECORD` compares what arrived with it before
intake. A file missing, shorter, longer or different is a verifier error naming it. A record that is missing or
unreadable is one too (the hook failed, or the record was lost). What the record itself shows (the agent's own
truncated shard) is intake's to judge, as ever.

So nothing the agent can make may fail the hook or its record: what cannot be recorded (a name that is not UTF-8,
a path past the record's bound, a link, a FIFO, a file past the record's file or byte budget, one that cannot be
read) is listed as left out, never compared, and the verifier judges what arrived: the agent's failure, scored as
such. With `--stop-others` (or $PTBENCH_STOP_OTHERS, which `ptbench run` sets on the local environment, docker and
podman, and exported tasks pass through from the host) it first stops every process the agent left in its
environment's PID namespace, so that nothing rewrites the submission between its record and its collection
(leftovers.py: the environment's own processes are told by how the kernel made them, never by their start time).
Elsewhere (a cloud's own daemons in the container would be stopped too) a leftover writer is caught by the arrival
check, as a verifier error.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.files import NOFOLLOW_READ, write_model_json

RECORD_PATH = PurePosixPath("/logs/artifacts/ptbench-handoff.json")
"""Where the collect hook writes the record: Harbor's artifacts convention dir, which every environment hands over."""
MAX_FILES = 100_000
MAX_BYTES = 1 << 40
"""The bytes the hook hashes at most (1 TiB, about an hour of one core), inside its timeout; the rest is left out."""
MAX_PATH = 4096
MAX_NAME = 300
"""A left-out entry's name as listed: printable, cut to this many characters."""
_MAX_RECORD_BYTES = 32 << 20
_CHUNK = 8 << 20


class HandoffFile(BaseModel):
    """One regular file of the submission as the agent's environment had it."""

    path: str = Field(max_length=MAX_PATH, description="relative to the submission, '/'-separated")
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class HandoffRecord(BaseModel):
    """The submission as it left the agent's environment (RECORD_PATH)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    source: str = Field(max_length=4096)
    kind: Literal["dir", "file", "missing"]
    files: list[HandoffFile] = Field(default_factory=list, max_length=MAX_FILES)
    left_out: list[str] = Field(
        default_factory=list,
        max_length=100,
        description="entries not recorded (links, FIFOs, names the record cannot hold, past its budget), by name",
    )


def write_record(source: Path, target: Path) -> HandoffRecord:
    """The collect hook's step: `source`'s record, written whole at `target` (and returned)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    record = record_submission(source)
    write_model_json(target, record)
    return record


def record_submission(source: Path) -> HandoffRecord:
    """What `source` (a dir or a file) holds now, never following a link; what cannot be recorded is left out."""
    try:
        info = os.lstat(source)
    except FileNotFoundError:
        return HandoffRecord(source=_listed(str(source)), kind="missing")
    if stat.S_ISREG(info.st_mode) and (entry := _entry(source, source.name, MAX_BYTES)) is not None:
        return HandoffRecord(source=_listed(str(source)), kind="file", files=[entry])
    if not stat.S_ISDIR(info.st_mode):
        return HandoffRecord(source=_listed(str(source)), kind="missing", left_out=[_listed(source.name)])
    files: list[HandoffFile] = []
    left_out: list[str] = []
    budget = MAX_BYTES

    def leave_out(relative: str) -> None:
        if len(left_out) < 100:
            left_out.append(_listed(relative))

    def unreadable(error: OSError) -> None:
        leave_out(os.path.relpath(error.filename, source) if error.filename else "(a directory)")

    for root, dirs, names in os.walk(source, followlinks=False, onerror=unreadable):
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = Path(root) / name
            relative = path.relative_to(source).as_posix()
            entry = _entry(path, relative, budget) if len(files) < MAX_FILES else None
            if entry is None:
                leave_out(relative)
            else:
                files.append(entry)
                budget -= entry.size
    return HandoffRecord(source=_listed(str(source)), kind="dir", files=files, left_out=left_out)


def _listed(name: str) -> str:
    """A name as the record lists it: valid UTF-8, printable, bounded."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    text = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
    return text[:MAX_NAME]


def arrival_problems(submission: Path, record_file: Path) -> list[str]:
    """What of the recorded submission did not arrive at `submission` as it left; empty when all of it did."""
    record = read_record(record_file)
    if isinstance(record, str):
        return [record]
    if record.kind == "missing":
        return []  # nothing left the agent's environment: intake says there is no model
    if record.kind == "dir" and not submission.is_dir():
        return [f"{submission.name} is missing: {len(record.files)} files left the agent's environment"]
    root = submission if record.kind == "dir" else submission.parent
    problems: list[str] = []
    for entry in record.files:
        path = root / entry.path if record.kind == "dir" else submission
        name = entry.path
        try:
            info = os.lstat(path)
        except OSError:
            problems.append(f"{name} is missing")
            continue
        if not stat.S_ISREG(info.st_mode):
            problems.append(f"{name} arrived as something other than a file")
        elif info.st_size != entry.size:
            problems.append(f"{name} is {info.st_size} bytes, {entry.size} left the agent's environment")
        elif _sha256(path) != entry.sha256:
            problems.append(f"{name} differs from the file that left the agent's environment")
    return problems


def read_record(path: Path) -> HandoffRecord | str:
    """The record at `path`, or why it cannot be read (opened without following a link, capped)."""
    try:
        fd = os.open(path, NOFOLLOW_READ)
    except FileNotFoundError:
        return f"no hand-off record at {path}: the agent environment's collect step did not run or its record was lost"
    except OSError as exc:
        return f"the hand-off record {path} could not be opened ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_RECORD_BYTES:
            return f"the hand-off record {path} is not a regular file of at most {_MAX_RECORD_BYTES >> 20} MiB"
        data = os.read(fd, _MAX_RECORD_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return HandoffRecord.model_validate_json(data)
    except (ValidationError, ValueError):
        return f"the hand-off record {path} is not a valid record"


def _entry(path: Path, relative: str, budget: int) -> HandoffFile | None:
    """A regular file's record, or None when it cannot be recorded: not a regular file, a name that is not UTF-8
    or past MAX_PATH, more bytes than the budget left, or unreadable."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return None
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or len(relative) > MAX_PATH or info.st_size > budget:
            return None
        return HandoffFile(path=relative, size=info.st_size, sha256=_sha256(path))
    except OSError:
        return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, NOFOLLOW_READ)
    try:
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()
