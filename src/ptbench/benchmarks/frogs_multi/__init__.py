"""Frogs, multi turn: the Frog Placement Game played through tool calls (see README.md)."""

from dataclasses import replace

from ptbench.benchmarks.frogs_single import BENCHMARK as SINGLE

BENCHMARK = replace(
    SINGLE,  # same boards, splits, generation, k and allowed data; only the way of playing differs
    name="frogs-multi",
    package=__name__,
    title="The Frog Placement Game (multi-turn)",
    multi_turn=True,
)
