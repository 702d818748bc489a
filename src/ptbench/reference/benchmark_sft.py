"""PostTrainBench benchmarks: SFT on the benchmark's allowed training data, in its evaluation's format.

The pairs come from `benchmark_data` (hub at a pinned revision, or `--data-dir`); each becomes the
verifier's prompt (forced chat template) and the answer followed by the end of the turn. Training
runs for the recipe's `max_steps` (capped examples, shuffled with the recipe's seed).
"""

from __future__ import annotations

import random
from pathlib import Path

from rich.console import Console

from ptbench.catalog.spec import TaskSpec
from ptbench.errors import UserError
from ptbench.reference.benchmark_data import Pair, training_source
from ptbench.reference.config import BenchmarkRecipe
from ptbench.reference.deadline import Deadline
from ptbench.reference.frogs_sft import Example
from ptbench.reference.progress import RichSteps, progress_bar, without_log_printing
from ptbench.reference.training import Policy, trl_args


def training_pairs(spec: TaskSpec, recipe: BenchmarkRecipe, data_dir: Path | None) -> list[Pair]:
    """The task's benchmark training pairs (shuffled, capped at `max_examples`); loaded before any model."""
    pairs = training_source(spec.benchmark).pairs(data_dir)
    if not pairs:
        raise UserError(f"{spec.benchmark}: the training data is empty")
    random.Random(recipe.seed).shuffle(pairs)
    return pairs if recipe.max_examples is None else pairs[: recipe.max_examples]


def run_benchmark_sft(spec: TaskSpec, recipe: BenchmarkRecipe, policy: Policy, pairs: list[Pair], work: Path,
                      console: Console, deadline: Deadline) -> int:
    """SFT the policy on the benchmark's training pairs (stopped early by the deadline); returns the number of
    examples."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    examples: list[Example] = [{"prompt": policy.prompt([{"role": "user", "content": prompt}]),
                                "completion": answer + policy.end_of_turn} for prompt, answer in pairs]
    sft = recipe.sft
    config = SFTConfig(**trl_args(
        recipe, work, learning_rate=sft.learning_rate, per_device_train_batch_size=sft.batch_size,
        gradient_accumulation_steps=sft.grad_accum, max_steps=sft.max_steps, max_length=sft.max_length,
        warmup_steps=sft.warmup_ratio, lr_scheduler_type="cosine",
    ))
    with progress_bar(console) as progress:
        trainer = SFTTrainer(model=policy.model, args=config, train_dataset=Dataset.from_list(examples),
                             processing_class=policy.tokenizer,
                             callbacks=[RichSteps(progress, f"SFT on {spec.benchmark} training data", sft.max_steps),
                                        deadline.callback()])
        without_log_printing(trainer).train()
    console.print(f"trained on {len(examples)} {spec.benchmark} examples")
    return len(examples)
