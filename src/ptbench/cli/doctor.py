"""`ptbench doctor --env NAME`: one table of what a Harbor cloud environment needs on this machine (its SDK,
credentials by name, never their values, tools, an image registry) and what of it is missing here."""

from __future__ import annotations

from typing import Annotated

import typer

from ptbench.errors import UserError


def doctor(
    env: Annotated[str, typer.Option("--env", help="a cloud environment docs/RUNNING.md names: modal, daytona, ...")],
) -> None:
    """What ENV needs here and what is missing (exit code 1 when something is)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ptbench.run.cloud import CLOUD_ENVIRONMENTS, cloud_environment, needs

    chosen = cloud_environment(env)
    if chosen is None:
        raise UserError(f"no cloud environment {env!r}: use one of {', '.join(CLOUD_ENVIRONMENTS)}")
    rows = needs(chosen)
    gpus = "runs the GPU tasks" if chosen.gpus else "CPU tasks only: Harbor's class allocates no GPU"
    table = Table(title=f"what the {env} environment needs ({gpus})")
    for column in ("kind", "what", "here", "to fix"):
        table.add_column(column)
    for row in rows:
        here = "n/a" if row.present is None else "yes" if row.present else "missing"
        table.add_row(*(Text(cell) for cell in (row.kind, row.what, here, "" if row.present else row.fix)))
    Console(width=160).print(table, highlight=False)
    if any(row.present is False for row in rows):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
