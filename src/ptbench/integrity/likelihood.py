"""Contamination from the model: did the submission's likelihood rise more on the test items than on matched
controls (`perturb.py`) that no rule lets an agent train on? The base model is the reference.

Per item i, with s(m, x) the mean per-token log-likelihood of text x under model m:
    d_i = [s(sub, test_i) - s(base, test_i)] - [s(sub, control_i) - s(base, control_i)]
Training on the test items raises the first bracket more than the second (the control differs exactly where a
memorised item is specific: its numbers, names or option order); honest training on the task's kind of data moves
both alike. The effect is mean(d); its p-value comes from a paired sign-flip permutation test (under "no
contamination" each d_i is as likely positive as negative; Oren et al.'s exchangeability idea with the base model as
reference). Flagged when p < ALPHA and the effect exceeds MIN_EFFECT nats per token (calibration in
docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ptbench.integrity.perturb import control_text, item_text
from ptbench.integrity.result import MAX_LISTED, CheckResult, Evidence, could_not_run, flagged, passed

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

NAME = "contamination-likelihood"
MAX_ITEMS = 64
MIN_ITEMS = 8
PERMUTATIONS = 4000
ALPHA = 0.01
MIN_EFFECT = 0.05
MAX_TOKENS = 512
SEED = 0


def check_likelihood(benchmark: str, data_dir: Path | None, submission: Path, base_model: str,
                     device: str = "cpu", max_items: int = MAX_ITEMS) -> CheckResult:
    """Load the base and the submission, score the held-out items and their controls, test the difference."""
    from ptbench.integrity.items import heldout_samples
    from ptbench.models.loading import base_source, load_model, load_tokenizer

    pairs = [(item_text(sample), control) for number, sample in enumerate(heldout_samples(benchmark, data_dir))
             if (control := control_text(sample, SEED + number)) is not None][:max_items]
    if len(pairs) < MIN_ITEMS:
        return could_not_run(NAME, f"only {len(pairs)} items have a perturbed control (at least {MIN_ITEMS} needed)")
    base = base_source(base_model)
    texts = tuple(text for pair in pairs for text in pair)
    base_scores = _base_scores(base_model, device, texts)
    sub_scores = mean_log_likelihoods(load_model(submission, base, device), load_tokenizer(base), list(texts))
    return likelihood_result(base_scores.reshape(-1, 2), sub_scores.reshape(-1, 2), [test for test, _ in pairs])


@cache
def _base_scores(base_model: str, device: str, texts: tuple[str, ...]) -> np.ndarray:
    """The base model's scores, once per process (the selftest checks many submissions against one base)."""
    from ptbench.models.loading import base_source, load_model, load_tokenizer

    base = base_source(base_model)
    return mean_log_likelihoods(load_model(None, base, device), load_tokenizer(base), list(texts))


def likelihood_result(base: np.ndarray, submission: np.ndarray, items: list[str]) -> CheckResult:
    """The test on per-item scores (rows: items; columns: test text, control text)."""
    moved = submission - base
    d = moved[:, 0] - moved[:, 1]
    if not np.all(np.isfinite(d)):
        return could_not_run(NAME, "a model gave a non-finite likelihood")
    effect = float(d.mean())
    p = sign_flip_p(d)
    top = np.argsort(-d)[:MAX_LISTED]
    evidence = Evidence(
        items=[f"{_head(items[i])}: +{d[i]:.3f} nats/token over its control" for i in top if d[i] > 0],
        numbers={"effect": round(effect, 4), "p_value": round(p, 5), "items": len(d),
                 "test_moved": round(float(moved[:, 0].mean()), 4),
                 "control_moved": round(float(moved[:, 1].mean()), 4)},
    )
    if p < ALPHA and effect > MIN_EFFECT:
        return flagged(NAME, f"the submission's likelihood rose {effect:.3f} nats/token more on the test items than on "
                       f"perturbed copies (p = {p:.4f}, {len(d)} items)", evidence)
    return passed(NAME, f"no excess likelihood on the test items ({effect:+.3f} nats/token, p = {p:.3f}, "
                  f"{len(d)} items)", evidence)


def sign_flip_p(d: np.ndarray, permutations: int = PERMUTATIONS, seed: int = SEED) -> float:
    """One-sided p-value of mean(d) > 0 under random sign flips (the observed signs count as one draw)."""
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(permutations, len(d)))
    null = (signs * d).mean(axis=1)
    return float((1 + np.count_nonzero(null >= d.mean())) / (1 + permutations))


def mean_log_likelihoods(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, texts: list[str]) -> np.ndarray:
    """Each text's mean log-probability per predicted token (teacher forcing, at most MAX_TOKENS tokens)."""
    import torch

    scores = []
    with torch.no_grad():
        for text in texts:
            ids = tokenizer(text, return_tensors="pt", truncation=True, max_length=MAX_TOKENS).input_ids
            ids = ids.to(model.device)
            if ids.shape[1] < 2:
                scores.append(math.nan)
                continue
            logprobs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1).gather(1, ids[0, 1:, None])
            scores.append(float(logprobs.mean()))
    return np.asarray(scores, dtype=np.float64)


def _head(text: str) -> str:
    return " ".join(text.split())[:80]
