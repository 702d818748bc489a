"""What a task spec adds to a benchmark's Task: frogs boards, rules, tiers and k; the item cap of other benchmarks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ptbench.catalog.spec import TaskSpec
from ptbench.errors import UserError

HELDOUT_FILE = "heldout.jsonl"
"""The frogs held-out boards, exported into the task's tests/ beside the spec (verifier only)."""


def task_options(
    spec: TaskSpec, spec_path: Path, heldout: Path | None, split: str, heldout_split: str
) -> dict[str, Any]:
    """Keyword options for the benchmark's build_task; for the held-out split of frogs, the board file."""
    if not spec.is_frogs:
        return {}
    opts: dict[str, Any] = {"rules": spec.rules, "tiers": spec.tiers, "k": spec.samples_per_item}
    if split == heldout_split:
        path = heldout or spec_path.parent / HELDOUT_FILE
        if not path.is_file():
            raise UserError(f"held-out boards not found: {path} (pass --heldout)")
        opts["heldout"] = path
    else:
        opts["seed"] = spec.seed
    return opts


def item_limit(spec: TaskSpec, limit: int | None) -> int | None:
    """The items to score: --limit, capped by the spec's heldout_count (the item cap of non-frogs tasks)."""
    if limit is not None and limit <= 0:
        raise UserError(f"--limit must be positive, got {limit}")
    if spec.is_frogs:
        return limit  # the held-out file holds exactly the spec's boards
    return min(limit, spec.heldout_count) if limit is not None else spec.heldout_count
