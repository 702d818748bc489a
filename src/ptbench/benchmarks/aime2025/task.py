"""AIME 2025 (30 problems, 16k tokens): inspect_evals' record_to_sample, solver and scorer.

AIME 2025 has no items beyond its 30 test problems, so the dev split is AIME 2024 (same
contest, same answer format, disjoint problems), loaded with inspect_evals' aime2024 schema.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task
from inspect_evals.aime2024.aime2024 import AIME2024_DATASET_REVISION
from inspect_evals.aime2024.aime2024 import DATASET_PATH as AIME2024_PATH
from inspect_evals.aime2024.aime2024 import record_to_sample as aime2024_record_to_sample
from inspect_evals.aime2025.aime2025 import AIME2025_DATASET_REVISION
from inspect_evals.aime2025.aime2025 import DATASET_PATH as AIME2025_PATH
from inspect_evals.aime2025.aime2025 import record_to_sample as aime2025_record_to_sample
from inspect_evals.utils.aime_common import aime_scorer, aime_solver

from ptbench.benchmarks.common import make_task
from ptbench.benchmarks.data import hub_records, local_file, read_items, to_samples
from ptbench.benchmarks.definition import Generation

DEV_SOURCE = (AIME2024_PATH, "train", AIME2024_DATASET_REVISION)
TEST_SOURCE = (AIME2025_PATH, "test", AIME2025_DATASET_REVISION)


def build_task(data_dir: Path | None, limit: int | None, split: str, generation: Generation) -> Task:
    """The AIME Task: AIME 2025 for "test", AIME 2024 for "dev"."""
    if split == "test":
        local_name, (path, hub_split, revision), convert = "aime2025.jsonl", TEST_SOURCE, aime2025_record_to_sample
    else:
        local_name, (path, hub_split, revision), convert = "aime2024.jsonl", DEV_SOURCE, aime2024_record_to_sample
    if data_dir is not None:
        origin = str(local_file(data_dir, local_name))
        records = read_items(Path(origin))
    else:
        origin = f"hf:{path}@{revision}/{hub_split}"
        records = hub_records(path, hub_split, revision)
    samples = to_samples(records, convert, origin)
    return make_task("aime2025", split, samples, limit, generation, origin, solver=aime_solver(), scorer=aime_scorer())
