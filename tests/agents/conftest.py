"""Fixtures of the agent tests: the Codex CLI, installed (or found) by `ptbench agents install`."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def codex_cli(cli) -> str:
    """The pinned Codex CLI in ptbench's prefix (scripts/setup-venv installs it; found in the cache then)."""
    result = cli("agents", "install", "codex")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
