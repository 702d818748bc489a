"""Fixtures for the reference recipe tests: the real tiny model, loaded as a trainable policy (one thread), and
CPU-bound processes that load the machine as other work on a shared one does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def cpu_hogs(count: int, nice: int = 0) -> Iterator[None]:
    """`count` CPU-bound processes running for the block's length, at niceness `nice` (19: they take only the CPU
    that the other processes leave, and still keep every core busy)."""
    code = f"import os\nos.nice({nice})\nwhile True: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.fixture(scope="session")
def tiny_policy():
    """The tiny base model as a Policy (built on first use; PTBENCH_CACHE chooses the cache)."""
    from ptbench.models.registry import TINY
    from ptbench.reference.config import TINY_FROGS
    from ptbench.reference.training import load_policy

    return load_policy(TINY, TINY_FROGS.model_copy(update={"threads": 1}))
