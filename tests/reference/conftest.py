"""Fixtures for the reference recipe tests: the real tiny model, loaded as a trainable policy (one thread)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_policy():
    """The tiny base model as a Policy (built on first use; PTBENCH_CACHE chooses the cache)."""
    from ptbench.models.registry import TINY
    from ptbench.reference.config import TINY_FROGS
    from ptbench.reference.training import load_policy

    return load_policy(TINY, TINY_FROGS.model_copy(update={"threads": 1}))
