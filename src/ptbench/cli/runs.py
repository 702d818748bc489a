"""`ptbench runs`: ingest Harbor job dirs into the results store, list trials, show one trial."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from ptbench.paths import work_dir

if TYPE_CHECKING:
    from ptbench.store.models import PhaseRow, TrialRow

STORE_HELP = "results store (SQLite); default .ptbench/results.sqlite"
StoreOption = Annotated[Path | None, typer.Option("--store", help=STORE_HELP, show_default=False)]

runs_app = typer.Typer(help="The results store: ingest jobs, list and show trials.", no_args_is_help=True)


def default_store(store: Path | None) -> Path:
    """The store path to use: the one given, else .ptbench/results.sqlite."""
    return store if store is not None else work_dir() / "results.sqlite"


@runs_app.command("ingest")
def ingest_command(
    job_dir: Annotated[Path, typer.Argument(help="a Harbor job directory")],
    store: StoreOption = None,
) -> None:
    """Add a Harbor job's trials to the store (again: nothing added; vanished trials removed)."""
    from ptbench.store.ingest import ingest

    path = default_store(store)
    record, stats = ingest(job_dir, path)
    print(
        f"ingested {record.job.name}: {len(record.trials)} trials "
        f"({stats.added} added, {stats.updated} updated, {stats.removed} removed, {stats.unchanged} unchanged) "
        f"into {path}"
    )


@runs_app.command("list")
def list_command(
    job: Annotated[str | None, typer.Option("--job", help="only this job (name or id)")] = None,
    store: StoreOption = None,
) -> None:
    """List stored trials as a table."""
    from rich.table import Table

    from ptbench.store.queries import list_trials
    from ptbench.store.schema import open_store

    conn = open_store(default_store(store), create=False)
    try:
        summaries = list_trials(conn, job)
    finally:
        conn.close()
    table = Table("job", "trial", "task", "agent", "seed", "status", "reward", "seconds", "why")
    for s in summaries:
        t = s.trial
        reward = f"{s.reward:.3f}" if s.reward is not None else None
        why = t.exception_type or t.reason  # the full reason is in `runs show`
        row = (s.job_name, t.trial_name, t.task_name, t.agent, t.seed, t.status, reward, _seconds(t), why)
        table.add_row(*map(_cell, row))
    _console().print(table)
    print(f"{len(summaries)} trials")


@runs_app.command("show")
def show_command(
    trial: Annotated[str, typer.Argument(help="trial name, trial id or a unique id prefix")],
    store: StoreOption = None,
) -> None:
    """Show everything stored about one trial."""
    from rich.table import Table

    from ptbench.store.queries import get_trial
    from ptbench.store.schema import open_store

    conn = open_store(default_store(store), create=False)
    try:
        detail = get_trial(conn, trial)
    finally:
        conn.close()
    console = _console()
    fields = Table("field", "value", show_header=False, box=None)
    fields.add_row("job", _cell(f"{detail.job.name} ({detail.job.job_id}) on {detail.job.environment or '?'}"))
    for name, value in detail.record.trial.model_dump(exclude={"job_id"}).items():
        fields.add_row(name, _cell(value))
    console.print(fields)
    if detail.record.metrics:
        metrics = Table("source", "metric", "value")
        for m in detail.record.metrics:
            metrics.add_row(m.source, _cell(m.name), f"{m.value:g}")
        console.print(metrics)
    if detail.record.phases:
        phases = Table("phase", "started", "finished", "seconds")
        for p in detail.record.phases:
            phases.add_row(*map(_cell, (p.phase, p.started_at, p.finished_at, _seconds(p))))
        console.print(phases)


def _seconds(span: TrialRow | PhaseRow) -> str | None:
    """How long a trial or phase took, when both ends are known."""
    if span.started_at is None or span.finished_at is None:
        return None
    return f"{(span.finished_at - span.started_at).total_seconds():.1f}"


def _cell(value: object) -> Text:
    """A table cell shown literally (stored text comes from untrusted files: never rich markup)."""
    if isinstance(value, datetime):
        return Text(value.isoformat(timespec="seconds"))
    return Text("-" if value is None else str(value))


def _console() -> Console:
    """A console for tables: the terminal's width, or wide enough not to squeeze columns in a pipe or file."""
    console = Console()
    return console if console.is_terminal else Console(width=240)


def register(app: typer.Typer) -> None:
    """Add the `runs` command group."""
    app.add_typer(runs_app, name="runs")
