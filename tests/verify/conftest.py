"""Verify test helpers: the tiny model, task specs from the catalog, scripted judges, quiet in-process runs."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ptbench.catalog.tasks import get_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "benchmarks"


def write_spec(directory: Path, name: str, **changes: Any) -> Path:
    """The catalog task `name` (with `changes`) as directory/task.json."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "task.json"
    get_task(name).model_copy(update=changes).dump(path)
    return path


def scripted_judge(path: Path, rules: list[dict[str, Any]], default: str) -> str:
    """A scripted judge's rules file at `path`; returns its inspect model name."""
    path.write_text(json.dumps({"schema_version": 1, "rules": rules, "default": default}))
    return f"scripted/{path}"


def quiet() -> Console:
    """A console whose output is kept, not printed."""
    return Console(file=io.StringIO(), width=120)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ptbench work dir and inspect cache for this test."""
    monkeypatch.setenv("PTBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    return tmp_path / "work"
