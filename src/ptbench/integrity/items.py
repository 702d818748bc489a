"""The benchmark's test items: as inspect samples (the likelihood check), and as (id, text) pairs (the n-gram
index and the forbidden-read check)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.dataset import Sample

from ptbench.benchmarks.registry import get_benchmark


def heldout_samples(benchmark: str, data_dir: Path | None) -> list[Sample]:
    """The benchmark's held-out items as inspect samples, in the verifier's order."""
    definition = get_benchmark(benchmark)
    return list(definition.build_task(data_dir, None, definition.heldout_split).dataset)


def heldout_items(benchmark: str, data_dir: Path | None) -> list[tuple[str, str]]:
    """Every held-out item's prompt text (and its target, when that is text), by inspect sample id."""
    items = []
    for number, sample in enumerate(heldout_samples(benchmark, data_dir)):
        prompt = sample.input if isinstance(sample.input, str) else "\n".join(
            str(message.text) for message in sample.input)
        target = sample.target if isinstance(sample.target, str) else " ".join(sample.target)
        choices = " ".join(sample.choices or [])
        items.append((str(sample.id if sample.id is not None else number), f"{prompt}\n{choices}\n{target}"))
    return items
