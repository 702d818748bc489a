"""The benchmark registry, the single list: every benchmark folder's `BENCHMARK`, by `TaskSpec.benchmark` name.

The protocol (`BenchmarkDef`, `Generation`, `DatasetSource`) is in `definition.py`; each
benchmark is one folder beside this module (task.py, training.py, README.md). Importing the
registry imports only the folders' `__init__.py`, so it is cheap; task builders and training
sources are imported when used. The order here is the catalog's order.
"""

from __future__ import annotations

from ptbench.benchmarks import (
    aime2025,
    arena_hard,
    bfcl,
    frogs_multi,
    frogs_single,
    gpqa,
    gsm8k,
    healthbench,
    humaneval,
)
from ptbench.benchmarks.definition import DEV_SPLIT, HELDOUT_SPLIT, BenchmarkDef, DatasetSource, Generation
from ptbench.errors import UserError

__all__ = ["BENCHMARKS", "DEV_SPLIT", "HELDOUT_SPLIT", "BenchmarkDef", "DatasetSource", "Generation", "get_benchmark"]

BENCHMARKS: dict[str, BenchmarkDef] = {
    folder.BENCHMARK.name: folder.BENCHMARK
    for folder in (frogs_single, frogs_multi, aime2025, gsm8k, gpqa, humaneval, bfcl, arena_hard, healthbench)
}


def get_benchmark(name: str) -> BenchmarkDef:
    """The definition for `name`; an unknown name is a UserError listing the known ones."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}") from None
