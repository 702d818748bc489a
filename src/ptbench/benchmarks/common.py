"""What every benchmark Task shares: the item cap, the imposed generation settings, provenance metadata."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig

from ptbench.benchmarks.definition import Generation
from ptbench.benchmarks.registry import get_benchmark
from ptbench.errors import UserError


def make_task(
    benchmark: str,
    split: str,
    samples: Sequence[Sample],
    limit: int | None,
    generation: Generation,
    origin: str,
    **task_args: Any,
) -> Task:
    """A Task over the first `limit` samples with the benchmark's generation settings and provenance."""
    if not samples:
        raise UserError(f"{benchmark} {split}: no items in {origin}")
    chosen = list(samples[:limit] if limit else samples)
    definition = get_benchmark(benchmark)
    return Task(
        dataset=MemoryDataset(chosen, name=f"{benchmark}-{split}", location=origin),
        config=GenerateConfig(max_tokens=generation.max_tokens, temperature=generation.temperature),
        epochs=generation.epochs,
        name=benchmark,
        metadata={
            "benchmark": benchmark,
            "split": split,
            "items": len(chosen),
            "origin": origin,
            "revision": definition.dataset.revision,
            "main_metric": definition.main_metric,
        },
        **task_args,
    )
