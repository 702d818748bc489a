"""PostTrainBench's published figures and its benchmark weights w_i = 1/(instruct_i - base_i), normalised.

The published weights use the base models' zero-shot scores (the per-benchmark figures below give them back to
the fourth decimal); each figure is the mean over PostTrainBench's four base models, as a fraction in [0, 1].
Measured weights come from `ptbench baseline` records (instruct and zero-shot) when every aggregated benchmark has
both; otherwise the published weights are used for all of them, and the result says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PublishedFigures(BaseModel):
    """One benchmark's published reference scores (means over the four base models) and its published weight."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instruct: float
    few_shot: float
    zero_shot: float
    weight: float = Field(description="the published normalised weight")


PUBLISHED: dict[str, PublishedFigures] = {
    "aime2025": PublishedFigures(instruct=0.292, few_shot=0.051, zero_shot=0.017, weight=0.2265),
    "arena-hard-writing": PublishedFigures(instruct=0.702, few_shot=0.072, zero_shot=0.013, weight=0.0904),
    "bfcl": PublishedFigures(instruct=0.850, few_shot=0.017, zero_shot=0.015, weight=0.0746),
    "gpqa": PublishedFigures(instruct=0.362, few_shot=0.226, zero_shot=0.085, weight=0.2246),
    "gsm8k": PublishedFigures(instruct=0.870, few_shot=0.450, zero_shot=0.204, weight=0.0936),
    "healthbench": PublishedFigures(instruct=0.433, few_shot=0.191, zero_shot=0.095, weight=0.1841),
    "humaneval": PublishedFigures(instruct=0.715, few_shot=0.315, zero_shot=0.128, weight=0.1061),
}
"""PostTrainBench (2026): per benchmark instruct / base few-shot / base zero-shot, and the normalised weights."""

PUBLISHED_SOURCE = "PostTrainBench (2026), results table of the paper"


class PublishedAverage(BaseModel):
    """A published weighted average over PostTrainBench's seven benchmarks and four base models, as a fraction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    average: float
    std: float | None = Field(None, description="the standard deviation over its runs, where published")
    source: str = PUBLISHED_SOURCE


PUBLISHED_AVERAGES: tuple[PublishedAverage, ...] = (
    PublishedAverage(label="Claude Code, Claude Opus 4.6 (best agent)", average=0.232, std=0.018),
    PublishedAverage(label="instruct models (official)", average=0.511),
    PublishedAverage(label="base models, few-shot", average=0.181),
    PublishedAverage(label="base models, zero-shot", average=0.075),
)
"""The published averages (three runs per frontier agent; the baselines' from PUBLISHED's figures). Only the best
agent's average is in the table ptbench carries; its per-benchmark figures are not."""

WeightSource = Literal["measured", "published"]


class Weights(BaseModel):
    """The normalised weights an aggregate used, and where they came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: WeightSource
    weights: dict[str, float] = Field(description="benchmark -> normalised weight (sums to 1)")
    note: str | None = Field(None, description="why the published weights were used")


def normalise(raw: Mapping[str, float]) -> dict[str, float]:
    """Weights scaled to sum to 1 (an empty mapping stays empty)."""
    total = sum(raw.values())
    return {name: value / total for name, value in raw.items()}


def inverse_gap_weights(gaps: Mapping[str, float]) -> dict[str, float]:
    """w_i = 1 / (instruct_i - base_i), normalised; every gap must be positive."""
    bad = sorted(name for name, gap in gaps.items() if not gap > 0)
    if bad:
        raise ValueError(f"instruct does not beat base on {', '.join(bad)}: no weight")
    return normalise({name: 1.0 / gap for name, gap in gaps.items()})


def choose_weights(benchmarks: Iterable[str], measured_gaps: Mapping[str, float]) -> Weights:
    """Measured weights when every benchmark has a positive measured gap, else the published ones (renormalised
    over `benchmarks`)."""
    names = sorted(set(benchmarks))
    note: str | None = None
    missing = [name for name in names if name not in measured_gaps]
    if names and not missing:
        try:
            return Weights(source="measured", weights=inverse_gap_weights({n: measured_gaps[n] for n in names}))
        except ValueError as exc:
            note = f"measured baselines unusable: {exc}"
    elif missing:
        note = f"no measured instruct and zero-shot baselines for {', '.join(missing)}"
    else:
        note = "no PostTrainBench benchmark to weight"
    return Weights(source="published", weights=normalise({n: PUBLISHED[n].weight for n in names}), note=note)
