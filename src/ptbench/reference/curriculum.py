"""The board-size curriculum: GRPO stage by stage from small boards to large, evaluated after each.

A stage trains on training boards of one size (the recipe's `curriculum`, e.g. N=4 then N=5 for
the tiny task, N=6 up to 13 for the real one), one prompt per board use (cycled, augmented as the
recipe says); after every stage the dev boards of all sizes are evaluated and a few raw outputs
printed, so a stage that breaks the format shows at once.
"""

from __future__ import annotations

from collections.abc import Callable

from ptbench.frogs import Board, BoardRecord
from ptbench.reference.config import Stage
from ptbench.reference.dev_scores import DevEval
from ptbench.reference.frogs_data import training_stream

StageTrainer = Callable[[Stage, list[Board]], None]


def stage_boards(stage: Stage, train: dict[int, list[BoardRecord]], prompts_needed: int, seed: int,
                 augmented: bool) -> list[Board]:
    """The boards one stage trains on: its size's training boards, cycled to `prompts_needed`."""
    pool = train.get(stage.n)
    if not pool:
        raise ValueError(f"no training boards of size {stage.n} for the curriculum")
    return [board for board, _ in training_stream(pool, max(prompts_needed, 1), seed, augmented)]


def run_curriculum(stages: tuple[Stage, ...], train: dict[int, list[BoardRecord]], prompts_per_step: int,
                   seed: int, augmented: bool, train_stage: StageTrainer,
                   evaluate: Callable[[str, int], DevEval]) -> list[DevEval]:
    """Train every stage in order, evaluating after each (with the GRPO steps done so far)."""
    history = []
    steps_done = 0
    for index, stage in enumerate(stages):
        train_stage(stage, stage_boards(stage, train, stage.steps * prompts_per_step, seed + index, augmented))
        steps_done += stage.steps
        history.append(evaluate(f"GRPO N={stage.n}", steps_done))
    return history
