"""`ptbench score`: the store's trials as scores, PostTrainBench's aggregate and the baselines beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ptbench.cli.options import StoreOption, console, default_store
from ptbench.errors import UserError


def score_command(
    store: StoreOption = None,
    job: Annotated[str | None, typer.Option("--job", help="only this job (name or id)")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="only this agent (as `runs list` names it)")] = None,
    task: Annotated[str | None, typer.Option("--task", help="only this task")] = None,
    benchmark: Annotated[str | None, typer.Option("--benchmark", help="only this benchmark, e.g. gsm8k")] = None,
    base_model: Annotated[str | None, typer.Option("--base-model", help="only this base model, e.g. tiny")] = None,
    baselines: Annotated[Path | None, typer.Option(
        "--baselines", help="stored `ptbench baseline` records (default: baselines/ beside the store)",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON (versioned)")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="print the result as one CSV table")] = False,
) -> None:
    """Scores per trial, per agent/benchmark/base model over seeds, PostTrainBench's weighted aggregate, baselines."""
    from ptbench.scoring.output import render, to_csv, to_json
    from ptbench.scoring.score_report import ScoreFilters
    from ptbench.scoring.scores import score_store

    if as_json and as_csv:
        raise UserError("choose one of --json and --csv")
    path = default_store(store)
    report = score_store(path, baselines if baselines is not None else path.parent / "baselines",
                         ScoreFilters(job=job, agent=agent, task=task, benchmark=benchmark, base_model=base_model))
    if as_json:
        print(to_json(report), end="")
    elif as_csv:
        print(to_csv(report), end="")
    else:
        console().print(render(report))


def register(app: typer.Typer) -> None:
    """Add `score` to the main app."""
    app.command("score")(score_command)
