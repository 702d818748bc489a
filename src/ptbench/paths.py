"""Where ptbench keeps things: a per-user cache (built models) and a per-project work dir (jobs, store)."""

from __future__ import annotations

import os
from pathlib import Path

from ptbench.settings import settings


def cache_dir() -> Path:
    """Per-user cache for things that are expensive to build and deterministic (the tiny model); $PTBENCH_CACHE."""
    root = settings().cache or os.path.join(os.path.expanduser("~"), ".cache", "ptbench")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def work_dir() -> Path:
    """Per-project working directory: Harbor jobs, the results store, exported tasks; $PTBENCH_WORKDIR."""
    path = Path(settings().workdir or ".ptbench")
    path.mkdir(parents=True, exist_ok=True)
    return path
