"""Allowed training data: the user's own sft.jsonl (no suitable dataset with a pinned revision is known)."""

from __future__ import annotations

from ptbench.benchmarks.training_data import own_data

SOURCE = own_data(
    "bfcl",
    "function-calling examples of your own; never BFCL's hub 'train' split (it is the eval data)",
)
