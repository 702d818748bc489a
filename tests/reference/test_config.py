"""Recipe configurations: chosen by the task, round-tripped through JSON, bad input refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.tasks import get_task
from ptbench.errors import UserError
from ptbench.reference.config import (
    TINY_BENCHMARK,
    TINY_FROGS,
    TINY_FROGS_MULTI,
    TINY_FROGS_TINKER,
    BenchmarkRecipe,
    FrogsRecipe,
    GrpoSettings,
    capped,
    dump_recipe,
    load_recipe,
    recipe_for,
)


def test_tiny_tasks_get_the_cpu_recipes() -> None:
    assert recipe_for(get_task("frogs-single-tiny")) is TINY_FROGS
    assert recipe_for(get_task("frogs-multi-tiny")) is TINY_FROGS_MULTI
    assert recipe_for(get_task("gsm8k-tiny")) is TINY_BENCHMARK
    assert TINY_FROGS.device == "cpu" and TINY_FROGS.lora is None
    assert [stage.n for stage in TINY_FROGS.curriculum] == [4, 5]  # small boards first
    assert [stage.steps for stage in TINY_FROGS_TINKER.curriculum] == [25, 10]  # RL through Tinker


def test_real_models_get_gpu_recipes_with_lora() -> None:
    recipe = recipe_for(get_task("gsm8k-qwen3-1.7b"))
    assert isinstance(recipe, BenchmarkRecipe)
    assert recipe.device == "cuda" and recipe.dtype == "bfloat16" and recipe.lora is not None
    smaller_lr = recipe_for(get_task("gsm8k-qwen3-4b")).sft.learning_rate
    assert smaller_lr < recipe.sft.learning_rate  # bigger model, gentler steps


def test_a_gpu_frogs_spec_gets_a_curriculum_over_its_tiers() -> None:
    spec = TaskSpec(
        name="frogs-gpu",
        benchmark="frogs-single",
        base_model="qwen3-8b",
        budget_hours=8,
        device="gpu",
        gpus=1,
        tiers=("easy", "medium"),
    )
    recipe = recipe_for(spec)
    assert isinstance(recipe, FrogsRecipe) and recipe.grpo.use_vllm
    assert [stage.n for stage in recipe.curriculum] == [6, 7, 8, 9]


def test_tinker_tasks_get_a_lora_recipe_over_their_tiers() -> None:
    recipe = recipe_for(get_task("frogs-multi-qwen3-8b"))  # trained through the Tinker API: LoRA on the service
    assert isinstance(recipe, FrogsRecipe) and recipe.mode == "multi" and recipe.lora is not None
    assert [stage.n for stage in recipe.curriculum] == list(range(6, 14))


def test_json_round_trip_and_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "recipe.json"
    dump_recipe(TINY_FROGS, path)
    assert load_recipe(path) == TINY_FROGS
    data = json.loads(path.read_text())
    data["grpo"]["num_generations"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="num_generations"):
        load_recipe(path)
    with pytest.raises(UserError, match="not found"):
        load_recipe(tmp_path / "missing.json")


def test_a_near_miss_can_never_earn_as_much_as_a_solve() -> None:
    with pytest.raises(ValueError, match="below 1"):
        GrpoSettings(
            learning_rate=1e-4,
            prompts_per_step=1,
            num_generations=2,
            max_completion_length=8,
            format_reward=0.3,
            constraint_reward=0.7,
        )


def test_cli_shows_the_config_and_reports_bad_input(cli, tmp_path: Path) -> None:
    spec = tmp_path / "task.json"
    get_task("frogs-single-tiny").dump(spec)
    shown = cli("reference", str(spec), "--show-config")
    assert shown.returncode == 0, shown.stderr
    assert FrogsRecipe.model_validate_json(shown.stdout) == TINY_FROGS
    missing = cli("reference", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "task spec not found" in missing.stderr
    by_name = cli("reference", "frogs-single-tiny", "--show-config")  # a catalog name works as well as a file
    assert by_name.returncode == 0 and FrogsRecipe.model_validate_json(by_name.stdout) == TINY_FROGS
    unknown = cli("reference", "frogs-single-tinny")
    assert unknown.returncode == 2 and "did you mean frogs-single-tiny" in unknown.stderr
    (tmp_path / "bad.json").write_text('{"kind": "frogs"}')
    bad = cli("reference", str(spec), "--config", str(tmp_path / "bad.json"), "--show-config")
    assert bad.returncode == 2 and "invalid recipe config" in bad.stderr and "Traceback" not in bad.stderr


STEP_CAP_TASKS = ["frogs-single-tiny", "frogs-multi-tiny", "gsm8k-tiny", "frogs-single-qwen3-8b", "gsm8k-qwen3-1.7b"]


@pytest.mark.parametrize("task", STEP_CAP_TASKS)
def test_a_step_cap_cuts_every_stage_and_keeps_the_rest(task: str) -> None:
    recipe = recipe_for(get_task(task))
    cut = capped(recipe, 2)
    assert cut.sft.max_steps == min(recipe.sft.max_steps, 2) and cut.sft.eval_every <= cut.sft.max_steps
    if isinstance(recipe, FrogsRecipe):
        assert isinstance(cut, FrogsRecipe)
        assert [stage.steps for stage in cut.curriculum] == [min(stage.steps, 2) for stage in recipe.curriculum]
        assert [stage.n for stage in cut.curriculum] == [stage.n for stage in recipe.curriculum]
    stages = len(recipe.curriculum) if isinstance(recipe, FrogsRecipe) else 0
    moved: dict[str, Any] = {"sft": {"max_steps", "eval_every"}, "curriculum": {i: {"steps"} for i in range(stages)}}
    assert cut.model_dump(exclude=moved) == recipe.model_dump(exclude=moved)  # nothing else moves
    assert capped(recipe, 10**6) == recipe  # a cap above the recipe's own steps changes nothing


def test_the_cli_caps_steps_by_option_or_variable(cli) -> None:
    by_option = cli("reference", "frogs-single-tiny", "--max-steps", "3", "--show-config")
    assert by_option.returncode == 0, by_option.stderr
    assert FrogsRecipe.model_validate_json(by_option.stdout) == capped(TINY_FROGS, 3)
    by_variable = cli("reference", "gsm8k-tiny", "--show-config", env={"PTBENCH_REFERENCE_MAX_STEPS": "4"})
    assert by_variable.returncode == 0, by_variable.stderr
    assert BenchmarkRecipe.model_validate_json(by_variable.stdout) == capped(TINY_BENCHMARK, 4)
    bad = cli("reference", "gsm8k-tiny", "--show-config", env={"PTBENCH_REFERENCE_MAX_STEPS": "0"})
    assert bad.returncode == 2 and "PTBENCH_REFERENCE_MAX_STEPS" in bad.stderr and "Traceback" not in bad.stderr


def test_a_cuda_recipe_without_a_gpu_is_one_line(cli, tmp_path: Path) -> None:
    """Issue 29: `ptbench reference` with a cuda config on a machine without a GPU ended in a raw RuntimeError."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    recipe = tmp_path / "cuda.json"
    dump_recipe(TINY_BENCHMARK.model_copy(update={"device": "cuda", "dtype": "bfloat16"}), recipe)
    out = tmp_path / "out"
    result = cli(
        "reference",
        "gsm8k-tiny",
        "--out",
        str(out),
        "--config",
        str(recipe),
        env={"PTBENCH_WORKDIR": str(tmp_path / "work")},
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "'cuda' asks for a GPU, but torch sees none" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
