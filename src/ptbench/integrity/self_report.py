"""results.json as the score it claims, in whatever readable form the agent wrote it.

The documented form (`catalog.submission.SelfReport`: `{"score": 0.42, ...}`) is one of many: any score-like key
(score, accuracy, pass@1, win_rate, ...) at any depth of nested objects and lists, as a number or a string, a
percentage ("90%", "90 percent", or 90 on a metric that lives in [0, 1]) or a fraction ("148/164", or solved and
total counts side by side) scaled to [0, 1]. Keys about something else (train, baseline, loss, counts, bounds),
and everything under them, are not claims. A file with no readable claim is "unreadable", with why.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

MAX_DEPTH = 16
MAX_CLAIMS = 200
_SCORE_KEY = re.compile(r"score|acc|pass|win|exact|match|\bem\b|f1|success|result|perform|value|"
                        r"estimate|metric|humaneval|gsm8k|bfcl|gpqa|aime|arena|health|frogs|"
                        r"^(?:mean|average|avg|overall|final|rate)$", re.IGNORECASE)
_NOT_A_CLAIM = re.compile(r"train|base|loss|\blr\b|learning|step|epoch|time|second|count|board|sample|\bn_|num|size|"
                          r"seed|std|err|\bci\b|lower|upper|token|version|budget|items", re.IGNORECASE)
"""A key about something else; a claim under such a key (`{"train": {"accuracy": 0.95}}`) is no claim either."""
_NUMBER = re.compile(r"\s*(-?(?:\d+(?:[.,]\d+)?|[.,]\d+))\s*(%|percent|/\s*(\d+(?:\.\d+)?))?\s*",
                     re.IGNORECASE)
_SOLVED = re.compile(r"^(?:n_|num_)?(?:correct|solved|passed|right)$", re.IGNORECASE)
_OUT_OF = re.compile(r"^(?:n|total|count|attempted|(?:n_|num_|total_)?(?:problems|questions|items|samples|tasks))$",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """One claimed score: where in the file, as written, and as a fraction in [0, 1]."""

    where: str
    written: str
    value: float


def claims(data: bytes) -> list[Claim] | str:
    """Every score the file claims, or why none can be read ("not JSON: ...", "no score-like key")."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        return f"not JSON: {str(exc).splitlines()[0][:120]}"
    found: list[Claim] = []
    _walk(document, "results", "", found, 0)
    return found or "no score-like key with a number in [0, 1] or a percentage"


def _walk(value: object, where: str, key: str, found: list[Claim], depth: int) -> None:
    if depth > MAX_DEPTH or len(found) >= MAX_CLAIMS:
        return
    if isinstance(value, dict):
        solved = _solved(value)
        if solved is not None:
            found.append(Claim(where, solved[0], solved[1]))
        for name, item in value.items():
            if not _NOT_A_CLAIM.search(str(name)) and not (solved and _SOLVED.match(str(name))):
                _walk(item, f"{where}.{name}", str(name), found, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{where}[{index}]", key, found, depth + 1)
    elif _SCORE_KEY.search(key) and not _NOT_A_CLAIM.search(key):
        fraction = _fraction(value)
        if fraction is not None:
            found.append(Claim(where, json.dumps(value)[:40], fraction))


def _solved(value: dict) -> tuple[str, float] | None:
    """A count of items solved out of a total (`{"correct": 148, "total": 164}`) as written and as a fraction."""
    counts = [(str(k), v) for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    right = next((v for k, v in counts if _SOLVED.match(k)), None)
    out_of = next((v for k, v in sorted(counts, key=lambda kv: kv[0].lower() != "total") if _OUT_OF.match(k)), None)
    if right is None or not out_of or right > out_of:
        return None
    return f"{right}/{out_of}", right / out_of


def _fraction(value: object) -> float | None:
    """A claimed number as a fraction: 0.9, "0.9", "0,9", "90%", "90 percent", "148/164", 90 (a percentage, since
    every metric is in [0, 1])."""
    if isinstance(value, bool):
        return None
    percent = False
    if isinstance(value, str):
        match = _NUMBER.fullmatch(value)
        if match is None:
            return None
        number, percent = float(match.group(1).replace(",", ".")), (match.group(2) or "")[:1] in ("%", "p", "P")
        if match.group(3) is not None:
            whole = float(match.group(3))
            return number / whole if 0 < whole and 0 <= number <= whole else None
    elif isinstance(value, (int, float)):
        number = float(value)
    else:
        return None
    if not math.isfinite(number) or number < 0 or number > 100:
        return None
    return number / 100 if percent or number > 1 else number
