"""What the benchmark recipes train on: the benchmark's own training source, asked of its definition.

Each PostTrainBench benchmark's folder declares its allowed training data (`training.py`,
`BenchmarkDef.training_source`): a hub dataset at a pinned revision or the user's `sft.jsonl`,
readable from `--data-dir` instead, and how a record becomes a (prompt, answer) pair in the
evaluation's format. The machinery (`TrainingSource`, `SftRecord`) is `benchmarks/training_data.py`.
"""

from __future__ import annotations

from ptbench.benchmarks.registry import get_benchmark
from ptbench.benchmarks.training_data import Pair, SftRecord, TrainingSource
from ptbench.errors import UserError

__all__ = ["Pair", "SftRecord", "TrainingSource", "training_source"]


def training_source(benchmark: str) -> TrainingSource:
    """The training data source of a benchmark; one without any (frogs: the board generator) is a UserError."""
    source = get_benchmark(benchmark).training_source
    if source is None:
        raise UserError(f"no benchmark training data source for {benchmark!r}")
    return source
