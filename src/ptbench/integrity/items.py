"""The benchmark's test items as (id, text) pairs: what the n-gram index and the forbidden-read check know."""

from __future__ import annotations

from pathlib import Path

from ptbench.benchmarks.registry import get_benchmark


def heldout_items(benchmark: str, data_dir: Path | None) -> list[tuple[str, str]]:
    """Every held-out item's prompt text (and its target, when that is text), by inspect sample id."""
    definition = get_benchmark(benchmark)
    task = definition.build_task(data_dir, None, definition.heldout_split)
    items = []
    for number, sample in enumerate(task.dataset):
        prompt = sample.input if isinstance(sample.input, str) else "\n".join(
            str(message.text) for message in sample.input)
        target = sample.target if isinstance(sample.target, str) else " ".join(sample.target)
        choices = " ".join(sample.choices or [])
        items.append((str(sample.id if sample.id is not None else number), f"{prompt}\n{choices}\n{target}"))
    return items
