"""The server's meter: what each client (one trial: `app.client_of`) computed, per session: tokens trained
(forward-backward), tokens sampled, optimizer steps, checkpoints saved. Counted when a call's work has succeeded
and kept in `meter.json` beside the checkpoints (outside every sandbox), rewritten at most once a second and when
the server stops, so a job's ingest can put each trial's compute beside its score."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ptbench.files import write_model_json
from ptbench.tinker_meter import MeterFile, SessionCompute, read_meter

MIN_WRITE_SECONDS = 1.0


class Meter:
    """The counters, thread-safe, going on from the file's counts when it exists (a resumed job's server)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = read_meter(path) or MeterFile()
        self._lock = threading.Lock()
        self._written = 0.0

    def add(self, client: str, session: str | None, **counts: int) -> None:
        """Add `counts` (SessionCompute's fields) to the client's session; write the file if a second has passed."""
        with self._lock:
            compute = self.file.clients.setdefault(client, {}).setdefault(session or "", SessionCompute())
            for name, count in counts.items():
                setattr(compute, name, getattr(compute, name) + count)
            due = time.monotonic() - self._written >= MIN_WRITE_SECONDS
        if due:
            self.write()

    def write(self) -> None:
        """Write meter.json now (atomically)."""
        with self._lock:
            snapshot = self.file.model_copy(deep=True)
            self._written = time.monotonic()
        write_model_json(self.path, snapshot)
