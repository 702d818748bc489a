"""The Wilson score interval of a rate, the one formula every layer uses (scoring's intervals, the integrity checks'
bound on a self-reported score): sensible at 0, at 1 and for small n, and defined for a fractional rate (a mean of
[0, 1] scores over n samples) as well as for successes over trials."""

from __future__ import annotations

import math
from statistics import NormalDist


def z_of(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_bounds(rate: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval (low, high) of `rate` over `n` samples, clipped to [0, 1]; n must be positive."""
    if n <= 0:
        raise ValueError(f"a Wilson interval needs n > 0, got {n}")
    z = z_of(confidence)
    denominator = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)
