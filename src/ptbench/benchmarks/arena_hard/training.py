"""Allowed training data: the user's own sft.jsonl (no suitable dataset with a pinned revision is known)."""

from __future__ import annotations

from ptbench.benchmarks.training_data import own_data

SOURCE = own_data(
    "arena-hard-writing",
    "writing prompts and answers of your own; no Arena-Hard prompts, no distillation",
)
