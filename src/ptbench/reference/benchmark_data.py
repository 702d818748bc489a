"""What the benchmark recipes train on: per benchmark, a source of allowed training data and its format.

Each source names a hub dataset at a pinned revision (the revisions inspect_evals pins) or none,
the local file names that `--data-dir` may hold instead (in the dataset's own schema), the
records to leave out, and how a record becomes a (user prompt, answer) pair in the format the
benchmark's evaluation asks for. What each source is, and why it is allowed:

- gsm8k: GSM8K's train split minus its last 200 items (the dev slice the evaluate helper uses).
- aime2025: the MATH train split (competition maths; no AIME 2025 problem; AIME 2024 is dev).
- gpqa: ARC-Challenge's train split (science multiple choice; no GPQA question).
- humaneval: MBPP's train split (Python functions; no HumanEval problem).
- bfcl, arena-hard-writing, healthbench: no suitable dataset with a pinned revision is known
  here, so these need `--data-dir` with `sft.jsonl`: `SftRecord` lines written by the user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ptbench.benchmarks.data import Record, hub_records, local_file, read_items
from ptbench.errors import UserError, first_line

Pair = tuple[str, str]
"""(user prompt, assistant answer)."""


class SftRecord(BaseModel):
    """One line of a user-supplied `sft.jsonl`: a prompt and the answer to train on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    prompt: str = Field(min_length=1)
    completion: str = Field(min_length=1)


@dataclass(frozen=True)
class TrainingSource:
    """Where a benchmark's training data comes from and how a record becomes a training pair."""

    benchmark: str
    description: str
    local_files: tuple[str, ...]
    to_pair: Callable[[Record], Pair]
    hub_path: str | None = None
    hub_name: str | None = None
    split: str = "train"
    revision: str | None = None
    keep: Callable[[list[Record]], list[Record]] = field(default=lambda records: records)

    def pairs(self, data_dir: Path | None) -> list[Pair]:
        """The training pairs, from `data_dir` when given, else from the hub at the pinned revision."""
        if data_dir is not None:
            records = read_items(local_file(data_dir, *self.local_files))
        elif self.hub_path is None:
            raise UserError(f"{self.benchmark}: no pinned hub source for its training data; pass --data-dir "
                            f"with {self.local_files[0]} ({self.description})")
        else:
            records = hub_records(self.hub_path, self.split, self.revision, name=self.hub_name)
        out = []
        for index, record in enumerate(self.keep(records)):
            try:
                out.append(self.to_pair(record))
            except (KeyError, TypeError, ValueError, IndexError, ValidationError) as exc:
                raise UserError(f"{self.benchmark} training record {index} does not fit the schema "
                                f"({type(exc).__name__}: {first_line(exc)})") from exc
        return out


def _gsm8k_pair(record: Record) -> Pair:
    from inspect_evals.gsm8k.gsm8k import MATH_PROMPT_TEMPLATE, record_to_sample

    sample = record_to_sample(record)
    return (MATH_PROMPT_TEMPLATE.format(prompt=sample.input),
            f"{sample.metadata['reasoning']}\n\nANSWER: {sample.target}")


def _gsm8k_keep(records: list[Record]) -> list[Record]:
    from ptbench.benchmarks.gsm8k import DEV_SIZE

    return records[: max(len(records) - DEV_SIZE, 0)]


def _math_pair(record: Record) -> Pair:
    from inspect_evals.math.utils import record_to_sample
    from inspect_evals.utils.aime_common import USER_PROMPT_TEMPLATE

    sample = record_to_sample(record)
    return USER_PROMPT_TEMPLATE.format(prompt=sample.input), f"{record['solution']}\n\nANSWER: {sample.target}"


def _arc_pair(record: Record) -> Pair:
    from inspect_ai.solver._multiple_choice import SINGLE_ANSWER_TEMPLATE_COT

    choices = record["choices"]
    labels, texts = list(choices["label"]), list(choices["text"])
    letters = [chr(ord("A") + i) for i in range(len(texts))]
    options = "\n".join(f"{letter}) {text}" for letter, text in zip(letters, texts, strict=True))
    prompt = SINGLE_ANSWER_TEMPLATE_COT.format(question=record["question"], choices=options, letters=",".join(letters))
    return prompt, f"ANSWER: {letters[labels.index(record['answerKey'])]}"


def _mbpp_pair(record: Record) -> Pair:
    from inspect_evals.humaneval.humaneval import INSTRUCTION

    tests = "\n".join(record["test_list"])
    return f'{INSTRUCTION}"""{record["text"]}\n{tests}\n"""\n', f"```python\n{record['code']}\n```"


def _own_pair(record: Record) -> Pair:
    parsed = SftRecord.model_validate(record)
    return parsed.prompt, parsed.completion


def _own(benchmark: str, what: str) -> TrainingSource:
    return TrainingSource(benchmark=benchmark, description=what, local_files=("sft.jsonl",), to_pair=_own_pair)


def _sources() -> dict[str, TrainingSource]:
    from inspect_evals.arc.arc import ARC_DATASET_REVISION
    from inspect_evals.arc.arc import DATASET_PATH as ARC_PATH
    from inspect_evals.gsm8k.gsm8k import DATASET_PATH as GSM8K_PATH
    from inspect_evals.math.math import DATASET_PATH as MATH_PATH
    from inspect_evals.math.math import MATH_DATASET_REVISION
    from inspect_evals.mbpp.mbpp import DATASET_PATH as MBPP_PATH
    from inspect_evals.mbpp.mbpp import MBPP_DATASET_REVISION

    from ptbench.benchmarks.registry import get_benchmark

    return {s.benchmark: s for s in [
        TrainingSource("gsm8k", "GSM8K train minus its last 200 items (the dev slice)",
                       ("train.jsonl", "gsm8k_train.jsonl"), _gsm8k_pair, GSM8K_PATH, "main",
                       revision=get_benchmark("gsm8k").dataset.revision, keep=_gsm8k_keep),
        TrainingSource("aime2025", "MATH train (competition maths, no AIME 2025)", ("math_train.jsonl",),
                       _math_pair, MATH_PATH, "default", revision=MATH_DATASET_REVISION),
        TrainingSource("gpqa", "ARC-Challenge train (science multiple choice, no GPQA)",
                       ("arc_challenge_train.jsonl",), _arc_pair, ARC_PATH, "ARC-Challenge",
                       revision=ARC_DATASET_REVISION),
        TrainingSource("humaneval", "MBPP train (Python functions, no HumanEval)", ("mbpp_train.jsonl",),
                       _mbpp_pair, MBPP_PATH, "full", revision=MBPP_DATASET_REVISION),
        _own("bfcl", "function-calling examples of your own; never BFCL's hub 'train' split (it is the eval data)"),
        _own("arena-hard-writing", "writing prompts and answers of your own; no Arena-Hard prompts, no distillation"),
        _own("healthbench", "health conversations and answers of your own; no HealthBench conversations"),
    ]}


def training_source(benchmark: str) -> TrainingSource:
    """The training data source of a PostTrainBench benchmark."""
    sources = _sources()
    if benchmark not in sources:
        raise UserError(f"no benchmark training data source for {benchmark!r}")
    return sources[benchmark]
