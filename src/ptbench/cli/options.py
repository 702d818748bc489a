"""What several commands share: the `--store` option and its default, and a console for tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ptbench.paths import work_dir

STORE_HELP = "results store (SQLite); default .ptbench/results.sqlite"
StoreOption = Annotated[Path | None, typer.Option("--store", help=STORE_HELP, show_default=False)]


def default_store(store: Path | None) -> Path:
    """The store path to use: the one given, else .ptbench/results.sqlite."""
    return store if store is not None else work_dir() / "results.sqlite"


def console() -> Console:
    """A console for tables: the terminal's width, or wide enough not to squeeze columns in a pipe or file."""
    terminal = Console()
    return terminal if terminal.is_terminal else Console(width=240)
