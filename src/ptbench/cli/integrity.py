"""`ptbench integrity selftest`: the integrity checks against a suite of cheats and honest runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

integrity_app = typer.Typer(help="Integrity checks: the cheat suite.", no_args_is_help=True)


@integrity_app.command("selftest")
def selftest_command(
    json_out: Annotated[bool, typer.Option("--json", help="print the SelftestReport as JSON")] = False,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help="a benchmark data folder with GSM8K's test split (adds the GSM8K cheat)")] = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="honest runs")] = 3,
) -> None:
    """Run every check on every cheat and honest run; print cheat, flagged by, evidence."""
    from rich.console import Console
    from rich.table import Table

    from ptbench.errors import UserError
    from ptbench.integrity.selftest import run_selftest

    if data_dir is not None and not data_dir.is_dir():
        raise UserError(f"--data-dir is not a directory: {data_dir}")
    report = run_selftest(data_dir, seeds)
    if json_out:
        print(report.model_dump_json(indent=2))
        return
    table = Table("case", "kind", "flagged by", "evidence", title=f"caught {report.caught}/{report.cheats} cheats, "
                  f"{report.false_flags}/{report.honest} honest runs flagged", title_justify="left")
    for row in report.rows:
        table.add_row(row.case, row.kind, ", ".join(row.flagged_by) or "-", row.evidence[:90])
    Console(width=200).print(table)
    if report.caught < report.cheats or report.false_flags:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `integrity` to the main app."""
    app.add_typer(integrity_app, name="integrity")
