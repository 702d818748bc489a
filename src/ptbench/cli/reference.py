"""`ptbench reference`: run a task's reference post-training recipe (what the task's solve.sh runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ptbench.catalog.spec import TaskSpec
from ptbench.catalog.submission import submission_path
from ptbench.catalog.tasks import get_task
from ptbench.paths import work_dir
from ptbench.settings import settings


def register(app: typer.Typer) -> None:
    """Add `reference` to the main app."""
    app.command(name="reference")(reference)


def reference(
    task: Annotated[
        str, typer.Argument(help="a catalog task name, or a task spec JSON (an exported task's task.json)")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="where to save the post-trained model (default: "
            "the task's submission, /app/final_model or /app/path.txt, for a "
            "task.json; .ptbench/reference/NAME/... for a catalog name)",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="recipe JSON instead of the task's default (default $PTBENCH_REFERENCE_CONFIG)"),
    ] = None,
    base_model: Annotated[
        Path | None,
        typer.Option(
            "--base-model",
            help="a local copy of the task's base model (default: the registry's; tiny: built or cached)",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="benchmarks: local training data instead of the hub (a benchmark's folder or a data directory; "
            "default $PTBENCH_DATA_DIR)",
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="where to write reference_report.json (default: beside --out)")
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            "--max-steps",
            min=1,
            help="at most N SFT steps and N GRPO steps a stage: a smoke run of the whole path "
            "(default $PTBENCH_REFERENCE_MAX_STEPS; unset: the recipe's own)",
        ),
    ] = None,
    show_config: Annotated[bool, typer.Option("--show-config", help="print the recipe JSON and exit")] = False,
    force: Annotated[bool, typer.Option("--force", help="replace a non-empty --out")] = False,
) -> None:
    """Post-train the task's base model with its reference recipe and save it where the task says.

    Frogs: SFT until outputs parse and some boards are solved, then GRPO with the verifier as reward,
    small boards to large.

    Benchmarks: SFT on the benchmark's allowed training data (hub or --data-dir).

    Tinker tasks: the frogs recipe through the Tinker API (TINKER_BASE_URL, TINKER_API_KEY); --out gets the
    checkpoint's tinker:// path.

    The configuration (CPU for the tiny model, GPU for real ones) follows from the task.
    """
    from ptbench.reference.config import (  # startup: not needed by `ptbench --help`
        capped,
        load_recipe,
        recipe_for,
    )

    from_file = task.endswith(".json") or "/" in task
    spec = TaskSpec.load(Path(task)) if from_file else get_task(task)
    if out is None:
        submission = submission_path(spec)
        out = Path(str(submission)) if from_file else work_dir() / "reference" / spec.name / submission.name
    config = config or settings().reference_config
    data_dir = data_dir or settings().data_dir
    recipe = load_recipe(config) if config is not None else recipe_for(spec)
    max_steps = max_steps or settings().reference_max_steps
    if max_steps is not None:
        recipe = capped(recipe, max_steps)
    if show_config:
        print(recipe.model_dump_json(indent=2))
        return
    from ptbench.models.device import require_device  # startup: not needed by `ptbench --help`

    # before the recipe's libraries load (torch, transformers, inspect_ai: about 12 CPU s on 2 cores) or any data is
    # built: a cuda recipe on a machine without a GPU, or a Tinker task with no API to train through, is one line
    require_device(recipe.device)
    if spec.backend == "tinker":
        from ptbench.models.backends.tinker_sampler import checked_service_url

        checked_service_url()
    from ptbench.reference.run import run_reference  # heavy: transformers (1.0 s CPU)

    run_reference(spec, out, recipe=recipe, base_dir=base_model, data_dir=data_dir, report_path=report, force=force)
