"""Matched controls for the likelihood check: each held-out item as text, and a perturbed copy of it that no rule lets
an agent train on (nobody has seen it), deterministic by seed.

- multiple choice: the options in the canonical order (the test item) and in another order (the canonical order
  itself carries a signal: a model trained on the item prefers it);
- otherwise numbers are replaced consistently by others of the same length (GSM8K, AIME), and the functions and
  arguments a Python text defines are renamed consistently (HumanEval).
An item that no perturbation changes has no control and is left out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from inspect_ai.dataset import Sample

from ptbench.integrity.items import prompt_text, target_text

_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.]\d)")
_DEFINED = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*\(([^)]*)\)")
_PARAMETER = re.compile(r"^\s*\**([A-Za-z_]\w*)")
_KEEP = {"self", "cls", "args", "kwargs"}


def item_text(sample: Sample, order: list[int] | None = None) -> str:
    """The item as one text: its prompt, its options (in `order`, default the canonical one) and its answer."""
    choices = list(sample.choices or [])
    if not choices:
        return f"{prompt_text(sample)}\n{target_text(sample)}"
    shown = [choices[i] for i in (order or range(len(choices)))]
    letters = "ABCDEFGHIJ"
    return "\n".join([prompt_text(sample), *(f"{letters[k]}) {choice}" for k, choice in enumerate(shown))])


def control_text(sample: Sample, seed: int) -> str | None:
    """The item's perturbed copy, or None when nothing in it can be perturbed."""
    rng = random.Random(seed)
    choices = list(sample.choices or [])
    if len(choices) >= 2:
        order = list(range(len(choices)))
        while order == sorted(order):
            rng.shuffle(order)
        return item_text(sample, order)
    text = item_text(sample)
    changed = _rename_definitions(_renumber(text, rng), rng)
    return changed if changed != text else None


def _renumber(text: str, rng: random.Random) -> str:
    """Every distinct integer replaced by another of the same number of digits, the same one everywhere."""
    mapping: dict[str, str] = {}

    def other(number: str) -> str:
        if len(number) == 1:
            return str(rng.choice([d for d in range(10) if str(d) != number]))
        low = 10 ** (len(number) - 1)
        while (new := str(rng.randrange(low, 10 * low))) == number:
            pass
        return new

    return _NUMBER.sub(lambda m: mapping.setdefault(m.group(), other(m.group())), text)


def _rename_definitions(text: str, rng: random.Random) -> str:
    """Functions defined in the text and their parameters renamed, everywhere in the text."""
    names: list[str] = []
    for match in _DEFINED.finditer(text):
        names.append(match.group(1))
        for parameter in match.group(2).split(","):
            found = _PARAMETER.match(parameter)
            if found and found.group(1) not in _KEEP:
                names.append(found.group(1))
    if not names:
        return text
    fresh = _fresh_names(rng, set(re.findall(r"\w+", text)))
    mapping = {name: fresh() for name in dict.fromkeys(names)}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group()], text)


def _fresh_names(rng: random.Random, taken: set[str]) -> Callable[[], str]:
    syllables = ["ka", "lo", "mi", "ren", "tus", "vo", "zel", "qua", "dri", "fen"]

    def fresh() -> str:
        while (name := "_".join(rng.choice(syllables) + rng.choice(syllables) for _ in range(2))) in taken:
            pass
        taken.add(name)
        return name

    return fresh
